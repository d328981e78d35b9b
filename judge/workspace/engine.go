package workspace

import (
	"iter"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/judge"
)

// The report types are the shared judge's (package judge): a violation
// names its workspace as the Subject.
type (
	Violation = judge.Violation
	Report    = judge.Report
	Verdict   = judge.Verdict
)

// Verdicts.
const (
	Pass        = judge.Pass
	Violated    = judge.Violated
	NotExercise = judge.NotExercised
)

// MaxViolationsPerChecker caps a report (the first ones prove the point).
const MaxViolationsPerChecker = judge.MaxViolationsPerChecker

// Final is the world at the end of a run, for the end-of-run checks.
type Final struct {
	// End is the time the run ended.
	End time.Time
	// Rows is the final workspaces table.
	Rows []contracts.Workspace
	// Volumes holds each existing volume's files.
	Volumes map[string]map[string][]byte
	// Archives unpacks the archive at key into files, or fails (missing,
	// corrupt): the durability check reads archived data through it.
	Archives func(key string) (map[string][]byte, error)
	// Expected is the durability model: for each workspace, the files the
	// user last wrote (adjusted by the harness for data destroyed by
	// injected faults).
	Expected map[string]map[string][]byte
}

// Input is what the checkers judge.
type Input struct {
	Events []history.Event
	// Each, when set, hands the events to the checkers in order instead
	// of Events (a recorder's own, without copying them).
	Each  iter.Seq[*history.Event]
	Final *Final
	// Limits the system ran with (default contracts.DefaultLimits).
	Limits contracts.Limits
}

// Checker judges one contract of the workspace system.
type Checker interface {
	// Name is short and stable ("c4-non-preemptive").
	Name() string
	// Contract is the contract or rule it judges ("C4").
	Contract() string
	// Observe sees event e with the state just before it.
	Observe(s *State, e *history.Event, r *Report)
	// Finish runs after the last event, on the final state.
	Finish(s *State, f *Final, r *Report)
}

// Check replays in through every checker (all of them when none are
// given), on the shared judge.
func Check(in Input, checkers ...Checker) *Report {
	if len(checkers) == 0 {
		checkers = All()
	}
	adapted := make([]judge.Checker[*State, history.Event], len(checkers))
	for i, c := range checkers {
		if l, ok := c.(*limits); ok {
			l.Limits = in.Limits.OrDefaults()
		}
		if l, ok := c.(interface{ useLimits(contracts.Limits) }); ok {
			l.useLimits(in.Limits.OrDefaults())
		}
		adapted[i] = adapter{c, in.Final}
		if _, ok := c.(afterApplier); ok {
			adapted[i] = afterAdapter{adapter{c, in.Final}}
		}
	}
	if in.Each == nil {
		return judge.Run[*State, history.Event](world{}, newState(), in.Events, adapted)
	}
	st := judge.NewStream[*State, history.Event](world{}, newState(), adapted)
	for e := range in.Each {
		st.Step(e)
	}
	return st.Finish()
}

// world is the workspace world for the judge: the replayed state.
type world struct{}

func (world) Before(s *State, e *history.Event) { s.Now = e.At }
func (world) Apply(s *State, e *history.Event)  { s.apply(e) }

// adapter runs a workspace checker on the judge: its Finish gets the
// final world, when the run has one.
type adapter struct {
	Checker
	final *Final
}

// afterAdapter is an adapter for a checker that also sees the state just
// after each event.
type afterAdapter struct{ adapter }

func (a afterAdapter) AfterApply(s *State, e *history.Event, r *Report) {
	a.Checker.(afterApplier).AfterApply(s, e, r)
}

func (a adapter) Finish(s *State, r *Report) {
	if a.final != nil {
		s.Now = a.final.End
		a.Checker.Finish(s, a.final, r)
	}
}

