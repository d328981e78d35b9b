package oracledtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/wire/cometrpc"
)

// Node is a CometBFT RPC endpoint on loopback for a daemon's tests:
// status, abci_query and broadcast_tx_sync over HTTP POST, answered by a
// Chain, and a /websocket endpoint that takes subscribe and
// unsubscribe_all and sends the frames a test publishes to the
// connections subscribed to their query. It is a test double, not the
// façade: no blocks, no query language beyond exact query strings.
type Node struct {
	tb    testing.TB
	chain *Chain
	srv   *httptest.Server

	mu       sync.Mutex
	conns    []*nodeConn
	refuseWS bool
	methods  []string // every HTTP method called, in order
	requests int      // every request, HTTP or WebSocket
	subs     []Subscription
}

// Subscription is one subscribe request a Node received.
type Subscription struct {
	Conn  int // the connection's number, from 0
	ID    cometrpc.ID
	Query string
}

type nodeConn struct {
	n      int
	ws     *websocket.Conn
	subs   map[string]cometrpc.ID // query → subscribe id
	done   chan struct{}
	closed websocket.StatusCode // the client's close code; -1 when it sent none
}

// NewNode starts a node over chain; it stops when the test ends.
func NewNode(tb testing.TB, chain *Chain) *Node {
	tb.Helper()
	n := &Node{tb: tb, chain: chain}
	mux := http.NewServeMux()
	mux.HandleFunc("/websocket", n.serveWS)
	mux.HandleFunc("/", n.serveHTTP)
	n.srv = httptest.NewServer(mux)
	tb.Cleanup(n.Close)
	return n
}

// URL is the node's endpoint, for chain.endpoint.
func (n *Node) URL() string { return n.srv.URL }

// Close drops every WebSocket and stops the server (a node that is down).
func (n *Node) Close() {
	n.DropAll()
	n.srv.Close()
}

