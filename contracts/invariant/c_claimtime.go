package invariant

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// claimTimed: SPEC 4.2.3 (timeouts run "from op_started_at") and 4.2
// step 5. Every claim, the write that sets operation from NONE, sets
// op_started_at, so that the timeout of every operation can run: a claim
// that leaves it null starts an operation no timeout covers (the
// timeouts checker has nothing to count from either).
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