// All returns a fresh instance of every checker.
func All() []Checker {
	return []Checker{
		&completionObserved{},
		&observationTruth{},
		&observedAt{},
		&singleWriter{},
		&nonPreemptive{},
		&oneLevel{},
		&operationChoice{},
		&containerVolume{},
		&archiveIdempotent{},
		&restoreMarker{},
		&ordering{},
		&gcProtection{},
		&gcPairs{},
		&gcOrphans{},
		&gcDue{},
		&singleLeader{},
		&writeEpoch{},
		&holderActs{},
		&takeover{},
		&fencing{},
		&leaseRecheck{},
		&errorSkip{},
		&convergence{},
		&durability{},
		&retries{},
		&timeouts{},
		&timeoutEntry{},
		&errorEntry{},
		&errorReason{kind: reasonCoded},
		&errorReason{kind: reasonNoCode},
		&errorReason{kind: reasonInUse},
		&errorContextCode{},
		&claimTimed{},
		&invokeOnce{},
		&ttlRules{},
		&ttlPeriod{},
		&lastAccessForward{},
		&completionStamp{},
		&nowValues{},
		&apiRules{},
		&limits{},
		&apiAnswers{},
		&events{},
		&periods{},
		&monitorTrigger{},
		&recoveryTrigger{},
		&triggerPass{},
		&giveUp{},
		&tickRows{},
		&stepBound{},
		&releaseCause{},
		&claimExecutes{},
		&reconcilePeriod{},
		&componentOrder{},
		&stepCheck{},
		&gcPeriod{},
		&passListing{},
		&dropsListener{},
		&skipsWorkspace{},
		&skipsTick{},
		&healthMismatchInfo{},
		&gcTimerNoExpiry{},
		&archivingOpID{},
		&healthRules{},
		&oneStep{},
		&idOrder{},
		&firstStep{},
		&firstStepRows{},
		&firstStepRows{ttl: true},
		&gcHourly{},
		&givesUpReleases{},
	}
}

// figurer is implemented by checkers that report figures.
type figurer interface {
	// Figures names the figures the checker reports (Report.Figure).
	Figures() []string
}

// FiguresOf names the figures c reports (none for most checkers).
func FiguresOf(c Checker) []string {
	if f, ok := c.(figurer); ok {
		return f.Figures()
	}
	return nil
}

// Names lists the checkers' names in report order.
func Names() []string {
	var out []string
	for _, c := range All() {
		out = append(out, c.Name())
	}
	return out
}

// afterApplier is implemented by checkers that also need the state just
// after an event.
type afterApplier interface {
	AfterApply(s *State, e *history.Event, r *Report)
}

// base gives checkers a default no-op Finish.
type base struct{}

func (base) Finish(*State, *Final, *Report) {}

// leftLead reports whether e shows its instance giving its leadership
// up: a failed lock check stops every component (SPEC 3.1), a release
// hands the lock back. Its session may still hold the lock, and its next
// try then takes it again under the same epoch, unrecorded.
func leftLead(e *history.Event) bool {
	return e.Kind == history.KindCall && (e.Method == MRelease || (e.Method == MLockCheck && e.Err != ""))
}

// tookLeadUnawares reports whether e is a lock try whose success a fault
// hid from its instance: it leads without knowing it until a later try
// returns the held lease.
func tookLeadUnawares(e *history.Event) bool {
	return e.Kind == history.KindFault && e.Method == FLostResp && e.Args == MTryAcquire
}

// reconcilerWrite reports whether e is an applied coordinator write of the
// StateReconciler.
func reconcilerWrite(e *history.Event) bool {
	return e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompStateReconciler
}

// transition classifies an applied write's effect on the operation column.
type transition int

const (
	tNone transition = iota
	tClaim
	tComplete
	tError
)

func classify(before *contracts.Workspace, p *contracts.Patch) transition {
	if before == nil || !p.Operation.Set || p.Operation.V == before.Operation {
		return tNone
	}
	switch {
	case p.Operation.V != contracts.OpNone:
		return tClaim
	case p.ErrorInfo.Set && p.ErrorInfo.V != nil && p.ErrorInfo.V.IsTerminal:
		return tError
	}
	return tComplete
}

// after returns a copy of before with p applied.
func after(before *contracts.Workspace, p *contracts.Patch, at time.Time) contracts.Workspace {
	a := before.Clone()
	p.Apply(&a, at)
	return a
}
