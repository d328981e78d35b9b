package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/records"
)

// Limits of one WebSocket connection (ORACLE-SPEC §6.3).
const (
	maxSubscriptions = 5
	maxQueryBytes    = 512
	// writeTimeout bounds one frame or response write: a daemon that stops
	// reading loses the frame (recorded as not delivered) rather than
	// stalling the chain.
	writeTimeout = 2 * time.Second
)

// Facade is the loopback CometBFT RPC endpoint of ORACLE-SPEC §6 over a
// simulated chain that produces a block every BlockInterval of wall-clock
// time. It records what the daemon asked and was told: rpc recv/done pairs,
// ws connect, subscribe, frame and close records, and (through the chain's
// and the data sources' sinks) the world's records. Safe for concurrent
// use.
type Facade struct {
	chain    *chain.Chain
	interval time.Duration
	log      *slog.Logger
	onBlock  func(*chain.Block) // called from the block loop, outside every lock
	started  bool
	// hooks are the run's fault plan at the broadcast path (nil: none).
	hooks BroadcastHooks
	// bmu makes a hook's injection and the broadcast it targets one step,
	// and a block one step with its stall check: a Lose hook that stalls
	// the chain does so before any block can commit the tx it lost.
	bmu sync.Mutex

	ln  net.Listener
	srv *http.Server

	mu       sync.Mutex // guards what follows; never held while calling the chain
	rec      *history.Recorder
	life     int
	calls    int64
	conns    map[int64]*wsConn
	nextConn int64
	refuseWS bool
	stalled  bool                 // F15: no blocks
	observe  func(*history.Event) // sees each record as it is kept, under mu

	stop    chan struct{}
	stopped chan struct{}
}

type wsConn struct {
	id int64
	ws *websocket.Conn

	wmu  sync.Mutex // serialises writes, and guards subs
	subs map[string]sub
	// closedBy is "server" once the façade has closed it.
	closedBy string
}

type sub struct {
	id cometrpc.ID
	q  *cometrpc.Query
}

// NewFacade listens on addr (e.g. "127.0.0.1:0") and serves c. The block
// loop starts with Start. rec receives every record; the caller owns it
// (read it only after Close). A nil log discards.
func NewFacade(addr string, c *chain.Chain, rec *history.Recorder, interval time.Duration, log *slog.Logger) (*Facade, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("façade: listen %s: %w", addr, err)
	}
	f := &Facade{chain: c, interval: interval, log: log, ln: ln, rec: rec, conns: map[int64]*wsConn{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/websocket", f.serveWS)
	mux.HandleFunc("/", f.serveHTTP)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// URL is the endpoint, for chain.endpoint.
func (f *Facade) URL() string { return "http://" + f.ln.Addr().String() }

// Record stamps e (the wall-clock time when unset; the current SUT
// lifetime for the SUT's kinds) and keeps it. It is the chain's and the
// data sources' sink too.
func (f *Facade) Record(e history.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recordLocked(e)
}

func (f *Facade) recordLocked(e history.Event) {
	switch e.Kind {
	case history.KindProc, history.KindRPC, history.KindWS, history.KindSrc, history.KindWhite:
		if e.Life == 0 {
			e.Life = f.life
		}
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	f.rec.Add(e)
	if f.observe != nil {
		f.observe(&e)
	}
}

// Observe makes fn see every record once it is kept, in recording order.
// fn runs under the façade's lock: it must be quick and must not call the
// façade. Set it before Start.
func (f *Facade) Observe(fn func(*history.Event)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.observe = fn
}

// BroadcastHooks are a run's faults at the broadcast path. Inject, when
// set, sees each broadcast tx before the chain does and may name a CheckTx
// code the chain then answers instead (F11, through the chain's own
// injection, so the chain records it). Lose, when set, sees each answer and
// may make the façade drop the connection instead of answering (F12: the
// tx is admitted, the daemon never hears so).
type BroadcastHooks struct {
	Inject func(t *history.Tx) uint32
	Lose   func(t *history.Tx, res cometrpc.ResultBroadcastTx, rpcErr *cometrpc.RPCError) bool
}

// SetBroadcastHooks installs h; set it before the daemon starts.
func (f *Facade) SetBroadcastHooks(h BroadcastHooks) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	f.hooks = h
}

// Stall stops (true) or resumes (false) block production: fault F15.
func (f *Facade) Stall(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stalled = v
}

// SetLife starts SUT lifetime n: the SUT's records from now on carry it.
func (f *Facade) SetLife(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.life = n
}

// Start runs the block loop: a block every interval until Close; onBlock,
// when set, sees each block after its frames went out.
func (f *Facade) Start(onBlock func(*chain.Block)) {
	f.onBlock, f.started = onBlock, true
	go f.blocks()
}

func (f *Facade) blocks() {
	defer close(f.stopped)
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case now := <-t.C:
			b := f.produce(now)
			if b == nil {
				continue
			}
			f.publish(b.Frames)
			if f.onBlock != nil {
				f.onBlock(b)
			}
		}
	}
}

