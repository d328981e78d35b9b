package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// TailLines is how many timeline lines a failing Result carries.
const TailLines = 40

// Result summarises a run.
type Result struct {
	Seed        uint64
	SimDuration time.Duration
	// Hash is the history's hash (record.Recorder.Hash): the run's determinism
	// fingerprint.
	Hash string
	// Events is the number of events recorded (kept or only hashed).
	Events int
	// OpsCompleted counts operations by kind: an applied write setting
	// operation NONE with error_info null after an operation X completes X.
	OpsCompleted map[contracts.Operation]int
	// Errors counts applied writes that set a terminal error_info.
	Errors int
	// Display counts the final rows by display state.
	Display map[contracts.DisplayState]int
	// APICalls counts calls made through the API (workload and scripts).
	APICalls int
	// Failures lists what went wrong: checks, nondeterminism, panics.
	Failures []string
	// Tail is the last TailLines lines of the timeline when Failures is
	// not empty.
	Tail []string
	// Report is the checkers' verdict on the whole run (nil when the run
	// was not judged: a panic, or the second run of Check).
	Report *wsjudge.Report
	// Evidence holds, for each of the first MaxEvidence violations of
	// Report, the timeline around its evidence (Sim.Evidence).
	Evidence [][]string
	// Known holds, for each violation of Report, the known issue it is an
	// instance of ("" for none; see KnownIssues).
	Known []string
	// Plan is the plan the run followed (faults and scripted actions).
	Plan *Plan
	// StateEdges and FaultEdges count the edges of the state-edge matrix
	// the run went through (see StateEdges and FaultEdges).
	StateEdges map[string]int
	FaultEdges map[string]int
}

// EvidenceAt is the timeline proving the report's i-th violation, and
// whether the result carries one (the first MaxEvidence only).
func (r *Result) EvidenceAt(i int) ([]string, bool) {
	if i < len(r.Evidence) {
		return r.Evidence[i], true
	}
	return nil, false
}

// MaxEvidence is how many violations a Result carries timelines for.
const MaxEvidence = 5

// OK reports whether the run had no failures and no contract violations.
func (r Result) OK() bool { return len(r.Failures) == 0 && (r.Report == nil || !r.Report.Failed()) }

// accounting follows operations through the history as it is recorded.
type accounting struct {
	cur    map[string]contracts.Operation
	ops    map[contracts.Operation]int
	errors int
}

func (a *accounting) init() {
	a.cur = map[string]contracts.Operation{}
	a.ops = map[contracts.Operation]int{}
}

func (a *accounting) add(e *history.Event) {
	switch {
	case e.Kind == history.KindInsert && e.Row != nil:
		if e.Row.Operation != contracts.OpNone {
			a.cur[e.Workspace] = e.Row.Operation
		}
		return
	case e.Kind != history.KindWrite || !e.Applied || e.Patch == nil:
		return
	}
	p := e.Patch
	if p.ErrorInfo.Set && p.ErrorInfo.V != nil && p.ErrorInfo.V.IsTerminal {
		a.errors++
	}
	if !p.Operation.Set {
		return
	}
	if p.Operation.V != contracts.OpNone {
		a.cur[e.Workspace] = p.Operation.V
		return
	}
	if prev, ok := a.cur[e.Workspace]; ok && p.ErrorInfo.Set && p.ErrorInfo.V == nil {
		a.ops[prev]++
	}
	delete(a.cur, e.Workspace)
}

// Result summarises the run so far and runs Config.Checks; their failures
// join those recorded with Fail.
func (s *Sim) Result() Result { return s.result(true) }

func (s *Sim) result(checks bool) Result {
	r := Result{
		Seed:         s.cfg.Seed,
		SimDuration:  s.Elapsed(),
		Hash:         s.rec.Hash(),
		Events:       s.rec.Len() + int(s.rec.ObservedAtWrites()),
		OpsCompleted: make(map[contracts.Operation]int, len(s.acct.ops)),
		Errors:       s.acct.errors,
		Display:      map[contracts.DisplayState]int{},
		APICalls:     s.apiCalls,
		Failures:     append([]string(nil), s.failures...),
		Plan:         s.plan.Clone(),
		StateEdges:   maps.Clone(s.edges.state),
		FaultEdges:   maps.Clone(s.edges.fault),
	}
	for op, n := range s.acct.ops {
		r.OpsCompleted[op] = n
	}
	for _, w := range s.world.Store.Snapshot() {
		r.Display[contracts.Display(&w)]++
	}
	if checks {
		for _, c := range s.cfg.Checks {
			r.Failures = append(r.Failures, c(s)...)
		}
		r.Report = s.Judge(true)
		var events []history.Event
		if len(r.Report.Violations) > 0 {
			events = s.rec.Events()
		}
		for i := range r.Report.Violations {
			v := &r.Report.Violations[i]
			r.Known = append(r.Known, knownIssue(v, events))
			if i < MaxEvidence {
				r.Evidence = append(r.Evidence, s.evidence(v, events))
			}
		}
	}
	if len(r.Failures) > 0 {
		r.Tail = s.Timeline(TailLines)
	}
	return r
}

