package cometrpc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestIDsAreEchoedExactly(t *testing.T) {
	for _, raw := range []string{`0`, `-1`, `7`, `"abc"`, `"0"`, `1.5`, `1e3`, `null`, `{"a":[1,2]}`, `[0]`, `true`} {
		t.Run(raw, func(t *testing.T) {
			reqs, batch, rpcErr := ParseRequests([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"status","params":{}}`))
			require.Nil(t, rpcErr)
			require.False(t, batch)
			require.True(t, reqs[0].ID.Present())
			resp, err := NewResult(reqs[0].ID, struct{}{})
			require.NoError(t, err)
			require.Equal(t, `{"jsonrpc":"2.0","id":`+raw+`,"result":{}}`, marshal(t, resp))
		})
	}
	// Whitespace inside an id is not part of its value.
	reqs, _, _ := ParseRequests([]byte(`{"jsonrpc":"2.0","id":{ "a" : 1 },"method":"status"}`))
	require.Equal(t, `{"a":1}`, reqs[0].ID.String())
}

func TestIDZeroIsWrittenNeverOmitted(t *testing.T) {
	r, err := NewRequest(IntID(0), MethodStatus, struct{}{})
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":0,"method":"status","params":{}}`, marshal(t, r))
	resp, err := NewResult(IntID(0), struct{}{})
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":0,"result":{}}`, marshal(t, resp))

	n, ok := IntID(0).Int()
	require.True(t, ok)
	require.Zero(t, n)
	_, ok = StringID("0").Int()
	require.False(t, ok, "a string id is not an integer id")
	require.True(t, IntID(4).Equal(IntID(4)))
	require.False(t, IntID(4).Equal(StringID("4")))
}

func TestNotificationHasNoID(t *testing.T) {
	reqs, _, rpcErr := ParseRequests([]byte(`{"jsonrpc":"2.0","method":"status"}`))
	require.Nil(t, rpcErr)
	require.False(t, reqs[0].ID.Present())
	// A response to it (should one be written) carries id null, not no id.
	require.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`,
		marshal(t, NewErrorResponse(reqs[0].ID, ErrMethodNotFound())))
}

func TestParseRequests(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		n     int
		batch bool
		code  int // 0: ok
	}{
		{"one request", `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/x"}}`, 1, false, 0},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"status"},{"jsonrpc":"2.0","id":2,"method":"status"}]`, 2, true, 0},
		{"not JSON → parse error", `{"jsonrpc":`, 0, false, CodeParseError},
		{"empty body → parse error", ``, 0, false, CodeParseError},
		{"no method → invalid request", `{"jsonrpc":"2.0","id":1}`, 0, false, CodeInvalidRequest},
		{"wrong version → invalid request", `{"jsonrpc":"1.0","id":1,"method":"status"}`, 0, false, CodeInvalidRequest},
		{"not an object → invalid request", `"status"`, 0, false, CodeInvalidRequest},
		{"empty batch → invalid request", `[]`, 0, true, CodeInvalidRequest},
		{"method not a string → invalid request", `{"jsonrpc":"2.0","id":1,"method":5}`, 0, false, CodeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reqs, batch, rpcErr := ParseRequests([]byte(tc.body))
			if tc.code != 0 {
				require.NotNil(t, rpcErr)
				require.Equal(t, tc.code, rpcErr.Code)
				return
			}
			require.Nil(t, rpcErr)
			require.Len(t, reqs, tc.n)
			require.Equal(t, tc.batch, batch)
		})
	}
}

func TestDecodeParams(t *testing.T) {
	// As CometBFT's Go client sends abci_query: data upper-case hex, height a
	// string.
	reqs, _, rpcErr := ParseRequests([]byte(`{"jsonrpc":"2.0","id":5,"method":"abci_query",` +
		`"params":{"path":"/guru.oracle.v1.Query/OracleRequestDoc","data":"0807","height":"0","prove":false}}`))
	require.Nil(t, rpcErr)
	var p ABCIQueryParams
	require.Nil(t, reqs[0].DecodeParams(&p))
	require.Equal(t, ABCIQueryParams{Path: "/guru.oracle.v1.Query/OracleRequestDoc", Data: HexBytes{0x08, 0x07}}, p)

	// Lower-case hex and a numeric height decode too.
	r := Request{Params: json.RawMessage(`{"path":"/p","data":"0a0b","height":12}`)}
	require.Nil(t, r.DecodeParams(&p))
	require.Equal(t, HexBytes{0x0a, 0x0b}, p.Data)
	require.Equal(t, Int64(12), p.Height)

	var b BroadcastTxParams
	require.Nil(t, Request{Params: json.RawMessage(`{"tx":"CgIIAQ=="}`)}.DecodeParams(&b))
	require.Equal(t, []byte{0x0a, 0x02, 0x08, 0x01}, b.Tx)

	var s SubscribeParams
	require.Nil(t, Request{}.DecodeParams(&s), "no params is an empty object")

	for _, bad := range []string{`{"data":"zz"}`, `{"height":"x"}`, `{"tx":"!!"}`, `[1]`, `{"height":""}`} {
		var p struct {
			ABCIQueryParams
			Tx []byte `json:"tx"`
		}
		rpcErr := Request{Params: json.RawMessage(bad)}.DecodeParams(&p)
		require.NotNil(t, rpcErr, bad)
		require.Equal(t, CodeInvalidParams, rpcErr.Code, bad)
	}

	// The request the daemon writes, as CometBFT's client writes it.
	q, err := NewRequest(IntID(1), MethodABCIQuery, ABCIQueryParams{Path: "/p", Data: HexBytes{0xab}})
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/p","data":"AB","height":"0","prove":false}}`, marshal(t, q))
	bt, err := NewRequest(IntID(2), MethodBroadcastTxSync, BroadcastTxParams{Tx: []byte{0x0a, 0x02, 0x08, 0x01}})
	require.NoError(t, err)
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"method":"broadcast_tx_sync","params":{"tx":"CgIIAQ=="}}`, marshal(t, bt))
}

func TestErrors(t *testing.T) {
	cases := []struct {
		err  *RPCError
		json string
	}{
		{ErrMethodNotFound(), `{"code":-32601,"message":"Method not found"}`},
		{ErrInvalidParams("bad"), `{"code":-32602,"message":"Invalid params","data":"bad"}`},
		{ErrInternal("tx already exists in cache"), `{"code":-32603,"message":"Internal error","data":"tx already exists in cache"}`},
		{ErrParse("x"), `{"code":-32700,"message":"Parse error","data":"x"}`},
		{ErrInvalidRequest("x"), `{"code":-32600,"message":"Invalid Request","data":"x"}`},
	}
	for _, tc := range cases {
		require.Equal(t, tc.json, marshal(t, tc.err))
		resp, err := DecodeResponse([]byte(`{"jsonrpc":"2.0","id":9,"error":` + tc.json + `}`))
		require.NoError(t, err)
		var v any
		var rpcErr *RPCError
		require.ErrorAs(t, resp.DecodeResult(&v), &rpcErr)
		require.Equal(t, tc.err, rpcErr)
	}
	require.Equal(t, "RPC error -32603 - Internal error: boom", ErrInternal("boom").Error())
	require.Equal(t, "RPC error -32601 - Method not found", ErrMethodNotFound().Error())
}

func TestDecodeResponseRejects(t *testing.T) {
	for _, bad := range []string{`{`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"1.0","id":1,"result":{}}`, `[]`} {
		_, err := DecodeResponse([]byte(bad))
		require.Error(t, err, bad)
	}
}

func TestScalars(t *testing.T) {
	require.Equal(t, `"-42"`, marshal(t, Int64(-42)))
	require.Equal(t, `"18446744073709551615"`, marshal(t, Uint64(18446744073709551615)))
	require.Equal(t, `"0A0B"`, marshal(t, HexBytes{0x0a, 0x0b}))
	require.Equal(t, `""`, marshal(t, HexBytes(nil)))
	var n Int64
	require.NoError(t, json.Unmarshal([]byte(`"9223372036854775807"`), &n))
	require.Equal(t, Int64(9223372036854775807), n)
	require.Error(t, json.Unmarshal([]byte(`"9223372036854775808"`), &n))
	require.Error(t, json.Unmarshal([]byte(`"1.5"`), &n))
	require.Error(t, json.Unmarshal([]byte(`1.5`), &n))
	var u Uint64
	require.Error(t, json.Unmarshal([]byte(`"-1"`), &u))
	var h HexBytes
	require.NoError(t, json.Unmarshal([]byte(`null`), &h))
	require.Nil(t, h)
	require.Error(t, json.Unmarshal([]byte(`"abc"`), &h), "odd length")
	require.Equal(t, "0A0B", HexBytes{0x0a, 0x0b}.String())
}
