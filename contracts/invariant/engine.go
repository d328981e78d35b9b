package invariant

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Violation is one broken contract, with the events that prove it.
type Violation struct {
	Checker   string
	Contract  string
	Workspace string
	At        time.Time
	Message   string
	// Evidence are the sequence numbers of the events that prove it.
	Evidence []int64
}

func (v Violation) String() string {
	ws := ""
	if v.Workspace != "" {
		ws = " workspace " + v.Workspace
	}
	ev := make([]string, len(v.Evidence))
	for i, s := range v.Evidence {
		ev[i] = fmt.Sprintf("#%d", s)
	}
	return fmt.Sprintf("%s (%s) at %s%s: %s [events %s]", v.Contract, v.Checker, v.At.UTC().Format(time.RFC3339), ws, v.Message, strings.Join(ev, " "))
}

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
	Final  *Final
	// Limits the system ran with (default contracts.DefaultLimits).
	Limits contracts.Limits
}

// Checker judges one contract.
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

// Verdict of one checker.
type Verdict string

// Verdicts.
const (
	Pass        Verdict = "pass"
	Violated    Verdict = "violated"
	NotExercise Verdict = "not exercised"
)

// Report is the outcome of a check.
type Report struct {
	Violations []Violation
	// Exercised counts, per checker, how often its situation arose.
	Exercised map[string]int
	current   Checker
	limit     int
}

// MaxViolationsPerChecker caps a report (the first ones prove the point).
const MaxViolationsPerChecker = 20

// Flag records a violation by the running checker.
func (r *Report) Flag(ws string, at time.Time, msg string, evidence ...int64) {
	n := 0
	for i := range r.Violations {
		if r.Violations[i].Checker == r.current.Name() {
			n++
		}
	}
	if n >= MaxViolationsPerChecker {
		return
	}
	r.Violations = append(r.Violations, Violation{
		Checker: r.current.Name(), Contract: r.current.Contract(), Workspace: ws, At: at, Message: msg, Evidence: evidence,
	})
}

// Exercise counts one occurrence of the running checker's situation.
func (r *Report) Exercise() { r.Exercised[r.current.Name()]++ }

// Verdict is a checker's outcome in r.
func (r *Report) Verdict(name string) Verdict {
	for i := range r.Violations {
		if r.Violations[i].Checker == name {
			return Violated
		}
	}
	if r.Exercised[name] == 0 {
		return NotExercise
	}
	return Pass
}

// Failed reports whether any violation was found.
func (r *Report) Failed() bool { return len(r.Violations) > 0 }

// ByChecker returns the violations of one checker.
func (r *Report) ByChecker(name string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Checker == name {
			out = append(out, v)
		}
	}
	return out
}

// Check replays in through every checker.
func Check(in Input, checkers ...Checker) *Report {
	if len(checkers) == 0 {
		checkers = All()
	}
	r := &Report{Exercised: map[string]int{}}
	for _, c := range checkers {
		r.Exercised[c.Name()] += 0
		if l, ok := c.(*limits); ok && in.Limits.MaxRunningPerUser > 0 {
			l.Limits = in.Limits
		}
	}
	s := newState()
	for i := range in.Events {
		e := &in.Events[i]
		s.Now = e.At
		for _, c := range checkers {
			r.current = c
			c.Observe(s, e, r)
		}
		s.apply(e)
		for _, c := range checkers {
			if a, ok := c.(afterApplier); ok {
				r.current = c
				a.AfterApply(s, e, r)
			}
		}
	}
	if in.Final != nil {
		s.Now = in.Final.End
		for _, c := range checkers {
			r.current = c
			c.Finish(s, in.Final, r)
		}
	}
	r.current = nil
	sort.SliceStable(r.Violations, func(i, j int) bool { return r.Violations[i].At.Before(r.Violations[j].At) })
	return r
}

// All returns a fresh instance of every checker.
func All() []Checker {
	return []Checker{
		&completionObserved{},
		&singleWriter{},
		&nonPreemptive{},
		&oneLevel{},
		&containerVolume{},
		&archiveIdempotent{},
		&ordering{},
		&gcProtection{},
		&singleLeader{},
		&errorSkip{},
		&convergence{},
		&durability{},
		&retries{},
		&timeouts{},
		&ttlRules{},
		&limits{},
	}
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