// produce makes the block of now unless the chain is stalled (nil then).
// It holds bmu: a broadcast, its admission and the stall its Lose hook
// may ask for come wholly before or wholly after the block, so an F12 tx
// is never committed by a block that started before its stall.
func (f *Facade) produce(now time.Time) *chain.Block {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	f.mu.Lock()
	stalled := f.stalled
	f.mu.Unlock()
	if stalled {
		return nil
	}
	return f.chain.ProduceBlock(now)
}

// publish sends each frame to every subscription it matches, in order,
// and records each delivery.
func (f *Facade) publish(frames []*chain.Frame) {
	f.mu.Lock()
	conns := make([]*wsConn, 0, len(f.conns))
	for _, c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	sort.Slice(conns, func(i, j int) bool { return conns[i].id < conns[j].id })
	for _, fr := range frames {
		for _, c := range conns {
			c.wmu.Lock()
			queries := make([]string, 0, len(c.subs))
			for q := range c.subs {
				queries = append(queries, q)
			}
			sort.Strings(queries)
			for _, q := range queries {
				s := c.subs[q]
				if !chain.Matches(s.q, fr) {
					continue
				}
				resp, err := fr.Response(s.id, q)
				if err != nil {
					f.log.Error("façade: frame", "err", err)
					continue
				}
				if err := c.write(resp); err != nil {
					continue // the connection is going; its close is recorded by its reader
				}
				f.Record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: c.id, Action: history.WSFrame,
					Query: q, ID: s.id.String(), Frame: fr.Record()}})
			}
			c.wmu.Unlock()
		}
	}
}

