package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// claimTimed: SPEC 4.2.3 (timeouts run "from op_started_at") and 4.2
// step 5. Every claim, the write that sets operation from NONE, sets
// op_started_at, so that the timeout of every operation can run: a claim
// that leaves it null starts an operation no timeout covers (the
// timeouts checker has nothing to count from either).
//
// And op_started_at is when the operation started: it is set by the claim
// and cleared when the operation ends (4.2.2 "On completion", 4.2.5), and
// nothing in between moves it. A write that clears it while the operation
// stays in progress leaves the operation without a timeout; one that sets
// it to another time (a leader that "restarts the clock" when
// it resumes, 4.2.2 "Resuming": a resume invokes the calls again, it does
// not start a new operation) restarts the operation's timeout, so an
// operation resumed at each failover never times out, and the timeouts
// checker, which counts from the column, is blinded with it.
//
// Evidence: the StateReconciler's applied writes and the row replayed
// before each.
type claimTimed struct{ base }

func (*claimTimed) Name() string     { return "claim-op-started-at" }
func (*claimTimed) Contract() string { return "4.2.3" }
func (*claimTimed) Observe(s *State, e *history.Event, r *Report) {
	if !reconcilerWrite(e) {
		return
	}
	before := s.Row(e.Workspace)
	if before != nil && before.Operation != contracts.OpNone && e.Patch.OpStartedAt.Set &&
		(!e.Patch.Operation.Set || e.Patch.Operation.V == before.Operation) {
		r.Exercise()
		switch v := e.Patch.OpStartedAt.V; {
		case !v.IsZero() && !v.Equal(before.OpStartedAt):
			r.Flag(e.Workspace, e.At, fmt.Sprintf("op_started_at of %s (started %s) rewritten to %s while it runs: its timeout starts again",
				before.Operation, before.OpStartedAt.UTC().Format(time.RFC3339), v.UTC().Format(time.RFC3339)), e.Seq)
		case v.IsZero() && !before.OpStartedAt.IsZero():
			r.Flag(e.Workspace, e.At, fmt.Sprintf("op_started_at of %s (started %s) cleared while it runs: no timeout covers it any more",
				before.Operation, before.OpStartedAt.UTC().Format(time.RFC3339)), e.Seq)
		}
		return
	}
	if classify(before, e.Patch) != tClaim || before.Operation != contracts.OpNone {
		return
	}
	r.Exercise()
	p := e.Patch
	switch {
	case !p.OpStartedAt.Set:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("claim of %s does not set op_started_at: no timeout covers it", p.Operation.V), e.Seq)
	case p.OpStartedAt.V.IsZero():
		r.Flag(e.Workspace, e.At, fmt.Sprintf("claim of %s sets op_started_at to null: no timeout covers it", p.Operation.V), e.Seq)
	}
}