// Run builds a run from cfg, simulates cfg.Duration and returns its
// Result. A panic in the system under test is reported as a failure of the
// run, not propagated; err is only for a run that could not be built or
// was cancelled.
func Run(ctx context.Context, cfg Config) (Result, error) {
	_, r, err := runOnce(ctx, cfg, true)
	return r, err
}

// Execute is Run that also hands back the finished simulation (for its
// history and timelines); the Sim is nil only when cfg could not be built.
func Execute(ctx context.Context, cfg Config) (*Sim, Result, error) {
	return runOnce(ctx, cfg, true)
}

func runOnce(ctx context.Context, cfg Config, checks bool) (s *Sim, r Result, err error) {
	s, err = New(cfg)
	if err != nil {
		return nil, Result{Seed: cfg.Seed}, err
	}
	s.ctx = ctx
	defer func() { s.ctx = context.Background() }()
	defer func() {
		if p := recover(); p != nil {
			s.Fail(fmt.Sprintf("panic at %s: %v\n%s", history.Offset(s.Elapsed()), p, debug.Stack()))
			r = s.result(false)
		}
	}()
	if err := s.RunFor(s.cfg.Duration); err != nil {
		return s, s.result(false), err
	}
	if s.cfg.Quiet > 0 {
		if err := s.BeginQuiet(); err != nil {
			return s, s.result(false), err
		}
		if err := s.RunFor(s.cfg.Quiet); err != nil {
			return s, s.result(false), err
		}
	}
	if err := s.world.Store.CheckIndex(); err != nil {
		s.Fail(err.Error()) // a harness bug, not the system's
	}
	return s, s.result(checks), nil
}

// ErrNondeterministic marks a seed whose two runs recorded different
// histories (engine.Twice's error).
var ErrNondeterministic = engine.ErrNondeterministic

// Runner is the workspace world as the engine drives it
// (engine.World): a run is an Execution.
type Runner struct{}

var _ engine.World[Config, Execution] = Runner{}

// Execution is one run: the finished simulation (nil when its
// configuration could not be built) and its Result.
type Execution struct {
	Sim    *Sim
	Result Result
}

// Seed is cfg's seed.
func (Runner) Seed(cfg Config) uint64 { return cfg.Seed }

// Run runs cfg once (Execute); a run that is not judged skips
// Config.Checks and the checkers.
func (Runner) Run(ctx context.Context, cfg Config, judged bool) (Execution, error) {
	s, r, err := runOnce(ctx, cfg, judged)
	return Execution{Sim: s, Result: r}, err
}

// Hash is the run's history hash.
func (Runner) Hash(x Execution) string { return x.Result.Hash }

// Violated lists the checkers x violates (Violated).
func (Runner) Violated(x Execution) []string { return Violated(x.Result) }

// Violated lists the checkers r violates, each once in report order, and
// engine.Failure for a harness failure.
func Violated(r Result) []string {
	var out []string
	if r.Report != nil {
		for _, v := range r.Report.Violations {
			if !slices.Contains(out, v.Checker) {
				out = append(out, v.Checker)
			}
		}
	}
	if len(r.Failures) > 0 {
		out = append(out, engine.Failure)
	}
	return out
}

// Check runs cfg twice (engine.Twice) and compares the history hashes. It
// returns the first run's Result, with a failure added when the hashes
// differ (naming the first event where the two histories part); err is
// non-nil when the run has any failure (nondeterminism, a check, a panic)
// or could not run.
func Check(ctx context.Context, cfg Config) (Result, error) {
	x1, x2, err := engine.Twice[Config, Execution](ctx, Runner{}, cfg)
	r1 := x1.Result
	if errors.Is(err, ErrNondeterministic) {
		r1.Failures = append(r1.Failures, fmt.Sprintf("%v: hashes %.12s and %.12s; %s",
			ErrNondeterministic, r1.Hash, x2.Result.Hash, divergence(x1.Sim, x2.Sim)))
		if r1.Tail == nil {
			r1.Tail = x1.Sim.Timeline(TailLines)
		}
		return r1, err
	}
	if err != nil {
		return r1, err
	}
	switch {
	case len(r1.Failures) > 0:
		return r1, fmt.Errorf("seed %d: %d failure(s), first: %s", cfg.Seed, len(r1.Failures), firstLine(r1.Failures[0]))
	case !r1.OK():
		return r1, fmt.Errorf("seed %d: %d contract violation(s), first: %s", cfg.Seed, len(r1.Report.Violations), r1.Report.Violations[0])
	}
	return r1, nil
}

// divergence describes the first kept event where two runs' histories
// differ. (The hash also covers observed_at-only writes, which are not
// kept; if the kept events agree, it says so.)
func divergence(a, b *Sim) string {
	ea, eb := a.rec.Events(), b.rec.Events()
	for i := 0; i < len(ea) && i < len(eb); i++ {
		la, lb := history.Line(ea[i], a.cfg.Start), history.Line(eb[i], b.cfg.Start)
		if la != lb {
			return "first difference:\n  run 1: " + la + "\n  run 2: " + lb
		}
	}
	if len(ea) != len(eb) {
		return fmt.Sprintf("run 1 kept %d events, run 2 kept %d", len(ea), len(eb))
	}
	return "the kept events render alike; the difference is in a field the timeline does not show or in an observed_at-only write"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
