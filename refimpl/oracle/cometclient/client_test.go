package cometclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/refimpl/oracle/cometclient"
	"github.com/wsconverge/converge/wire/cometrpc"
)

// server answers HTTP calls with a script and, on /websocket, replies to
// every request and then sends the frames of send.
func server(t *testing.T, http func(cometrpc.Request) cometrpc.Response, send func(req cometrpc.Request) [][]byte) (*httptest.Server, chan cometrpc.Request) {
	t.Helper()
	seen := make(chan cometrpc.Request, 100)
	mux := httpMux(t, http, send, seen)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, seen
}

func httpMux(t *testing.T, answer func(cometrpc.Request) cometrpc.Response, send func(cometrpc.Request) [][]byte, seen chan cometrpc.Request) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/websocket", func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, msg, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			reqs, _, rpcErr := cometrpc.ParseRequests(msg)
			require.Nil(t, rpcErr)
			seen <- reqs[0]
			for _, out := range send(reqs[0]) {
				if ws.Write(context.Background(), websocket.MessageText, out) != nil {
					return
				}
			}
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs, _, rpcErr := cometrpc.ParseRequests(b)
		require.Nil(t, rpcErr)
		seen <- reqs[0]
		_ = json.NewEncoder(w).Encode(answer(reqs[0]))
	})
	return mux
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// HTTP calls carry integer ids from 0; results decode; a JSON-RPC error
// comes back as *cometrpc.RPCError.
func TestCall(t *testing.T) {
	srv, seen := server(t, func(r cometrpc.Request) cometrpc.Response {
		if r.Method == cometrpc.MethodBroadcastTxSync {
			return cometrpc.NewErrorResponse(r.ID, cometrpc.ErrInternal("mempool is full"))
		}
		resp, _ := cometrpc.NewResult(r.ID, cometrpc.NewStatus("guru_631-1", 9, time.Unix(100, 0), time.Unix(1, 0)))
		return resp
	}, nil)
	c, err := cometclient.New(srv.URL)
	require.NoError(t, err)
	defer c.Close()

	var st cometrpc.ResultStatus
	require.NoError(t, c.Call(context.Background(), cometrpc.MethodStatus, struct{}{}, &st))
	require.Equal(t, "guru_631-1", st.NodeInfo.Network)
	require.Equal(t, cometrpc.Int64(9), st.SyncInfo.LatestBlockHeight)
	req := <-seen
	require.Equal(t, "0", req.ID.String(), "the first id is 0")

	var b cometrpc.ResultBroadcastTx
	err = c.Call(context.Background(), cometrpc.MethodBroadcastTxSync, cometrpc.BroadcastTxParams{Tx: []byte{1}}, &b)
	var rpcErr *cometrpc.RPCError
	require.ErrorAs(t, err, &rpcErr)
	require.Equal(t, "mempool is full", rpcErr.Data)
	require.Equal(t, "1", (<-seen).ID.String())

	_, err = cometclient.New("ftp://x")
	require.Error(t, err)
}

// On the WebSocket, a subscribe's reply goes to its caller and later
// frames with its id are events; frames whose id is not an integer are
// discarded, and data that does not decode is an event with Err.
func TestWebSocket(t *testing.T) {
	const query = "tm.event='NewBlock' AND complete_oracle_data_set.request_id EXISTS"
	data, err := cometrpc.NewBlockData("guru_631-1", 3, time.Unix(50, 0), nil)
	require.NoError(t, err)
	srv, seen := server(t, nil, func(r cometrpc.Request) [][]byte {
		reply, _ := cometrpc.NewResult(r.ID, struct{}{})
		if r.Method != cometrpc.MethodSubscribe {
			return [][]byte{marshal(t, reply)}
		}
		good, _ := cometrpc.NewEventFrame(r.ID, query, data, map[string][]string{"tm.event": {"NewBlock"}})
		stringID, _ := cometrpc.NewEventFrame(cometrpc.StringID("x"), query, data, map[string][]string{"tm.event": {"Other"}})
		bad, _ := cometrpc.NewEventFrame(r.ID, query, cometrpc.EventData{Type: "tendermint/event/Unknown"}, map[string][]string{})
		return [][]byte{marshal(t, reply), marshal(t, stringID), marshal(t, good), marshal(t, bad)}
	})
	c, err := cometclient.New(srv.URL)
	require.NoError(t, err)
	defer c.Close()
	conn, err := c.Dial(context.Background())
	require.NoError(t, err)

	resp, err := conn.Call(context.Background(), cometrpc.MethodSubscribe, cometrpc.SubscribeParams{Query: query})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	require.Equal(t, "0", (<-seen).ID.String())

	ev := <-conn.Events()
	require.NoError(t, ev.Err)
	require.Equal(t, query, ev.Query)
	require.Equal(t, []string{"NewBlock"}, ev.Events["tm.event"], "the string-id frame was discarded")
	ev = <-conn.Events()
	require.Error(t, ev.Err)

	_, err = conn.Call(context.Background(), cometrpc.MethodUnsubscribeAll, struct{}{})
	require.NoError(t, err)
	require.Equal(t, "1", (<-seen).ID.String(), "ids continue on one counter")

	conn.Close()
	<-conn.Done()
	_, err = conn.Call(context.Background(), cometrpc.MethodSubscribe, cometrpc.SubscribeParams{Query: query})
	require.Error(t, err)
}