// write sends v; the caller holds c.wmu.
func (c *wsConn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("façade: marshal: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// DropWS closes every WebSocket from the server's side (fault F1) and,
// with refuse, refuses new ones until RefuseWS(false).
func (f *Facade) DropWS(refuse bool) {
	f.mu.Lock()
	f.refuseWS = refuse
	conns := make([]*wsConn, 0, len(f.conns))
	for _, c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.wmu.Lock()
		c.closedBy = "server"
		c.wmu.Unlock()
		_ = c.ws.Close(websocket.StatusGoingAway, "fault F1")
	}
}

// RefuseWS makes the façade refuse (or accept again) WebSocket upgrades.
func (f *Facade) RefuseWS(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseWS = v
}

// Close stops the block loop and the server and drops every connection.
func (f *Facade) Close() error {
	select {
	case <-f.stop:
	default:
		close(f.stop)
		if f.started {
			<-f.stopped
		}
	}
	f.DropWS(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("façade: shutdown: %w", err)
	}
	return nil
}

// ---- HTTP ----

func (f *Facade) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "JSON-RPC over POST only (the URI form is not served)", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return
	}
	reqs, batch, rpcErr := cometrpc.ParseRequests(body)
	if rpcErr != nil {
		_ = writeJSON(w, cometrpc.NewErrorResponse(cometrpc.ID{}, rpcErr))
		return
	}
	resps := make([]cometrpc.Response, len(reqs))
	sums := make([]*history.RPCResult, len(reqs))
	calls := make([]int64, len(reqs))
	recv := time.Now()
	lost := false
	for i, req := range reqs {
		var l bool
		calls[i], resps[i], sums[i], l = f.call(0, req, true)
		lost = lost || l
	}
	if lost {
		// F12: the connection drops before the answer; the tx stays
		// admitted. The loss is recorded before the drop: the server does
		// not wait for a hijacked connection's handler when it shuts
		// down, so a record made after the client saw the drop could be
		// missing from the history.
		at := time.Now()
		for i := range reqs {
			f.done(calls[i], recv, at, sums[i], true)
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	}
	var werr error
	if batch {
		werr = writeJSON(w, resps)
	} else {
		werr = writeJSON(w, resps[0])
	}
	delivered := time.Now()
	for i := range reqs {
		f.done(calls[i], recv, delivered, sums[i], werr != nil)
	}
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

// call answers one request of the chain's methods, recording its recv half;
// the caller records the done half (with the summary) once the answer is
// out. lose reports that the Lose hook wants the answer dropped (only
// asked when canLose).
func (f *Facade) call(conn int64, req cometrpc.Request, canLose bool) (call int64, resp cometrpc.Response, sum *history.RPCResult, lose bool) {
	rec := &history.RPC{Conn: conn, Method: req.Method, ID: req.ID.String()}
	var answer func() (any, *history.RPCResult, *cometrpc.RPCError)
	fail := func(e *cometrpc.RPCError) func() (any, *history.RPCResult, *cometrpc.RPCError) {
		return func() (any, *history.RPCResult, *cometrpc.RPCError) { return nil, nil, e }
	}
	switch req.Method {
	case cometrpc.MethodStatus:
		answer = func() (any, *history.RPCResult, *cometrpc.RPCError) {
			s := f.chain.Status()
			return s, records.ResultOfStatus(s), nil
		}
	case cometrpc.MethodABCIQuery:
		var p cometrpc.ABCIQueryParams
		if e := req.DecodeParams(&p); e != nil {
			answer = fail(e)
			break
		}
		rec.Query = records.QueryOf(p)
		answer = func() (any, *history.RPCResult, *cometrpc.RPCError) {
			q := f.chain.ABCIQuery(p.Path, p.Data)
			return q, records.ResultOfQuery(p.Path, q), nil
		}
	case cometrpc.MethodBroadcastTxSync:
		var p cometrpc.BroadcastTxParams
		if e := req.DecodeParams(&p); e != nil {
			answer = fail(e)
			break
		}
		t := records.DecodeTx(p.Tx)
		rec.Tx = &t
		answer = func() (any, *history.RPCResult, *cometrpc.RPCError) {
			res, e := f.broadcast(&t, p.Tx, canLose, &lose)
			if e != nil {
				return nil, nil, e
			}
			return res, records.ResultOfBroadcast(res), nil
		}
	default:
		answer = fail(cometrpc.ErrMethodNotFound())
	}
	f.mu.Lock()
	f.calls++
	call = f.calls
	rec.Call, rec.Phase = call, history.PhaseRecv
	f.recordLocked(history.Event{Kind: history.KindRPC, RPC: rec})
	f.mu.Unlock()

	res, summary, e := answer()
	if e != nil {
		return call, cometrpc.NewErrorResponse(req.ID, e), records.ResultOfError(e), lose
	}
	resp, err := cometrpc.NewResult(req.ID, res)
	if err != nil {
		e = cometrpc.ErrInternal(err.Error())
		return call, cometrpc.NewErrorResponse(req.ID, e), records.ResultOfError(e), lose
	}
	return call, resp, summary, lose
}

// broadcast hands a tx to the chain with the run's broadcast faults
// applied: an injected CheckTx code, and (when canLose) the answer lost.
func (f *Facade) broadcast(t *history.Tx, txBytes []byte, canLose bool, lose *bool) (cometrpc.ResultBroadcastTx, *cometrpc.RPCError) {
	f.bmu.Lock()
	defer f.bmu.Unlock()
	var code uint32
	if f.hooks.Inject != nil {
		if code = f.hooks.Inject(t); code != 0 {
			if err := f.chain.InjectCheckTx(code, 1); err != nil {
				f.log.Error("façade: inject", "err", err)
			}
		}
	}
	res, e := f.chain.BroadcastTxSync(txBytes)
	if code != 0 && f.chain.InjectionsLeft() > 0 {
		// The tx never reached CheckTx (a full mempool, a cache hit): the
		// injection was for it, not for a later one.
		_ = f.chain.InjectCheckTx(code, 0)
	}
	if canLose && f.hooks.Lose != nil {
		*lose = f.hooks.Lose(t, res, e)
	}
	return res, e
}

// done records the answer to call.
func (f *Facade) done(call int64, recv, delivered time.Time, summary *history.RPCResult, lost bool) {
	r := &history.RPC{Call: call, Phase: history.PhaseDone, TRecv: recv, Result: summary, Lost: lost}
	if !lost {
		r.TDelivered = delivered
	}
	f.Record(history.Event{At: delivered, Kind: history.KindRPC, RPC: r})
}

// ---- WebSocket ----

func (f *Facade) serveWS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	refuse := f.refuseWS
	f.mu.Unlock()
	if refuse {
		f.Record(history.Event{Kind: history.KindWS, WS: &history.WS{Action: history.WSRefuse}})
		http.Error(w, "refused (fault F1)", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 20)
	f.mu.Lock()
	f.nextConn++
	c := &wsConn{id: f.nextConn, ws: ws, subs: map[string]sub{}}
	f.conns[c.id] = c
	f.recordLocked(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: c.id, Action: history.WSConnect}})
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, c.id)
		f.mu.Unlock()
		c.wmu.Lock()
		by := c.closedBy
		c.wmu.Unlock()
		if by == "" {
			by = "client"
		}
		f.Record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: c.id, Action: history.WSClose, By: by}})
		_ = ws.CloseNow()
	}()
	for {
		_, msg, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		reqs, _, rpcErr := cometrpc.ParseRequests(msg)
		if rpcErr != nil {
			c.wmu.Lock()
			_ = c.write(cometrpc.NewErrorResponse(cometrpc.ID{}, rpcErr))
			c.wmu.Unlock()
			continue
		}
		for _, req := range reqs {
			f.serveWSRequest(c, req)
		}
	}
}

