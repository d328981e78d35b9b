package conform_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	oracleconform "github.com/wsconverge/converge/sim/oracle/conform"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/tx"
)

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	return m
}

// The façade speaks §6 to a plain client, and records each exchange.
func TestFacadeSpeaksTheWireAndRecordsIt(t *testing.T) {
	self := keys.PrivKeyFromSeed("facade-test-sut").PubKey().Address()
	p := chain.DefaultParams()
	p.BlockInterval = 200 * time.Millisecond
	w, err := oracleconform.NewWorld(p, self, 1, nil)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Register(oracleconform.Request{ID: 1, Period: 5 * time.Second, SelfIndex: 0, Endpoints: 1,
		Status: oracle.StatusEnabled}))
	url := w.Facade.URL()

	// Integer id 0 is echoed; status reports the chain id.
	m := post(t, url, `{"jsonrpc":"2.0","id":0,"method":"status","params":{}}`)
	require.Equal(t, float64(0), m["id"])
	require.Equal(t, p.ChainID, m["result"].(map[string]any)["node_info"].(map[string]any)["network"])
	// Unknown method.
	m = post(t, url, `{"jsonrpc":"2.0","id":1,"method":"genesis","params":{}}`)
	require.Equal(t, float64(-32601), m["error"].(map[string]any)["code"])
	// An unknown path is code 6; the account query answers the funded account.
	m = post(t, url, `{"jsonrpc":"2.0","id":2,"method":"abci_query","params":{"path":"/x.Y/Z","data":"","height":"0","prove":false}}`)
	require.Equal(t, float64(6), m["result"].(map[string]any)["response"].(map[string]any)["code"])
	data, err := abciquery.AccountRequest(self)
	require.NoError(t, err)
	m = post(t, url, `{"jsonrpc":"2.0","id":3,"method":"abci_query","params":{"path":"`+abciquery.PathAccount+`","data":"`+
		hex.EncodeToString(data)+`","height":"0","prove":false}}`)
	require.Equal(t, float64(0), m["result"].(map[string]any)["response"].(map[string]any)["code"])

	// WebSocket: subscribe with id 0, a second identical subscribe is
	// refused, and a NewBlock frame arrives with the subscribe's id.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/websocket", nil)
	require.NoError(t, err)
	q := "tm.event='NewBlock'"
	sub := `{"jsonrpc":"2.0","id":0,"method":"subscribe","params":{"query":"` + q + `"}}`
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(sub)))
	var resp cometrpc.Response
	read := func() {
		_, b, err := ws.Read(ctx)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &resp), string(b))
	}
	read()
	require.Nil(t, resp.Error)
	require.Equal(t, "0", resp.ID.String())
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(strings.Replace(sub, `"id":0`, `"id":1`, 1))))
	for {
		read()
		if resp.ID.String() == "1" {
			break
		}
	}
	require.NotNil(t, resp.Error)
	require.Equal(t, "already subscribed", resp.Error.Data)
	for {
		read()
		if resp.ID.String() == "0" && resp.Result != nil {
			break
		}
	}
	ev, err := cometrpc.DecodeEvent(resp.Result)
	require.NoError(t, err)
	require.Equal(t, q, ev.Query)
	_, err = ev.Data.NewBlock()
	require.NoError(t, err)
	require.NoError(t, ws.Close(websocket.StatusNormalClosure, ""))
	require.Eventually(t, func() bool { return w.Facade.Conns() == 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, w.Close())

	var recv, done, frames, subs, closes int
	for _, e := range w.Events() {
		switch {
		case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
			recv++
		case e.RPC != nil && e.RPC.Phase == history.PhaseDone:
			done++
			require.False(t, e.RPC.TDelivered.Before(e.RPC.TRecv))
		case e.WS != nil && e.WS.Action == history.WSFrame:
			frames++
			require.Equal(t, "0", e.WS.ID)
		case e.WS != nil && e.WS.Action == history.WSSubscribe:
			subs++
		case e.WS != nil && e.WS.Action == history.WSClose:
			closes++
			require.Equal(t, "client", e.WS.By)
		}
	}
	require.Equal(t, 4, recv)
	require.Equal(t, 4, done)
	require.Equal(t, 2, subs)
	require.Equal(t, 1, closes)
	require.Positive(t, frames)
}

