package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// completionStamp: SPEC 4.2.2, what a completion writes. The column
// "before clearing the operation": RESTORING, STARTING and STOPPING are
// completed only after the API service layer has stamped last_access_at
// = now; ARCHIVING only with op_id = null. And the line under the table:
// "On completion: operation = NONE, op_started_at = null, error_count =
// 0, error_info = null."
//
// The stamp is what gives a workspace just started its standby TTL, and
// one just restored or stopped its archive TTL (SPEC 9); without it the
// TTL Manager reads the last_access_at of an earlier completion and stops
// or archives the workspace again at once. An op_id left behind would
// make the workspace's next ARCHIVING reuse it (4.2.2: "ensure op_id"),
// and with it the key of an archive already complete, which the storage
// side does not upload again (C7).
//
// Judged at each applied completion (the reconciler's write that clears
// the operation without setting an error): the row as the write leaves
// it. For the stamp, its last_access_at must be no earlier than the
// operation's op_started_at (less LastAccessSlack); nothing else stamps
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
	if row == nil || classify(row, p) != tComplete || (p.ErrorInfo.Set && p.ErrorInfo.V != nil) {
		return
	}
	r.Exercise()
	after := *row
	p.Apply(&after, e.At)
	var left []string
	if !after.OpStartedAt.IsZero() {
		left = append(left, "op_started_at "+stamp(after.OpStartedAt))
	}
	if after.ErrorCount != 0 {
		left = append(left, fmt.Sprintf("error_count %d", after.ErrorCount))
	}
	if after.ErrorInfo != nil {
		left = append(left, "error_info "+string(after.ErrorInfo.Reason))
	}
	if row.Operation == contracts.OpArchiving && after.OpID != "" {
		left = append(left, "op_id "+after.OpID)
	}
	if len(left) > 0 {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed leaving %s: a completion clears them (op_id too, for ARCHIVING)",
			row.Operation, strings.Join(left, ", ")), e.Seq)
	}
	if !specStampsLastAccess(row.Operation) || row.OpStartedAt.IsZero() {
		return
	}
	if after.LastAccessAt.Before(row.OpStartedAt.Add(-LastAccessSlack)) {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed with last_access_at %s, older than the operation's start at %s: not stamped through the API service layer before the operation was cleared",
			row.Operation, stamp(after.LastAccessAt), stamp(row.OpStartedAt)), e.Seq)
	}
}