func (f *Facade) serveWSRequest(c *wsConn, req cometrpc.Request) {
	switch req.Method {
	case cometrpc.MethodSubscribe, cometrpc.MethodUnsubscribe, cometrpc.MethodUnsubscribeAll:
	default:
		recv := time.Now()
		call, resp, summary, _ := f.call(c.id, req, false)
		c.wmu.Lock()
		err := c.write(resp)
		c.wmu.Unlock()
		f.done(call, recv, time.Now(), summary, err != nil)
		return
	}
	var p cometrpc.SubscribeParams
	rec := &history.WS{Conn: c.id, ID: req.ID.String()}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var rpcErr *cometrpc.RPCError
	switch req.Method {
	case cometrpc.MethodSubscribe:
		rec.Action = history.WSSubscribe
		if rpcErr = req.DecodeParams(&p); rpcErr != nil {
			break
		}
		rec.Query = p.Query
		rpcErr = subscribeError(c, p.Query)
	case cometrpc.MethodUnsubscribe:
		rec.Action = history.WSUnsubscribe
		if rpcErr = req.DecodeParams(&p); rpcErr != nil {
			break
		}
		rec.Query = p.Query
		if _, ok := c.subs[p.Query]; !ok {
			rpcErr = cometrpc.ErrInternal("subscription not found")
		}
	case cometrpc.MethodUnsubscribeAll:
		rec.Action = history.WSUnsubscribeAll
	}
	var resp cometrpc.Response
	if rpcErr != nil {
		rec.Err = rpcErr.Data
		resp = cometrpc.NewErrorResponse(req.ID, rpcErr)
	} else {
		resp, _ = cometrpc.NewResult(req.ID, struct{}{}) // an empty object always marshals
	}
	f.Record(history.Event{Kind: history.KindWS, WS: rec})
	if err := c.write(resp); err != nil || rpcErr != nil {
		return
	}
	// Frames only after the subscribe response (§6.4).
	switch req.Method {
	case cometrpc.MethodSubscribe:
		q, _ := cometrpc.ParseQuery(p.Query) // subscribeError parsed it
		c.subs[p.Query] = sub{id: req.ID, q: q}
	case cometrpc.MethodUnsubscribe:
		delete(c.subs, p.Query)
	case cometrpc.MethodUnsubscribeAll:
		clear(c.subs)
	}
}

// subscribeError is why query cannot be subscribed on c (nil if it can);
// the caller holds c.wmu.
func subscribeError(c *wsConn, query string) *cometrpc.RPCError {
	switch {
	case len(query) > maxQueryBytes:
		return cometrpc.ErrInternal(fmt.Sprintf("query is %d bytes, over the limit of %d", len(query), maxQueryBytes))
	case len(c.subs) >= maxSubscriptions:
		return cometrpc.ErrInternal(fmt.Sprintf("max_subscriptions_per_client %d reached", maxSubscriptions))
	}
	if _, ok := c.subs[query]; ok {
		return cometrpc.ErrInternal("already subscribed")
	}
	if _, err := cometrpc.ParseQuery(query); err != nil {
		return cometrpc.ErrInternal(fmt.Sprintf("failed to parse query: %v", err))
	}
	return nil
}

// Conns is how many WebSocket connections are open.
func (f *Facade) Conns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}
