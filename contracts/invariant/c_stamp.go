package invariant

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// completionStamp: SPEC 4.2.2, the column "before clearing the
// operation": RESTORING, STARTING and STOPPING are completed only after
// the API service layer has stamped last_access_at = now. The stamp is
// what gives a workspace just started its standby TTL, and one just
// restored or stopped its archive TTL (SPEC 9); without it the TTL
// Manager reads the last_access_at of an earlier completion and stops or
// archives the workspace again at once.
//
// Judged at each applied completion of those operations (the write that
// clears the operation without an error): the row's last_access_at, or
// the one the completion itself writes, must be no earlier than the
// operation's op_started_at (less LastAccessSlack). Nothing else stamps
// the column after a claim, so an older value is the stamp of another
// operation.
type completionStamp struct{ base }

func (*completionStamp) Name() string     { return "completion-stamp" }
func (*completionStamp) Contract() string { return "4.2.2" }

func (*completionStamp) Observe(s *State, e *history.Event, r *Report) {
	if !reconcilerWrite(e) {
		return
	}
	row := s.Row(e.Workspace)
	p := e.Patch
	if row == nil || classify(row, p) != tComplete || (p.ErrorInfo.Set && p.ErrorInfo.V != nil) ||
		!contracts.StampsLastAccess(row.Operation) || row.OpStartedAt.IsZero() {
		return
	}
	r.Exercise()
	stamped := row.LastAccessAt
	if p.LastAccessAt.Set {
		stamped = p.LastAccessAt.V
	}
	if stamped.Before(row.OpStartedAt.Add(-LastAccessSlack)) {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed with last_access_at %s, older than the operation's start at %s: not stamped through the API service layer before the operation was cleared",
			row.Operation, stamp(stamped), stamp(row.OpStartedAt)), e.Seq)
	}
}