// submitTx is self's signed submission for (r, 1) at sequence seq.
func submitTx(t *testing.T, w *oracleconform.World, key keys.PrivKey, r, seq uint64) []byte {
	t.Helper()
	self := key.PubKey().Address()
	acct, ok := w.Chain.Account(self)
	require.True(t, ok)
	fee, err := oracle.FeeAmount(oracle.DefaultGasPrices, oracle.DefaultGasLimit)
	require.NoError(t, err)
	b, err := tx.Build(keys.StandInSigner{Key: key}, tx.Envelope{ChainID: w.Chain.Params().ChainID, AccountNumber: acct.AccountNumber,
		Sequence: seq, GasLimit: oracle.DefaultGasLimit, FeeAmount: fee}, tx.SubmissionMsg(self, r, 1, "1000.5"))
	require.NoError(t, err)
	return b.TxBytes
}

func broadcastBody(txBytes []byte) string {
	return `{"jsonrpc":"2.0","id":7,"method":"broadcast_tx_sync","params":{"tx":"` + base64.StdEncoding.EncodeToString(txBytes) + `"}}`
}

// The broadcast faults of a script: an F11 code aimed at one request's
// submissions (others pass), and F12, the admitted tx's answer lost with
// the chain stalled, so that the same bytes meet the cache; until the
// world is disarmed, another request's broadcast is held off with code 20
// (F11), and the lost request's own pass as they are.
func TestFacadeBroadcastFaults(t *testing.T) {
	key := keys.PrivKeyFromSeed("facade-fault-sut")
	p := chain.DefaultParams()
	p.BlockInterval = 100 * time.Millisecond
	w, err := oracleconform.NewWorld(p, key.PubKey().Address(), 1, nil)
	require.NoError(t, err)
	defer w.Close()
	for _, id := range []uint64{1, 2} {
		require.NoError(t, w.Register(oracleconform.Request{ID: id, Period: 5 * time.Second, SelfIndex: 0, Endpoints: 1,
			Status: oracle.StatusEnabled}))
	}
	url := w.Facade.URL()
	code := func(m map[string]any) float64 {
		t.Helper()
		require.Nil(t, m["error"], m)
		return m["result"].(map[string]any)["code"].(float64)
	}

	// Code 13 is queued for request 2: request 1's submission passes, the
	// next one for request 2 gets it, the one after that is admitted.
	w.Inject(2, oracle.CodeInsufficientFee)
	require.Equal(t, float64(0), code(post(t, url, broadcastBody(submitTx(t, w, key, 1, 0)))))
	require.Equal(t, float64(oracle.CodeInsufficientFee), code(post(t, url, broadcastBody(submitTx(t, w, key, 2, 1)))))
	require.Equal(t, float64(0), code(post(t, url, broadcastBody(submitTx(t, w, key, 2, 1)))))

	// F12 on request 1: the connection drops, the chain stalls, and the
	// same bytes sent again meet the cached tx.
	w.LoseNext(1)
	lost := submitTx(t, w, key, 1, 2)
	resp, err := http.Post(url, "application/json", strings.NewReader(broadcastBody(lost)))
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "the answer to an F12 broadcast never arrives")
	require.True(t, w.Stalled())
	other := submitTx(t, w, key, 2, 2) // at the lost tx's sequence, as a daemon that heard nothing sends it
	require.Equal(t, float64(oracle.CodeMempoolIsFull), code(post(t, url, broadcastBody(other))),
		"request 2's broadcast is held off the held tx's sequence")
	require.Equal(t, float64(oracle.CodeWrongSequence), code(post(t, url, broadcastBody(submitTx(t, w, key, 1, 2+5)))),
		"request 1's own broadcasts reach the chain")
	m := post(t, url, broadcastBody(lost))
	require.Contains(t, m["error"].(map[string]any)["data"], "tx already exists in cache")
	w.Disarm()
	require.Equal(t, float64(oracle.CodeWrongSequence), code(post(t, url, broadcastBody(other))),
		"once disarmed, request 2's broadcast meets the sequence the held tx took")
	w.Resume()
	require.False(t, w.Stalled())
	require.NoError(t, w.Close())

	var faults []string
	var lostDone, injected int
	for _, e := range w.Events() {
		switch {
		case e.Fault != nil:
			faults = append(faults, e.Fault.ID+" "+string(e.Fault.Phase))
		case e.RPC != nil && e.RPC.Phase == history.PhaseDone && e.RPC.Lost:
			lostDone++
		case e.CheckTx != nil && e.CheckTx.Injected:
			injected++
			require.Equal(t, uint64(2), e.CheckTx.Tx.Msgs[0].RequestID)
		}
	}
	require.Equal(t, []string{"F15 start", "F12 point", "F11 point", "F15 end"}, faults)
	require.Equal(t, 1, lostDone)
	require.Equal(t, 2, injected)
}
