package sim

import (
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/invariant"
)

// Tally sums the checkers' reports over many runs: a checker is violated
// if any run violated it, passes if some run exercised it and none
// violated it, and is "not exercised" otherwise (non-vacuity,
// ARCHITECTURE principle 9).
type Tally struct {
	// Runs counts the reports added.
	Runs int
	// Exercised counts, per checker, its situations over every run.
	Exercised map[string]int
	// Violations counts, per checker, its violations; ViolatedRuns the
	// runs with at least one.
	Violations   map[string]int
	ViolatedRuns map[string]int
}

// NewTally returns an empty tally over every checker.
func NewTally() *Tally {
	t := &Tally{Exercised: map[string]int{}, Violations: map[string]int{}, ViolatedRuns: map[string]int{}}
	for _, n := range invariant.Names() {
		t.Exercised[n] += 0
	}
	return t
}

// Add counts one run's report (nil is ignored).
func (t *Tally) Add(r *invariant.Report) {
	if r == nil {
		return
	}
	t.Runs++
	for n, c := range r.Exercised {
		t.Exercised[n] += c
	}
	seen := map[string]bool{}
	for _, v := range r.Violations {
		t.Violations[v.Checker]++
		if !seen[v.Checker] {
			seen[v.Checker] = true
			t.ViolatedRuns[v.Checker]++
		}
	}
}

// Verdict is checker name's verdict over every run added.
func (t *Tally) Verdict(name string) invariant.Verdict {
	switch {
	case t.Violations[name] > 0:
		return invariant.Violated
	case t.Exercised[name] == 0:
		return invariant.NotExercise
	}
	return invariant.Pass
}

// NotExercised lists the checkers no run exercised, in report order.
func (t *Tally) NotExercised() []string {
	var out []string
	for _, n := range invariant.Names() {
		if t.Exercised[n] == 0 {
			out = append(out, n)
		}
	}
	return out
}

// ---- known issues -------------------------------------------------------

// KnownIssue names a weakness of the reference the judge found and that is
// reported but not yet fixed, with a test of whether a violation is an
// instance of it. Reports mark such violations; they still fail the run.
type KnownIssue struct {
	Name        string
	Description string
	match       func(v *invariant.Violation, events []history.Event) bool
}

// KnownIssues lists the known issues (none open). Add an entry when the
// judge finds a weakness of the reference that cannot be fixed at once, with
// a test that it still reproduces; remove it with the fix.
var KnownIssues []KnownIssue

// Known returns the name of the known issue violation v is an instance of
// in this run, or "".
func (s *Sim) Known(v invariant.Violation) string { return knownIssue(&v, s.rec.Events()) }

func knownIssue(v *invariant.Violation, events []history.Event) string {
	for _, k := range KnownIssues {
		if k.match(v, events) {
			return k.Name
		}
	}
	return ""
}
