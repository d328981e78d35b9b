package oracle

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
	"github.com/wsconverge/converge/internal/streams"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/records"
	"github.com/wsconverge/converge/wire/tx"
)

// Transport delays on the virtual clock: an RPC answer or a dial takes
// rpcLat, a frame reaches the daemon frameLat after its block.
const (
	rpcLat   = time.Millisecond
	frameLat = 5 * time.Millisecond
	// restartAfter is the supervisor's wait before restarting a daemon
	// that exited non-zero (ORACLE-SPEC 4.9).
	restartAfter = 5 * time.Second
)

// errTimeout and friends are what the daemon is told when no usable
// answer came.
var (
	errTimeout = errors.New("oraclesim: no answer within the timeout")
	errClosed  = errors.New("oraclesim: connection closed")
	errRefused = errors.New("oraclesim: connection refused")
	errNoBody  = errors.New("oraclesim: connection reset")
)

// clock is the world's virtual clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time  { return c.t }
func (c *clock) Set(t time.Time) { c.t = t }

// sub is one active subscription on the daemon's connection.
type sub struct {
	query string
	id    string
	q     *cometrpc.Query
}

// fetch is a GET in flight, and the event that ends it: the answer at
// out.DoneAt, or the client's timeout.
type fetch struct {
	w       *world
	id      ports.ID
	out     datasource.Outcome
	x       *datasource.Exchange // the GET's records and body (not reused)
	d       ports.Daemon
	ended   bool
	timeout bool
}

func (f *fetch) fire() {
	w := f.w
	if f.ended { // aborted: nothing refers to it now that it fired
		w.spentFetches.put(f)
		return
	}
	delete(w.fetches, f.id)
	d, id, out, x, timeout := f.d, f.id, f.out, f.x, f.timeout
	w.spentFetches.put(f)
	// The result is handed over in the world's scratch (see ports.Daemon).
	in := &w.fetched
	if timeout { // the client gives up at its timeout
		w.src.AbortIn(x, out, w.now())
		*in = ports.Fetched{ID: id, Err: errTimeout}
		w.handle(d, in)
		return
	}
	w.src.DoneIn(x, out)
	*in = ports.Fetched{ID: id, Status: out.Status, Body: out.Body}
	if !out.Answered() {
		in.Err = errNoBody
	}
	w.handle(d, in)
}

// spent is a free list of one kind of thing the world makes on every
// round or block (fetches, peer turns, block holds): one goes back on it
// once it has fired or been let go of and nothing refers to it any more,
// and the next one of its kind reuses its memory rather than allocating.
// put zeroes it, so no state is carried over.
type spent[T any] struct{ list []*T }

func (s *spent[T]) get() *T {
	if n := len(s.list); n > 0 {
		x := s.list[n-1]
		s.list = s.list[:n-1]
		return x
	}
	return new(T)
}

func (s *spent[T]) put(x *T) {
	var zero T
	*x = zero
	s.list = append(s.list, x)
}

// wake is the daemon's wake-up (an event): one per lifetime, scheduled as
// often as the daemon asks for a new time.
type wake struct {
	w *world
	d ports.Daemon
}

func (e *wake) fire() { e.w.handle(e.d, ports.Wake{}) }

// world is one run: the chain, the sources, the daemon of the current
// lifetime and the queue of what happens next.
type world struct {
	o     Options
	clk   clock
	loop  engine.Loop[event]
	chain *chain.Chain
	src   *datasource.Sources
	rec   *history.Recorder
	sink  func(*history.Event)
	// scratch is the record handed to sink (see record).
	scratch history.Event
	// fetched is the fetch result handed to the daemon by address (see
	// ports.Daemon): it reads it during the call only.
	fetched ports.Fetched
	cfg     oracle.Config
	sut     keys.PrivKey
	// standIn is the memo the SUT's signer and the chain's check of its
	// txs share (keys.StandInMemo).
	standIn keys.StandInMemo
	// txMemo holds the memo the SUT's signer and the world's decoding of
	// its broadcasts share (tx.Memo) and what their records repeat.
	txMemo records.TxMemo
	self   string
	err    error

	// the daemon's lifetime
	d      ports.Daemon
	life   int
	exited bool
	// stopping: the lifetime got SIGTERM or SIGINT.
	stopping bool
	final    bool // the final stop was sent: no restart
	conn     ports.ID
	subs     []sub
	calls    int64
	wake     time.Time
	ports    int // request outputs of this lifetime
	crashAt  int // F17: crash at this request output (0: none)
	fetches  map[ports.ID]*fetch
	wakeUp   *wake // this lifetime's

	spentFetches spent[fetch]
	spentTurns   spent[peerTurn]
	spentHolds   spent[blockHold]

	// workload
	reqs     []*request
	peers    []*chain.Peer
	nextID   uint64
	quiet    bool
	peerSent []peerSent // by request id: the round open on chain and who sent for it

	// faults in force, and when the last window opened so far ends
	f         faultState
	faultsEnd time.Time

	// steered are the fault kinds Options.Steering forces on; drawn the
	// fault kinds planFaults drew.
	steered []string
	drawn   map[string]bool
}

