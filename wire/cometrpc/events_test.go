package cometrpc

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func completeEvent(id, nonce, raw string) ABCIEvent {
	attr := func(k, v string) EventAttribute { return EventAttribute{Key: k, Value: v, Index: true} }
	return ABCIEvent{Type: oracle.EventComplete, Attributes: []EventAttribute{
		attr("request_id", id), attr("nonce", nonce), attr("raw_data", raw),
		attr("block_height", "57"), attr("block_time", "1893456057"), attr("mode", "BeginBlock"),
	}}
}

// The daemon's side: the spec's frame decodes, routes to the Complete
// subscription and yields both entries.
func TestDecodeSpecNewBlockFrame(t *testing.T) {
	raw, err := os.ReadFile("testdata/newblock_frame.json")
	require.NoError(t, err)
	resp, err := DecodeResponse(raw)
	require.NoError(t, err)
	id, ok := resp.ID.Int()
	require.True(t, ok)
	require.Equal(t, int64(3), id)

	ev, err := DecodeEvent(resp.Result)
	require.NoError(t, err)
	require.Equal(t, oracle.SubComplete.Query(), ev.Query)
	nb, err := ev.Data.NewBlock()
	require.NoError(t, err)
	require.Equal(t, "guru_631-1", nb.Block.Header.ChainID)
	require.Equal(t, Int64(57), nb.Block.Header.Height)
	require.Equal(t, time.Date(2030, 1, 1, 0, 0, 57, 0, time.UTC), nb.Block.Header.Time)

	require.Equal(t, []string{"2", "5"}, ev.Events[oracle.KeyCompleteID])
	require.Equal(t, []string{"14", "3"}, ev.Events[oracle.KeyCompleteNonce])
	require.Equal(t, []string{"1893456057", "1893456057"}, ev.Events[oracle.KeyCompleteBlockTime])
}

// The façade's side: building the same frame gives the same JSON value.
func TestBuildSpecNewBlockFrame(t *testing.T) {
	abci := []ABCIEvent{completeEvent("2", "14", "101.5"), completeEvent("5", "3", "0.27")}
	data, err := NewBlockData("guru_631-1", 57, time.Date(2030, 1, 1, 0, 0, 57, 0, time.UTC), nil)
	require.NoError(t, err)
	frame, err := NewEventFrame(IntID(3), oracle.QueryComplete, data, EventsMap(TMEventNewBlock, abci, nil))
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/newblock_frame.json")
	require.NoError(t, err)
	require.JSONEq(t, string(want), marshal(t, frame))

	q, err := ParseQuery(oracle.QueryComplete)
	require.NoError(t, err)
	require.True(t, q.Matches(EventsMap(TMEventNewBlock, abci, nil)))
	require.False(t, q.Matches(EventsMap(TMEventNewBlock, nil, nil)), "a NewBlock without Complete matches no subscription")
}

func TestTxFrameRoundTrip(t *testing.T) {
	tx := []byte{0x0a, 0x01, 0x02}
	msg := ABCIEvent{Type: oracle.EventMessage, Attributes: []EventAttribute{
		{Key: "action", Value: oracle.TypeURLRegister, Index: true}, {Key: "sender", Value: "guru1mod", Index: true}, {Key: "module", Value: "oracle", Index: true},
	}}
	reg := ABCIEvent{Type: oracle.EventRegister, Attributes: []EventAttribute{{Key: "request_id", Value: "4", Index: true}}}
	reg2 := ABCIEvent{Type: oracle.EventRegister, Attributes: []EventAttribute{{Key: "request_id", Value: "5", Index: true}}}
	result := ExecTxResult{Code: 0, Events: []ABCIEvent{msg, reg, msg, reg2}}
	data, err := TxData(57, 0, tx, result)
	require.NoError(t, err)
	events := TxEventsMap("ABCD", 57, result.Events)
	require.Equal(t, []string{"4", "5"}, events[oracle.KeyRegisterID], "values line up in emission order")
	require.Equal(t, []string{"Tx"}, events["tm.event"])
	require.Equal(t, []string{"ABCD"}, events["tx.hash"])
	require.Equal(t, []string{"57"}, events["tx.height"])

	frame, err := NewEventFrame(IntID(0), oracle.QueryRegister, data, events)
	require.NoError(t, err)
	wire := marshal(t, frame)
	require.Contains(t, wire, `"id":0,`)
	require.Contains(t, wire, `"type":"tendermint/event/Tx","value":{"TxResult":{"height":"57","index":0,"tx":"`+base64.StdEncoding.EncodeToString(tx)+`","result":{"code":0,"events":[`)

	resp, err := DecodeResponse([]byte(wire))
	require.NoError(t, err)
	ev, err := DecodeEvent(resp.Result)
	require.NoError(t, err)
	require.Equal(t, oracle.SubRegister.Query(), ev.Query)
	require.Equal(t, []string{"4", "5"}, ev.Events[oracle.KeyRegisterID])
	txd, err := ev.Data.Tx()
	require.NoError(t, err)
	require.Equal(t, tx, txd.TxResult.Tx)
	require.Equal(t, result, txd.TxResult.Result)
	_, err = ev.Data.NewBlock()
	require.Error(t, err, "a Tx value is not a NewBlock")

	q, err := ParseQuery(oracle.QueryRegister)
	require.NoError(t, err)
	require.True(t, q.Matches(events))
	q, err = ParseQuery(oracle.QueryUpdate)
	require.NoError(t, err)
	require.False(t, q.Matches(events))
}

func TestDecodeEventRejects(t *testing.T) {
	for name, result := range map[string]string{
		"unregistered type":   `{"query":"q","data":{"type":"tendermint/event/Foo","value":{}},"events":{}}`,
		"undecodable value":   `{"query":"q","data":{"type":"tendermint/event/NewBlock","value":{"block":{"header":{"height":"x"}}}},"events":{}}`,
		"Tx value not object": `{"query":"q","data":{"type":"tendermint/event/Tx","value":[1]},"events":{}}`,
		"not JSON":            `{"query":`,
		"events not a map":    `{"query":"q","data":{"type":"tendermint/event/Tx","value":{}},"events":[1]}`,
	} {
		_, err := DecodeEvent(json.RawMessage(result))
		require.Error(t, err, name)
	}
	// A frame without events decodes, with no events map (the watcher
	// drops it).
	ev, err := DecodeEvent(json.RawMessage(`{"query":"q","data":{"type":"tendermint/event/Tx","value":{}}}`))
	require.NoError(t, err)
	require.Nil(t, ev.Events)
}