func (n *Node) serveHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	reqs, _, rpcErr := cometrpc.ParseRequests(b)
	if rpcErr != nil {
		writeJSON(w, cometrpc.NewErrorResponse(cometrpc.ID{}, rpcErr))
		return
	}
	req := reqs[0]
	n.mu.Lock()
	n.methods = append(n.methods, req.Method)
	n.requests++
	n.mu.Unlock()
	var result any
	switch req.Method {
	case cometrpc.MethodStatus:
		result = n.chain.Status()
	case cometrpc.MethodABCIQuery:
		var p cometrpc.ABCIQueryParams
		if e := req.DecodeParams(&p); e != nil {
			writeJSON(w, cometrpc.NewErrorResponse(req.ID, e))
			return
		}
		result = n.chain.Query(p.Path, p.Data)
	case cometrpc.MethodBroadcastTxSync:
		var p cometrpc.BroadcastTxParams
		if e := req.DecodeParams(&p); e != nil {
			writeJSON(w, cometrpc.NewErrorResponse(req.ID, e))
			return
		}
		res, e := n.chain.Broadcast(p.Tx)
		if e != nil {
			writeJSON(w, cometrpc.NewErrorResponse(req.ID, e))
			return
		}
		result = res
	default:
		writeJSON(w, cometrpc.NewErrorResponse(req.ID, cometrpc.ErrMethodNotFound()))
		return
	}
	resp, err := cometrpc.NewResult(req.ID, result)
	if err != nil {
		writeJSON(w, cometrpc.NewErrorResponse(req.ID, cometrpc.ErrInternal(err.Error())))
		return
	}
	writeJSON(w, resp)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (n *Node) serveWS(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	refuse := n.refuseWS
	n.requests++
	n.mu.Unlock()
	if refuse {
		http.Error(w, "refused", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	n.mu.Lock()
	c := &nodeConn{n: len(n.conns), ws: ws, subs: map[string]cometrpc.ID{}, done: make(chan struct{})}
	n.conns = append(n.conns, c)
	n.mu.Unlock()
	defer close(c.done)
	for {
		_, msg, err := ws.Read(context.Background())
		if err != nil {
			n.mu.Lock()
			c.closed = websocket.CloseStatus(err)
			n.mu.Unlock()
			return
		}
		reqs, _, rpcErr := cometrpc.ParseRequests(msg)
		if rpcErr != nil {
			continue
		}
		req := reqs[0]
		n.mu.Lock()
		n.requests++
		var resp cometrpc.Response
		switch req.Method {
		case cometrpc.MethodSubscribe:
			var p cometrpc.SubscribeParams
			_ = req.DecodeParams(&p)
			c.subs[p.Query] = req.ID
			n.subs = append(n.subs, Subscription{Conn: c.n, ID: req.ID, Query: p.Query})
			resp, _ = cometrpc.NewResult(req.ID, struct{}{})
		case cometrpc.MethodUnsubscribeAll:
			clear(c.subs)
			resp, _ = cometrpc.NewResult(req.ID, struct{}{})
		default:
			resp = cometrpc.NewErrorResponse(req.ID, cometrpc.ErrMethodNotFound())
		}
		n.mu.Unlock()
		b, _ := json.Marshal(resp)
		if err := ws.Write(context.Background(), websocket.MessageText, b); err != nil {
			return
		}
	}
}

// Frame is an event frame's data and events map.
type Frame struct {
	Data   cometrpc.EventData
	Events map[string][]string
}

// RegisterFrame is the Tx frame of a register of the given request ids.
func RegisterFrame(ids ...uint64) Frame {
	data, _ := cometrpc.TxData(5, 0, []byte{1}, cometrpc.ExecTxResult{}) // fixed values always marshal
	ev := map[string][]string{"tm.event": {"Tx"}, oracle.KeyAction: {oracle.TypeURLRegister}}
	for _, id := range ids {
		ev[oracle.KeyRegisterID] = append(ev[oracle.KeyRegisterID], strconv.FormatUint(id, 10))
	}
	return Frame{data, ev}
}

// CompleteFrame is the NewBlock frame of round n of request r completing
// at block time bt.
func CompleteFrame(r, n uint64, bt time.Time) Frame {
	data, _ := cometrpc.NewBlockData(oracle.DefaultChainID, 6, bt, nil)
	return Frame{data, map[string][]string{"tm.event": {"NewBlock"},
		oracle.KeyCompleteID:        {strconv.FormatUint(r, 10)},
		oracle.KeyCompleteNonce:     {strconv.FormatUint(n, 10)},
		oracle.KeyCompleteBlockTime: {strconv.FormatInt(bt.Unix(), 10)}}}
}

// Publish sends a frame to every connection subscribed to query, with the
// id of that subscription.
func (n *Node) Publish(query string, f Frame) {
	n.mu.Lock()
	var targets []*nodeConn
	var ids []cometrpc.ID
	for _, c := range n.conns {
		if id, ok := c.subs[query]; ok {
			targets = append(targets, c)
			ids = append(ids, id)
		}
	}
	n.mu.Unlock()
	for i, c := range targets {
		resp, err := cometrpc.NewEventFrame(ids[i], query, f.Data, f.Events)
		if err != nil {
			n.tb.Errorf("oracledtest: frame: %v", err)
			return
		}
		b, _ := json.Marshal(resp)
		_ = c.ws.Write(context.Background(), websocket.MessageText, b)
	}
}

// DropAll closes every WebSocket from the node's side.
func (n *Node) DropAll() {
	n.mu.Lock()
	conns := slices.Clone(n.conns)
	n.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.CloseNow()
		<-c.done
	}
}

// SetRefuseWS makes the node refuse (or accept again) WebSocket upgrades.
func (n *Node) SetRefuseWS(v bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refuseWS = v
}

// Subscriptions are the subscribe requests received, in order.
func (n *Node) Subscriptions() []Subscription {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.subs)
}

// LiveSubscriptions is how many queries the newest connection holds (0
// when it has ended).
func (n *Node) LiveSubscriptions() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.conns) == 0 {
		return 0
	}
	last := n.conns[len(n.conns)-1]
	select {
	case <-last.done:
		return 0
	default:
		return len(last.subs)
	}
}

// CloseStatuses are, per ended connection in order, the close code the
// client sent (-1 when it sent none).
func (n *Node) CloseStatuses() []websocket.StatusCode {
	n.mu.Lock()
	conns := slices.Clone(n.conns)
	n.mu.Unlock()
	var out []websocket.StatusCode
	for _, c := range conns {
		select {
		case <-c.done:
			n.mu.Lock()
			out = append(out, c.closed)
			n.mu.Unlock()
		default:
		}
	}
	return out
}

// HTTPMethods are the methods of every HTTP call, in order.
func (n *Node) HTTPMethods() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.methods)
}

// RequestCount is how many requests (HTTP, WebSocket upgrades and
// WebSocket calls) the node received.
func (n *Node) RequestCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.requests
}