func (w *world) now() time.Time { return w.clk.t }

func (w *world) at(t time.Time, f func()) { w.atEvent(t, call(f)) }

// atEvent schedules e at t.
func (w *world) atEvent(t time.Time, e event) { w.loop.Q.Push(t.UnixNano(), false, e) }

// event is what the world's queue holds: something that happens at a
// time. Most are closures (call); the answers the world gives on every
// round of the daemon (rpcAnswer, fetch, bcastMem) carry their state and
// their records' memory themselves, which a closure would allocate apart.
type event interface{ fire() }

// call is a closure as an event.
type call func()

func (f call) fire() { f() }

// fail stops the run: the world itself went wrong (not the daemon).
func (w *world) fail(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

// record stamps the daemon's records with its lifetime and keeps them.
func (w *world) record(e history.Event) {
	switch e.Kind {
	case history.KindProc, history.KindRPC, history.KindWS, history.KindSrc, history.KindWhite:
		e.Life = w.life
	}
	if e.At.IsZero() {
		e.At = w.now()
	}
	// The recorder and the checkers read the record during the call and
	// keep none of it by address, so one scratch copy serves every record
	// and e does not escape to the heap.
	w.scratch = e
	w.rec.AddRef(&w.scratch)
	if w.sink != nil {
		w.sink(&w.scratch)
	}
}

func (w *world) proc(p *history.Proc) { w.record(history.Event{Kind: history.KindProc, Proc: p}) }

func (w *world) ws(x *history.WS) { w.record(history.Event{Kind: history.KindWS, WS: x}) }

// ---- lifetimes ----

// start runs a new lifetime of the daemon.
func (w *world) start() {
	if (w.d != nil && !w.exited) || w.final {
		return
	}
	seed := streams.SubSeed(w.o.Seed, streamDaemon, uint64(w.life))
	d, err := w.o.System.New(w.cfg, tx.MemoSigner{Signer: keys.StandInSigner{Key: w.sut, Memo: &w.standIn}, Memo: &w.txMemo.Tx}, streams.NewRand(seed))
	if err != nil {
		w.fail(fmt.Errorf("lifetime %d: %w", w.life+1, err))
		return
	}
	w.d, w.life, w.conn, w.exited, w.subs, w.ports, w.stopping = d, w.life+1, 0, false, nil, 0, false
	w.wake, w.wakeUp = time.Time{}, &wake{w: w, d: d}
	w.proc(&history.Proc{Action: history.ProcStart, Detail: "in-process"})
	w.act(d, d.Start(w.now()))
}

// signal asks for a graceful stop (F18 and the final stop).
func (w *world) signal(sig string) {
	if w.d == nil || w.exited {
		return
	}
	w.proc(&history.Proc{Action: history.ProcSignal, Signal: sig})
	w.stopping, w.crashAt = true, 0 // F17 does not strike a stopping daemon
	w.handle(w.d, ports.Stop{})
}

// crash drops the daemon (F17): its memory is gone, its connection too.
func (w *world) crash(detail string) {
	if w.d == nil || w.exited || w.stopping {
		return
	}
	w.proc(&history.Proc{Action: history.ProcSignal, Signal: "crash", Detail: detail})
	w.proc(&history.Proc{Action: history.ProcExit, Status: 137})
	w.exited, w.conn, w.subs, w.crashAt = true, 0, nil, 0
	w.restart(w.f.restartIn)
}

// restart schedules the next lifetime after down, unless the run is
// ending.
func (w *world) restart(down time.Duration) {
	if !w.final {
		w.at(w.now().Add(down), w.start)
	}
}

// handle gives the daemon one input, unless it is no longer the live one.
func (w *world) handle(d ports.Daemon, in ports.Input) {
	if d != w.d || w.exited {
		return
	}
	w.act(d, d.Handle(w.now(), in))
}

// act carries out the daemon's outputs in order.
func (w *world) act(d ports.Daemon, outs []ports.Output) {
	for _, o := range outs {
		if w.exited || d != w.d {
			return
		}
		if isRequest(o) {
			w.ports++
			if w.crashAt > 0 && w.ports >= w.crashAt {
				w.crash("port call " + strconv.Itoa(w.ports))
				return
			}
		}
		w.output(d, o)
	}
	if w.exited || d != w.d {
		return
	}
	if at, ok := d.NextWake(); ok && !at.Equal(w.wake) {
		w.wake = at
		if at.Before(w.now()) {
			at = w.now()
		}
		w.atEvent(at, w.wakeUp) // d is w.d, whose wake-up it is
	}
}

func isRequest(o ports.Output) bool {
	switch o.(type) {
	case ports.Dial, ports.Subscribe, ports.UnsubscribeAll, ports.StatusCall, ports.QueryCall, ports.BroadcastCall, ports.Fetch:
		return true
	}
	return false
}

func (w *world) output(d ports.Daemon, o ports.Output) {
	switch o := o.(type) {
	case ports.Dial:
		w.dial(d, o)
	case ports.Subscribe:
		w.subscribe(d, o)
	case ports.UnsubscribeAll:
		w.ws(&history.WS{Conn: int64(o.Conn), Action: history.WSUnsubscribeAll})
		if o.Conn == w.conn {
			w.subs = nil
		}
		w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Reply{ID: o.ID}) })
	case ports.CloseConn:
		w.ws(&history.WS{Conn: int64(o.Conn), Action: history.WSClose, By: "client"})
		if w.conn == o.Conn {
			w.conn, w.subs = 0, nil
		}
	case ports.StatusCall:
		w.rpc(d, o.ID, o.Timeout, &history.RPC{Method: "status"}, func() (*history.RPCResult, ports.Reply) {
			res := w.chain.Status()
			return records.ResultOfStatus(res), ports.Reply{ID: o.ID, Status: &res}
		})
	case ports.QueryCall:
		w.query(d, o)
	case ports.BroadcastCall:
		w.broadcast(d, o)
	case ports.Fetch:
		w.get(d, o)
	case ports.AbortFetch:
		w.abortFetch(d, o.ID)
	case *ports.Trace:
		w.trace(o)
	case ports.Exit:
		w.proc(&history.Proc{Action: history.ProcExit, Status: o.Code})
		w.exited, w.conn, w.subs = true, 0, nil
		if o.Code != 0 {
			w.restart(restartAfter)
		} else {
			w.restart(w.f.restartIn)
		}
	}
}

