// Package cometclient is the oracle daemon's CometBFT RPC client: JSON-RPC
// 2.0 calls over HTTP POST, and a WebSocket connection at /websocket that
// carries calls (subscribe, unsubscribe_all) and the event frames of its
// subscriptions. Requests carry integer ids from one counter starting at 0,
// as CometBFT's Go client sends them, so a re-subscription after a redial
// uses new ids. Messages are the cometrpc types.
//
// Hand-written on coder/websocket and net/http rather than CometBFT's own
// client, which lives in the node module converge does not import (see
// docs/decisions/oracle-6-facade-and-conform.md, DR29).
package cometclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/internal/conntrack"
	"github.com/wsconverge/converge/wire/cometrpc"
)

// maxResponse bounds a response body or WebSocket message (a NewBlock
// frame of a busy block is far smaller).
const maxResponse = 16 << 20

// Client calls one CometBFT node.
type Client struct {
	endpoint string
	wsURL    string
	http     *conntrack.Client
	nextID   atomic.Int64
}

// New is a client of the node at endpoint (an http, https or tcp URL; the
// WebSocket is /websocket on the same host).
func New(endpoint string) (*Client, error) {
	ws, err := oracle.WebSocketURL(endpoint)
	if err != nil {
		return nil, fmt.Errorf("cometclient: %w", err)
	}
	u := endpoint
	if len(u) > 6 && u[:6] == "tcp://" {
		u = "http://" + u[6:]
	}
	return &Client{endpoint: u, wsURL: ws, http: conntrack.New()}, nil
}

// Close closes every connection the client opened (calls in flight fail)
// and refuses new ones.
func (c *Client) Close() {
	c.http.Close()
}

func (c *Client) id() cometrpc.ID { return cometrpc.IntID(c.nextID.Add(1) - 1) }

// Call sends one JSON-RPC request over HTTP POST and decodes its result
// into result. A JSON-RPC error comes back as a *cometrpc.RPCError; any
// other error means there was no usable answer.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	req, err := cometrpc.NewRequest(c.id(), method, params)
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hr)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("%s: read response: %w", method, err)
	}
	if len(b) > maxResponse {
		return fmt.Errorf("%s: response over %d bytes", method, maxResponse)
	}
	r, err := cometrpc.DecodeResponse(b)
	if err != nil {
		return fmt.Errorf("%s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if !r.ID.Equal(req.ID) {
		return fmt.Errorf("%s: response id %s, want %s", method, r.ID, req.ID)
	}
	if r.Error != nil {
		return r.Error
	}
	if err := r.DecodeResult(result); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Event is one event frame of a subscription: the query it echoes and its
// events map, or Err when its data does not decode as CometBFT's client
// would decode it.
type Event struct {
	Query  string
	Events map[string][]string
	Err    error
}

// Conn is one WebSocket connection. Its reader goroutine delivers call
// responses to their callers and event frames to Events, in arrival order;
// when Events is not read the reader waits (nothing is dropped).
type Conn struct {
	c      *Client
	ws     *websocket.Conn
	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc
	events chan Event
	done   chan struct{}

	mu      sync.Mutex
	pending map[int64]chan cometrpc.Response
	subs    map[int64]bool // ids of subscribe requests: their later responses are events
	err     error
}

// Dial opens a WebSocket connection to the node.
func (c *Client) Dial(ctx context.Context) (*Conn, error) {
	ws, _, err := websocket.Dial(ctx, c.wsURL, &websocket.DialOptions{HTTPClient: c.http.Client})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", c.wsURL, err)
	}
	ws.SetReadLimit(maxResponse)
	cctx, cancel := context.WithCancel(context.Background())
	conn := &Conn{
		c: c, ws: ws, ctx: cctx, cancel: cancel,
		events:  make(chan Event, 16),
		done:    make(chan struct{}),
		pending: map[int64]chan cometrpc.Response{},
		subs:    map[int64]bool{},
	}
	go conn.read()
	return conn, nil
}

// Events delivers the connection's event frames.
func (c *Conn) Events() <-chan Event { return c.events }

// Done is closed when the connection has ended and its reader has exited.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (after Done).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection with a normal closure and waits for its
// reader to exit.
func (c *Conn) Close() {
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.done
}

// Call sends a request on the connection and waits for its response.
// Subscribe requests are remembered: the frames that later reuse their id
// are events.
func (c *Conn) Call(ctx context.Context, method string, params any) (cometrpc.Response, error) {
	id := c.c.id()
	n, _ := id.Int()
	req, err := cometrpc.NewRequest(id, method, params)
	if err != nil {
		return cometrpc.Response{}, err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return cometrpc.Response{}, fmt.Errorf("%s: %w", method, err)
	}
	ch := make(chan cometrpc.Response, 1)
	c.mu.Lock()
	c.pending[n] = ch
	if method == cometrpc.MethodSubscribe {
		c.subs[n] = true
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, n)
		c.mu.Unlock()
	}()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return cometrpc.Response{}, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return cometrpc.Response{}, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-c.done:
		return cometrpc.Response{}, fmt.Errorf("%s: connection closed: %w", method, c.Err())
	}
}

// read is the reader goroutine.
func (c *Conn) read() {
	defer close(c.done)
	defer c.cancel()
	for {
		_, msg, err := c.ws.Read(c.ctx)
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		r, err := cometrpc.DecodeResponse(msg)
		if err != nil {
			continue // not a response: CometBFT's client skips it too
		}
		n, ok := r.ID.Int()
		if !ok {
			continue // ids that are not integers are discarded (§6.2)
		}
		c.mu.Lock()
		ch, isReply := c.pending[n]
		if isReply {
			delete(c.pending, n)
		}
		isSub := c.subs[n]
		c.mu.Unlock()
		switch {
		case isReply:
			ch <- r
		case isSub && r.Error == nil:
			ev, err := cometrpc.DecodeEvent(r.Result)
			select {
			case c.events <- Event{Query: ev.Query, Events: ev.Events, Err: err}:
			case <-c.ctx.Done():
				return
			}
		}
	}
}
