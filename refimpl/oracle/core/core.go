package core

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
)

// Metrics are the daemon's counters (ORACLE-SPEC 3.6).
type Metrics struct {
	EventsProcessed uint64 // frames handled by the event processor
	JobsCompleted   uint64 // successful executions
	TxSubmitted     uint64 // broadcasts answered code 0, code 19 or "already in cache"
	TotalErrors     uint64 // dropped frames, dropped events, failed checks
	HealthStatus    oracle.HealthStatus
}

// phase is where the daemon is in its life (§3.1, §3.7).
type phase int

const (
	phaseNew        phase = iota // before Start
	phaseConnecting              // step 2: dial and the status probe
	phaseStarting                // steps 3–5: subscriptions and the load
	phaseRunning                 // step 6: the loops run
	phaseStopping                // §3.7 in progress
	phaseExited                  // Exit emitted
)

// Core is the reference daemon as a single-threaded state machine. It is
// not safe for concurrent use: one driver goroutine (or the simulator's
// event loop) owns it.
type Core struct {
	cfg     oracle.Config
	signer  keys.Signer
	self    string
	rnd     ports.Rand
	timeout time.Duration // worker.timeout_sec

	now      time.Time
	phase    phase
	exited   bool
	exitCode int
	out      []ports.Output
	traces   []ports.Trace // the block traces are emitted from (see trace)

	nextID   ports.ID
	calls    uint64                   // Start and Handle calls so far
	pending  map[ports.ID]pendingCall // RPC calls awaiting their Reply
	timers   timerHeap
	timerSeq uint64

	metrics Metrics

	w   watcher
	ev  eventProcessor
	s   scheduler
	x   executor
	sub submitter
	seq sequencer
	rec reconciler
	hc  healthChecker
	sd  shutdown
}

var _ ports.Daemon = (*Core)(nil)

// New builds a core for a configuration (defaults applied and valid), a
// signer holding the provider's key, and the random source of the jitter.
// It does nothing until Start.
func New(cfg oracle.Config, signer keys.Signer, rnd ports.Rand) (*Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("oracled core: %w", err)
	}
	if signer == nil || signer.PubKey().IsZero() {
		return nil, fmt.Errorf("oracled core: %w", keys.ErrNoKey)
	}
	if rnd == nil {
		return nil, errors.New("oracled core: no random source")
	}
	c := &Core{
		cfg:     cfg,
		signer:  signer,
		self:    signer.PubKey().Address(),
		rnd:     rnd,
		timeout: cfg.WorkerTimeout(),
		pending: make(map[ports.ID]pendingCall),
	}
	c.metrics.HealthStatus = oracle.HealthInitializing
	c.s.init()
	c.x.init()
	return c, nil
}

// Self is the provider's account address.
func (c *Core) Self() string { return c.self }

// Metrics returns the counters.
func (c *Core) Metrics() Metrics { return c.metrics }

// Exited reports whether the core has emitted Exit, and its code.
func (c *Core) Exited() (code int, ok bool) { return c.exitCode, c.exited }

// Jobs returns a copy of every job, ascending by request id (for
// inspection; the core's decisions are its outputs).
func (c *Core) Jobs() []oracle.Job {
	jobs := make([]oracle.Job, 0, len(c.s.ordered))
	for _, j := range c.s.ordered {
		jobs = append(jobs, j.Clone())
	}
	return jobs
}

// AcceptsFrames reports whether the event processor would take a frame
// now: the daemon runs, no frame is being handled and none is queued. A
// production driver leaves frames in its bounded event channel until then,
// so a full channel stops the WebSocket reader (backpressure, D20). Frames
// handed over at any other time are queued, never dropped.
func (c *Core) AcceptsFrames() bool {
	return c.phase == phaseRunning && !c.ev.busy && len(c.ev.queue) == 0
}

// Start begins §3.1 at now: it dials the chain's WebSocket; the status
// probe follows once it is open.
func (c *Core) Start(now time.Time) []ports.Output {
	if c.phase != phaseNew {
		return nil
	}
	c.now = now
	c.calls++
	c.phase = phaseConnecting
	c.connect()
	c.fireDue()
	return c.flush()
}

// Handle feeds one input at now (never earlier than the previous call's
// time) and returns what the driver must do. Timers due by now fire first.
// The returned slice is valid until the next Start or Handle, whose
// outputs reuse its array: a driver acts on the outputs (or copies them)
// before it hands the core its next input.
func (c *Core) Handle(now time.Time, in ports.Input) []ports.Output {
	if c.phase == phaseNew || c.exited {
		return nil
	}
	if now.After(c.now) {
		c.now = now
	}
	c.calls++
	c.fireDue()
	if !c.exited {
		c.dispatch(in)
		c.fireDue()
	}
	return c.flush()
}

