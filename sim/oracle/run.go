package oracle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/contracts/record"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
	"github.com/wsconverge/converge/internal/streams"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/wire/keys"
)

// Genesis is the chain's genesis time in every run.
var Genesis = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// The fixed identities of a run: the daemon's key and the moderator's.
var (
	sutKey = keys.PrivKeyFromSeed("oraclesim-sut")
	modKey = keys.PrivKeyFromSeed("oraclesim-moderator")
	// SelfAddress is the daemon's account address in every run.
	SelfAddress = sutKey.PubKey().Address()
)

// peerCount is how many peer providers a run has; each request draws
// 1–3 of them.
const peerCount = 4

// Options shape one run.
type Options struct {
	Seed uint64
	// System is the daemon under test (nil: the system registered as
	// ReferenceName).
	System System
	// Requests is how many requests are registered at genesis (0: 4).
	Requests int
	// FaultPhase is how long workload and faults go on (0: 6 min);
	// QuietPhase how long the quiet phase lasts (0: 4 min). The final
	// graceful stop follows, with a minute to finish.
	FaultPhase, QuietPhase time.Duration
	// Faults is how many faults the fault phase gets (0: 8; negative:
	// none). Ops is how many moderator actions (0: 6; negative: none).
	Faults, Ops int
	// PoolSize is worker.pool_size (0: the default, 4).
	PoolSize int

	// The world options below are off by default, so a default run (and
	// its history hash) is what it always was; each makes the world show
	// a situation a default run never does (see docs/oracle.md, Faults).
	//
	// PartialQuorums draws each request's quorum in 1 … its provider
	// count instead of all of them (ORACLE-SPEC 4.7: the moderator sets
	// the quorum), so the peers can complete a round without the daemon.
	// The quiet phase opens with a moderator update back to a quorum of
	// every provider, the shape liveness (O16) is judged in.
	PartialQuorums bool
	// LongReorder makes each F5 hold the next Complete frame for 35–65 s,
	// past the next round of any period, so a Complete reaches the daemon
	// after a later one (it ends 5 s before the quiet phase at the latest).
	LongReorder bool
	// LateDuplicates makes each F4 duplicate the next 1–3 moderator Tx
	// frames (Register, Update), the copy arriving 5–60 s after the
	// original: a Register repeated after its job ran.
	LateDuplicates bool
	// RaggedCompletes delivers every Complete frame with one value too
	// many in its block_time list (a repeated last value), as a node that
	// indexes an attribute twice would: ORACLE-SPEC 3.2 has the daemon use
	// the entries below the shortest of the three lists and count the
	// mismatch as an error, so a daemon that drops such a frame whole, or
	// reads past the shortest list, shows it.
	RaggedCompletes bool
	// Lean keeps only the records a checker needs (history's lean
	// recorder); the hash still covers every record.
	Lean bool
	// Keep keeps the records in the Result (for a timeline or a replay).
	Keep bool
	// Discard keeps no record at all (the checkers judge them as they
	// come and the hash covers them): long runs use it to bound memory.
	// It implies Lean's chain and wins over Keep.
	Discard bool
	// Steering, when set, is what coverage steering forced on for this
	// seed: fault kinds of the Catalogue (half the faults drawn among
	// them) and world shapes (SteerFeatures). A replay file records it.
	Steering *engine.Steering
}

func (o Options) withDefaults() Options {
	if o.System == nil {
		o.System, _ = Lookup(ReferenceName)
	}
	if o.Requests == 0 {
		o.Requests = 4
	}
	if o.FaultPhase == 0 {
		o.FaultPhase = 6 * time.Minute
	}
	if o.QuietPhase == 0 {
		o.QuietPhase = 4 * time.Minute
	}
	if o.Faults == 0 {
		o.Faults = 8
	}
	if o.Ops == 0 {
		o.Ops = 6
	}
	o, _ = o.steered()
	return o
}

// Result is one run: its history's hash, the checkers' report and which
// situations each met.
type Result struct {
	Seed   uint64
	System string
	// Hash is the hex XXH3-128 of the canonical encoding of every record
	// (record.Recorder.Hash).
	Hash     string
	Records  int64
	Report   *judge.Report
	Coverage map[string]map[string]int
	// SimTime is the simulated time the run covered.
	SimTime time.Duration
	// Events are the records, when Options.Keep was set.
	Events []history.Event
	// QuietFrom is when the quiet phase began.
	QuietFrom time.Time
	// Faults are the fault kinds drawn for the run, in Catalogue order.
	Faults []string
}

// Params are the checker parameters of a run with options o.
func Params(o Options) oraclejudge.Params {
	o = o.withDefaults()
	return oraclejudge.Params{Self: SelfAddress, PoolSize: o.PoolSize, Mode: oraclejudge.ModeSim, QuietFrom: Genesis.Add(o.FaultPhase)}
}

// Run runs one seed and judges it.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("oracle sim: %w", err)
	}
	o = o.withDefaults()
	w, err := newWorld(o)
	if err != nil {
		return nil, err
	}
	st, err := oraclejudge.NewStream(Params(o))
	if err != nil {
		return nil, fmt.Errorf("oracle sim: %w", err)
	}
	w.sink = st.Step
	end, err := w.run(ctx)
	if err != nil {
		return nil, err
	}
	res := &Result{Seed: o.Seed, System: o.System.Name(), Hash: w.rec.Hash(), Records: w.rec.Folded() + int64(w.rec.Len()),
		Report: st.Finish(), Coverage: st.Coverage(), SimTime: end.Sub(Genesis), QuietFrom: Genesis.Add(o.FaultPhase)}
	for _, id := range Catalogue {
		if w.drawn[id] {
			res.Faults = append(res.Faults, id)
		}
	}
	if o.Keep && !o.Discard {
		res.Events = w.rec.Events()
	}
	return res, nil
}