func (w *world) dial(d ports.Daemon, o ports.Dial) {
	if w.f.refuseUntil.After(w.now()) {
		w.ws(&history.WS{Conn: int64(o.ID), Action: history.WSRefuse})
		w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Dialed{Conn: o.ID, Err: errRefused}) })
		return
	}
	w.conn, w.subs = o.ID, nil
	w.ws(&history.WS{Conn: int64(o.ID), Action: history.WSConnect})
	w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Dialed{Conn: o.ID}) })
}

func (w *world) subscribe(d ports.Daemon, o ports.Subscribe) {
	id := strconv.FormatUint(uint64(o.ID), 10)
	w.ws(&history.WS{Conn: int64(o.Conn), Action: history.WSSubscribe, Query: o.Query, ID: id})
	if o.Conn != w.conn {
		w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Reply{ID: o.ID, Err: errClosed}) })
		return
	}
	q, err := cometrpc.ParseQuery(o.Query)
	if err != nil {
		e := &cometrpc.RPCError{Code: -32603, Message: "Internal error", Data: err.Error()}
		w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Reply{ID: o.ID, RPCError: e}) })
		return
	}
	w.subs = append(w.subs, sub{query: o.Query, id: id, q: q})
	w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.Reply{ID: o.ID}) })
}

// rpc carries out one HTTP JSON-RPC call: its recv record now; then, unless
// F2 holds the server, serve gives the answer and its record's result
// (built now, delivered and recorded rpcLat later). Under F2 the call
// hangs: the daemon is told at its timeout and the record says the answer
// was lost.
func (w *world) rpc(d ports.Daemon, id ports.ID, timeout time.Duration, r *history.RPC, serve func() (*history.RPCResult, ports.Reply)) {
	w.rpcIn(&rpcAnswer{}, d, id, timeout, r, serve)
}

