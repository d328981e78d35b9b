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

func TestABCIQueryResultMatchesTheSpec(t *testing.T) {
	value := []byte{0x0a, 0x02, 0x08, 0x07}
	ok := QueryOK(value, 57)
	require.Equal(t,
		`{"response":{"code":0,"log":"","info":"","index":"0","key":null,"value":"`+base64.StdEncoding.EncodeToString(value)+
			`","proof_ops":null,"height":"57","codespace":""}}`,
		marshal(t, ok))

	failed := QueryFailed(oracle.Errorf(oracle.CodeInvalidRequest, "not exist RequestDoc(req_id: 7)"), 57)
	require.Equal(t,
		`{"response":{"code":18,"log":"not exist RequestDoc(req_id: 7): invalid request","info":"","index":"0","key":null,"value":null,"proof_ops":null,"height":"57","codespace":"sdk"}}`,
		marshal(t, failed))

	// The daemon's side.
	var back ResultABCIQuery
	require.NoError(t, json.Unmarshal([]byte(marshal(t, ok)), &back))
	require.Equal(t, value, back.Response.Value)
	require.Nil(t, back.Err())
	require.NoError(t, json.Unmarshal([]byte(marshal(t, failed)), &back))
	require.Nil(t, back.Response.Value)
	require.Equal(t, uint32(18), back.Err().Code)
	require.Contains(t, back.Err().Reason, "not exist RequestDoc(req_id: 7)")

	// An empty (but successful) value is "", not null.
	require.Contains(t, marshal(t, QueryOK(nil, 1)), `"value":""`)
}

func TestBroadcastResultMatchesTheSpec(t *testing.T) {
	hash := []byte{0xab, 0xcd}
	require.Equal(t, `{"code":0,"data":"","log":"","codespace":"","hash":"ABCD"}`, marshal(t, BroadcastAdmitted(hash)))
	rej := BroadcastRejected(hash, &oracle.CodeError{Code: 32, Reason: "account sequence mismatch, expected 5, got 4"})
	require.Equal(t,
		`{"code":32,"data":"","log":"account sequence mismatch, expected 5, got 4: incorrect account sequence","codespace":"sdk","hash":"ABCD"}`,
		marshal(t, rej))

	cases := []struct {
		name  string
		resp  Response
		err   error
		class oracle.BroadcastClass
	}{
		{"code 0", mustResult(t, BroadcastAdmitted(hash)), nil, oracle.ClassSuccess},
		{"code 32", mustResult(t, rej), nil, oracle.ClassSequenceMismatch},
		{"code 13", mustResult(t, BroadcastRejected(hash, oracle.Errorf(13, "x"))), nil, oracle.ClassInsufficientFee},
		{"RPC error: tx in cache", NewErrorResponse(IntID(1), ErrInternal(oracle.RPCErrTxInCache)), nil, oracle.ClassAlreadyAdmitted},
		{"RPC error: mempool full", NewErrorResponse(IntID(1), ErrInternal("mempool is full: number of txs 1 (max: 1), total txs bytes 9 (max: 9)")), nil, oracle.ClassTransient},
		{"RPC error: other", NewErrorResponse(IntID(1), ErrInternal("timed out")), nil, oracle.ClassAmbiguous},
		{"no response", Response{}, os.ErrDeadlineExceeded, oracle.ClassAmbiguous},
		{"undecodable result", Response{JSONRPC: Version, Result: json.RawMessage(`"x"`)}, nil, oracle.ClassAmbiguous},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.class, oracle.ClassifyBroadcast(ReplyOf(tc.resp, tc.err)))
		})
	}
}

func mustResult(t *testing.T, v any) Response {
	t.Helper()
	r, err := NewResult(IntID(1), v)
	require.NoError(t, err)
	// Through the wire and back, as the daemon receives it.
	back, err := DecodeResponse([]byte(marshal(t, r)))
	require.NoError(t, err)
	return back
}

func TestStatusResult(t *testing.T) {
	latest := time.Date(2030, 1, 1, 0, 0, 57, 0, time.FixedZone("x", 3600))
	st := NewStatus("guru_631-1", 57, latest, time.Date(2030, 1, 1, 0, 0, 1, 0, time.UTC))
	b := marshal(t, st)
	require.JSONEq(t, `{
	  "node_info":{"protocol_version":{"p2p":"8","block":"11","app":"0"},
	    "id":"636f6e76657267652d6661636164652d6e6f6465","listen_addr":"tcp://127.0.0.1:26656",
	    "network":"guru_631-1","version":"0.38.17","channels":"40202122233038606100",
	    "moniker":"converge-facade","other":{"tx_index":"on","rpc_address":"tcp://127.0.0.1:26657"}},
	  "sync_info":{"latest_block_hash":"","latest_app_hash":"","latest_block_height":"57",
	    "latest_block_time":"2029-12-31T23:00:57Z","earliest_block_hash":"","earliest_app_hash":"",
	    "earliest_block_height":"1","earliest_block_time":"2030-01-01T00:00:01Z","catching_up":false},
	  "validator_info":{"address":"","pub_key":null,"voting_power":"0"}}`, b)

	var back ResultStatus
	require.NoError(t, json.Unmarshal([]byte(b), &back))
	require.Equal(t, "guru_631-1", back.NodeInfo.Network)
	require.Equal(t, Int64(57), back.SyncInfo.LatestBlockHeight)
	require.True(t, latest.Equal(back.SyncInfo.LatestBlockTime))
	require.False(t, back.SyncInfo.CatchingUp)
}
