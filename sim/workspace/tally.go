package workspace

import (
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// Tally sums the checkers' reports over many runs (judge.Tally over the
// workspace checkers).
type Tally = judge.Tally

// NewTally returns an empty tally over every workspace checker.
func NewTally() *Tally { return judge.NewTally(wsjudge.Names()) }

// ---- known issues -------------------------------------------------------

// KnownIssue names a weakness of the reference the judge found and that is
// reported but not yet fixed, with a test of whether a violation is an
// instance of it. Reports mark such violations; they still fail the run.
type KnownIssue struct {
	Name        string
	Description string
	match       func(v *wsjudge.Violation, events []history.Event) bool
}

// KnownIssues lists the known issues (none open). Add an entry when the
// judge finds a weakness of the reference that cannot be fixed at once, with
// a test that it still reproduces; remove it with the fix.
var KnownIssues []KnownIssue

// Known returns the name of the known issue violation v is an instance of
// in this run, or "".
func (s *Sim) Known(v wsjudge.Violation) string { return knownIssue(&v, s.rec.Events()) }

func knownIssue(v *wsjudge.Violation, events []history.Event) string {
	for _, k := range KnownIssues {
		if k.match(v, events) {
			return k.Name
		}
	}
	return ""
}