// rpcIn is rpc with the answer's memory in a (a caller that keeps the
// call's records and answer with it).
func (w *world) rpcIn(a *rpcAnswer, d ports.Daemon, id ports.ID, timeout time.Duration, r *history.RPC, serve func() (*history.RPCResult, ports.Reply)) {
	call := w.recv(r)
	if w.f.rpcOutage {
		w.lose(d, id, call, timeout)
		return
	}
	a.w, a.d, a.call, a.sent = w, d, call, w.now()
	a.res, a.reply = serve()
	w.atEvent(a.sent.Add(rpcLat), a)
}

// rpcAnswer is an RPC's answer on its way: its done record (and the
// record's memory) and the reply the daemon then gets.
type rpcAnswer struct {
	w     *world
	d     ports.Daemon
	call  int64
	sent  time.Time
	res   *history.RPCResult
	reply ports.Reply
	rec   history.RPC
}

func (a *rpcAnswer) fire() {
	a.w.doneIn(&a.rec, a.call, a.sent, a.res)
	a.w.handle(a.d, &a.reply)
}

// lose answers call with nothing: after wait (the client's timeout, or
// the moment the connection drops) the daemon is told no answer came.
func (w *world) lose(d ports.Daemon, id ports.ID, call int64, wait time.Duration) {
	sent := w.now()
	w.at(sent.Add(wait), func() {
		w.record(history.Event{Kind: history.KindRPC, RPC: &history.RPC{Call: call, Phase: history.PhaseDone, Lost: true,
			TRecv: sent}})
		w.handle(d, ports.Reply{ID: id, Err: errTimeout})
	})
}

func (w *world) recv(r *history.RPC) int64 {
	w.calls++
	r.Call, r.Phase = w.calls, history.PhaseRecv
	w.record(history.Event{Kind: history.KindRPC, RPC: r})
	return w.calls
}

// doneIn records the done record of call (received at recv) with result
// res, its payload in r (the memory of the exchange's event).
func (w *world) doneIn(r *history.RPC, call int64, recv time.Time, res *history.RPCResult) {
	*r = history.RPC{Call: call, Phase: history.PhaseDone, Result: res, TRecv: recv, TDelivered: w.now()}
	w.record(history.Event{Kind: history.KindRPC, RPC: r})
}

func (w *world) query(d ports.Daemon, o ports.QueryCall) {
	// The request decoded once, for the record and for the chain.
	req, err := abciquery.DecodeRequest(o.Path, o.Data)
	// The call's record, its query's, the chain's answer (handed to the
	// daemon by address) and its delivery in one allocation.
	mem := &struct {
		ans    rpcAnswer
		rpc    history.RPC
		q      history.Query
		res    cometrpc.ResultABCIQuery
		result history.RPCResult
		value  history.QueryValue
	}{}
	mem.rpc = history.RPC{Method: "abci_query",
		Query: records.QueryOfRequestIn(&mem.q, cometrpc.ABCIQueryParams{Path: o.Path, Data: o.Data}, req, err)}
	w.rpcIn(&mem.ans, d, o.ID, o.Timeout, &mem.rpc, func() (*history.RPCResult, ports.Reply) {
		if w.f.queryFail {
			mem.res = cometrpc.QueryFailed(oracle.Errorf(1, "internal error (F14)"), w.chain.Height())
		} else {
			mem.res = w.chain.ABCIQueryDecoded(req, err)
		}
		return records.ResultOfQueryIn(&mem.result, &mem.value, o.Path, mem.res), ports.Reply{ID: o.ID, Query: &mem.res}
	})
}