func (c *Core) dispatch(in ports.Input) {
	switch in := in.(type) {
	case ports.Dialed:
		c.onDialed(in)
	case ports.Reply:
		c.onReply(in)
	case *ports.Reply:
		c.onReply(*in)
	case *ports.Fetched:
		c.onFetched(*in)
	case ports.Frame:
		c.onFrame(in)
	case ports.ConnClosed:
		c.onConnClosed(in)
	case ports.Fetched:
		c.onFetched(in)
	case ports.Stop:
		c.beginShutdown(0, "stop requested")
	case ports.Wake:
	}
}

// flush returns the call's outputs (nil when none) and keeps their array
// for the next call's: a new slice for every call that emitted was 2 % of
// the oracle world's allocations.
func (c *Core) flush() []ports.Output {
	out := c.out
	if len(out) == 0 {
		return nil
	}
	c.out = out[:0]
	return out
}

func (c *Core) emit(o ports.Output) {
	if c.out == nil {
		// Room for a few: most calls emit several (a trace, a log, a
		// call).
		c.out = make([]ports.Output, 0, 8)
	}
	c.out = append(c.out, o)
}

func (c *Core) newID() ports.ID {
	c.nextID++
	return c.nextID
}

func (c *Core) log(level slog.Level, msg string, attrs ...slog.Attr) {
	c.emit(ports.Log{Level: level, Msg: msg, Attrs: attrs})
}

// trace emits t from a block of traces: a Trace in an Output was a heap
// copy of its own (a trace per job transition and per result handed on:
// 3 % of the oracle world's allocations). A block is never written again
// once full, so a trace stays as it was emitted.
func (c *Core) trace(t ports.Trace) {
	if len(c.traces) == cap(c.traces) {
		c.traces = make([]ports.Trace, 0, 32)
	}
	c.traces = append(c.traces, t)
	c.emit(&c.traces[len(c.traces)-1])
}

// countError counts one error in TotalErrors and logs it.
func (c *Core) countError(msg string, attrs ...slog.Attr) {
	c.metrics.TotalErrors++
	c.log(slog.LevelWarn, msg, attrs...)
}

// running reports whether the loops of §3.1 step 6 run (isRunning).
func (c *Core) running() bool { return c.phase == phaseRunning }

// stopping reports whether a shutdown has begun (or the core has exited).
func (c *Core) stopping() bool { return c.phase >= phaseStopping }

// call issues an RPC request and keeps fn for its Reply.
func (c *Core) call(o ports.Output, id ports.ID, fn func(ports.Reply)) {
	c.pending[id] = pendingCall{fn: fn}
	c.emit(o)
}

// pendingCall is what waits for one call's Reply: a callback, or, for the
// two calls every submission attempt makes (its on-chain check and its
// broadcast), the attempt as data, which costs no allocation per attempt
// (four closures a round were a tenth of the oracle world's allocations).
type pendingCall struct {
	fn   func(ports.Reply)
	kind pendingKind
	s    *submission // pendingCheck, pendingBroadcast
	used uint64      // pendingBroadcast: the sequence the tx carries
}

type pendingKind uint8

const (
	pendingCallback  pendingKind = iota // fn
	pendingCheck                        // s's on-chain check (D3)
	pendingBroadcast                    // s's broadcast with sequence used
)

// onReply hands a Reply to the call that waits for it, if one does.
func (c *Core) onReply(r ports.Reply) {
	if p, ok := c.pending[r.ID]; ok {
		delete(c.pending, r.ID)
		c.answer(p, r)
	}
}

// answer hands a Reply to what waits for it.
func (c *Core) answer(p pendingCall, r ports.Reply) {
	switch p.kind {
	case pendingCheck:
		submitted, err := c.submittedIn(queryValue(abciquery.PathSubmitData, r))
		c.onChainChecked(p.s, submitted, err)
	case pendingBroadcast:
		c.sub.broadcasting = false
		c.onBroadcastReply(p.s, p.used, r)
	default:
		p.fn(r)
	}
}

// popFront removes and returns the first of a queue, moving the rest to
// the front of its array: a queue resliced from its front reaches the end
// of its array and reallocates on the next append (a new array per
// selected execution and per queued result, 2 % of the oracle world's
// allocations). The queues are short; their order is the same.
func popFront[T any](q *[]T) T {
	s := *q
	v := s[0]
	n := copy(s, s[1:])
	var zero T
	s[n] = zero
	*q = s[:n]
	return v
}

// rpcTimeout is the reference's timeout for one RPC call (§2.8).
const rpcTimeout = oracle.RPCCallTimeout