func newWorld(o Options) (*world, error) {
	if o.System == nil {
		return nil, fmt.Errorf("oracle sim: %w", errNoSystem)
	}
	w := &world{o: o, clk: clock{t: Genesis}, fetches: map[ports.ID]*fetch{}, sut: sutKey, self: SelfAddress, drawn: map[string]bool{}}
	w.loop.Clock = &w.clk
	w.loop.Dispatch = func(it *engine.Item[event]) { it.P.fire() }
	switch {
	case o.Discard:
		w.rec = record.NewRecorder(history.AppendEvent, func(e *history.Event, seq int64) { e.Seq = seq },
			func(*history.Event) bool { return false })
	case o.Lean:
		w.rec = history.NewLeanRecorder()
	default:
		w.rec = history.NewRecorder()
	}
	c, err := chain.New(chain.Config{Params: chain.DefaultParams(), Genesis: Genesis, Now: w.now, Sink: w.recordChain,
		Moderator: modKey, Accounts: []chain.Funding{{Address: SelfAddress}}, OmitRoutine: o.Lean || o.Discard,
		StandIn: &w.standIn})
	if err != nil {
		return nil, fmt.Errorf("oracle sim: chain: %w", err)
	}
	w.chain = c
	w.src = datasource.New(streams.SubSeed(o.Seed, streamSources), w.recordChain)
	for i := range peerCount {
		p, err := c.AddPeer(keys.PrivKeyFromSeed(fmt.Sprintf("oraclesim-peer-%d", i)), nil)
		if err != nil {
			return nil, fmt.Errorf("oracle sim: %w", err)
		}
		w.peers = append(w.peers, p)
	}
	w.cfg = oracle.DefaultConfig("/oraclesim")
	if o.PoolSize > 0 {
		w.cfg.Worker.PoolSize = o.PoolSize
	}
	if err := w.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("oracle sim: config: %w", err)
	}
	return w, nil
}

// recordChain keeps a record of the chain or the sources.
func (w *world) recordChain(e history.Event) { w.record(e) }

// run plays the whole run and returns when it ended.
func (w *world) run(ctx context.Context) (time.Time, error) {
	o := w.o
	wl := w.begin()
	quiet := Genesis.Add(o.FaultPhase)
	if o.Ops > 0 {
		for range o.Ops {
			at := Genesis.Add(10*time.Second + time.Duration(wl.Int64N(int64(o.FaultPhase-time.Minute))))
			seed := wl.Uint64()
			w.at(at, func() { w.operate(streams.NewRand(seed)) })
		}
	}
	if o.Faults > 0 {
		_, w.steered = o.steered()
		w.planFaults(streams.NewRand(streams.SubSeed(o.Seed, streamFaults)), o.Faults, Genesis.Add(20*time.Second), quiet.Add(-40*time.Second))
	}
	return w.finish(ctx, quiet)
}

// begin registers the requests of genesis and schedules the blocks and the
// daemon's start; it returns the workload stream.
func (w *world) begin() *rand.Rand {
	wl := streams.NewRand(streams.SubSeed(w.o.Seed, streamWorkload))
	for range w.o.Requests {
		w.register(wl)
	}
	w.at(Genesis.Add(time.Second), w.block)
	w.at(Genesis.Add(2500*time.Millisecond), w.start)
	return wl
}

// runUntil runs the world to t, stopping early when the world went wrong.
func (w *world) runUntil(ctx context.Context, t time.Time) error {
	if _, err := w.loop.RunUntil(ctx, t, func() bool { return w.err != nil }); err != nil {
		return fmt.Errorf("oracle sim seed %d: %w", w.o.Seed, err)
	}
	if w.err != nil {
		return fmt.Errorf("oracle sim seed %d: %w", w.o.Seed, w.err)
	}
	return nil
}

// finish plays the quiet phase from quiet, the final stop and the minute
// after it, and returns when the run ended.
func (w *world) finish(ctx context.Context, quiet time.Time) (time.Time, error) {
	stop := quiet.Add(w.o.QuietPhase)
	end := stop.Add(time.Minute)
	w.at(quiet, w.enterQuiet)
	w.at(stop, func() {
		w.final = true
		w.signal("SIGTERM")
	})
	if err := w.runUntil(ctx, end); err != nil {
		return time.Time{}, err
	}
	if !w.exited {
		return time.Time{}, fmt.Errorf("oracle sim seed %d: %w", w.o.Seed, errNoExit)
	}
	return end, nil
}

var errNoExit = errors.New("the daemon did not exit after the final stop")

// enterQuiet starts the quiet phase: the peers turn healthy and every open
// round of an ENABLED request gets its peers' submissions at once.
func (w *world) enterQuiet() {
	w.quiet = true
	w.f = faultState{}
	w.crashAt = 0
	if w.o.PartialQuorums {
		w.fullQuorums()
	}
	if w.chain.InjectionsLeft() > 0 { // an F11 not yet spent ends here
		if err := w.chain.InjectCheckTx(oracle.CodeOutOfGas, 0); err != nil {
			w.fail(err)
		}
	}
	if w.d == nil || w.exited {
		w.start()
	}
	for _, r := range w.reqs {
		w.planRound(r, w.chain.Nonce(r.id)+1, 0)
	}
}