func (w *world) broadcast(d ports.Daemon, o ports.BroadcastCall) {
	// The call's record, its tx's, the chain's checktx record, the
	// chain's answer (handed to the daemon by address) and its delivery in
	// one allocation.
	mem := &bcastMem{w: w, d: d, id: o.ID}
	var decoded *tx.Tx
	var sum [32]byte
	mem.tx, decoded, sum = records.DecodeTxMemo(o.Tx, &w.txMemo)
	mem.rpc = history.RPC{Method: "broadcast_tx_sync", Tx: &mem.tx}
	call := w.recv(&mem.rpc)
	if w.f.rpcOutage {
		w.lose(d, o.ID, call, o.Timeout)
		return
	}
	mem.call = call
	mem.res, mem.rerr = w.chain.BroadcastTxSyncRecordedIn(o.Tx, decoded, sum, &mem.tx, &mem.room)
	res, rerr := &mem.res, mem.rerr
	if w.f.ambiguous && rerr == nil && res.Code == 0 {
		// F12: the tx is admitted, the answer never reaches the daemon.
		w.f.ambiguous = false
		// The connection drops before the answer (F12 is the dropped-connection
		// variant: docs/decisions/oracle-4-world.md, DR105), so the daemon learns at once.
		w.point("F12", "broadcast", param("call", strconv.FormatInt(call, 10)), param("mode", "connection dropped"))
		w.lose(d, o.ID, call, rpcLat)
		return
	}
	if w.f.crashAdmit && rerr == nil && res.Code == 0 {
		// F17 between admission and commit.
		w.f.crashAdmit = false
		w.at(w.now().Add(200*time.Millisecond), func() {
			if d == w.d {
				w.crash("after an admitted broadcast")
			}
		})
	}
	mem.sent = w.now()
	w.atEvent(mem.sent.Add(rpcLat), mem)
}

// bcastMem is a broadcast: its recv record and tx record, the chain's
// answer and, rpcLat later, its delivery with the done record.
type bcastMem struct {
	w    *world
	d    ports.Daemon
	id   ports.ID
	call int64
	sent time.Time
	rpc  history.RPC
	tx   history.Tx
	// room is room for the chain's checktx record of the tx and the
	// answer's hash bytes.
	room chain.BroadcastRoom
	res  cometrpc.ResultBroadcastTx
	rerr *cometrpc.RPCError
	done history.RPC
	// result is the done record's result (a successful answer's).
	result history.RPCResult
	reply  ports.Reply // handed to the daemon by address (see ports.Daemon)
}

func (m *bcastMem) fire() {
	w := m.w
	if m.rerr != nil {
		w.doneIn(&m.done, m.call, m.sent, records.ResultOfError(m.rerr))
		m.reply = ports.Reply{ID: m.id, RPCError: m.rerr}
		w.handle(m.d, &m.reply)
		return
	}
	w.doneIn(&m.done, m.call, m.sent, records.ResultOfBroadcastIn(&m.result, m.res, m.tx.Hash))
	m.reply = ports.Reply{ID: m.id, Broadcast: &m.res}
	w.handle(m.d, &m.reply)
}

var acceptJSON = []history.Header{{Name: "Accept", Value: "application/json"}, {Name: "User-Agent", Value: "Oracle-Daemon/1.0"}}

func (w *world) get(d ports.Daemon, o ports.Fetch) {
	// The fetch is reused once spent; the exchange's memory is not, as
	// its records are kept as long as the run's.
	f, x := w.spentFetches.get(), new(datasource.Exchange)
	*f = fetch{w: w, id: o.ID, out: w.src.GetIn(x, w.now(), o.URL, acceptJSON), x: x, d: d}
	w.fetches[o.ID] = f
	at := f.out.DoneAt
	if limit := w.now().Add(o.Timeout); at.After(limit) {
		at, f.timeout = limit, true
	}
	w.atEvent(at, f)
}

func (w *world) abortFetch(d ports.Daemon, id ports.ID) {
	f := w.fetches[id]
	if f == nil || f.ended {
		return
	}
	f.ended = true
	delete(w.fetches, id)
	w.src.AbortIn(f.x, f.out, w.now())
	w.at(w.now(), func() { w.handle(d, ports.Fetched{ID: id, Err: errors.New("oraclesim: aborted")}) })
}

// trace turns the reference's trace points into white records.
func (w *world) trace(o *ports.Trace) {
	var x *history.White
	switch o.Kind {
	case ports.TraceClose:
		x = &history.White{Point: history.WhiteClose, Name: o.Name}
	case ports.TraceStop:
		x = &history.White{Point: history.WhiteStop, Name: o.Name}
	case ports.TraceDrained:
		x = &history.White{Point: history.WhiteDrained}
	default:
		return
	}
	w.record(history.Event{Kind: history.KindWhite, White: x})
}

// ---- blocks and frames ----

// block produces the next block (unless F15 stalls the chain), delivers
// its frames to the daemon's subscriptions and plans the peers' rounds.
func (w *world) block() {
	w.at(w.now().Add(time.Second), w.block)
	if w.f.stall {
		return
	}
	b := w.chain.ProduceBlock(w.now())
	h := w.spentHolds.get()
	*h = blockHold{w: w, b: b, n: 1}
	for _, fr := range b.Frames {
		w.deliver(fr, h)
	}
	w.peersAfter(b)
	h.release()
}

// blockHold counts what still refers to a block's frames: the block
// itself until block is done with it, and each copy of a frame on its way
// to a subscription until it fired. The last to let go gives the block's
// memory back to the chain (chain.Recycle).
type blockHold struct {
	w *world
	b *chain.Block
	n int
}

func (h *blockHold) release() {
	if h.n--; h.n == 0 {
		h.w.chain.Recycle(h.b)
		h.w.spentHolds.put(h) // let go of by all
	}
}

// deliver hands a frame to every subscription of the live connection that
// matches it, through the frame faults in force (F3 drop, F4 duplicate,
// F5/F6 delay).
func (w *world) deliver(fr *chain.Frame, h *blockHold) {
	if w.conn == 0 || w.exited {
		return
	}
	for _, s := range w.subs {
		if !chain.Matches(s.q, fr) {
			continue
		}
		delay, copies, lag := w.frameFault(fr)
		for i := range copies {
			h.n++
			w.atEvent(w.now().Add(frameLat+delay+time.Duration(i)*lag),
				&frameOut{w: w, d: w.d, conn: w.conn, query: s.query, id: s.id, fr: fr, hold: h})
		}
	}
}

// frameOut is one copy of a frame on its way to a subscription (an
// event), with the memory of its ws and frame records: one allocation
// rather than three (a closure and two records) for a frame every block.
type frameOut struct {
	w         *world
	d         ports.Daemon
	conn      ports.ID
	query, id string
	fr        *chain.Frame
	hold      *blockHold // fr's block
	ws        history.WS
	frame     history.Frame
}

func (e *frameOut) fire() {
	w, d, conn, fr, h := e.w, e.d, e.conn, e.fr, e.hold
	// The records may be kept as long as the run: they must not keep the
	// daemon of a past lifetime, nor the frame, alive.
	e.w, e.d, e.fr, e.hold = nil, nil, nil, nil
	// The frame is read (into its record, whose map and strings are the
	// world's to keep) before its block may be recycled.
	defer h.release()
	if d != w.d || w.exited || conn != w.conn {
		return
	}
	rec := fr.RecordIn(&e.frame)
	if w.o.RaggedCompletes {
		rec.Events = ragged(rec.Events)
	}
	e.ws = history.WS{Conn: int64(conn), Action: history.WSFrame, Query: e.query, ID: e.id, Frame: rec}
	w.ws(&e.ws)
	w.handle(d, ports.Frame{Conn: conn, Query: e.query, Events: rec.Events})
}

// ragged is a Complete frame's events map with its block_time list one
// value longer (Options.RaggedCompletes); other maps are returned as they
// are. The frame's own map is shared and left alone.
func ragged(events map[string][]string) map[string][]string {
	bts := events[oracle.KeyCompleteBlockTime]
	if len(bts) == 0 {
		return events
	}
	out := maps.Clone(events)
	out[oracle.KeyCompleteBlockTime] = append(slices.Clip(bts), bts[len(bts)-1])
	return out
}

// closeByServer is F1: the server ends the connection.
func (w *world) closeByServer() {
	if w.conn == 0 || w.exited {
		return
	}
	d, conn := w.d, w.conn
	w.ws(&history.WS{Conn: int64(conn), Action: history.WSClose, By: "server"})
	w.conn, w.subs = 0, nil
	w.at(w.now().Add(rpcLat), func() { w.handle(d, ports.ConnClosed{Conn: conn, Err: errClosed}) })
}
