package workspace

import (
	"fmt"
	"strings"
	"time"

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
// it. For the stamp, its last_access_at must be the time of the
// completion write, within one step (NowSlack, SPEC 3 "now in a write"):
// a stamp of an earlier tick, or of another operation, is not the time of
// this completion.
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
	// SPEC 4.2.2: the stamp is "the time of the completion, never an
	// earlier read" (and SPEC 3's "now in a write"): exact within a step,
	// not bounded by the operation's start.
	if la := after.LastAccessAt; la.After(e.At) || la.Before(e.At.Add(-NowSlack)) {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed at %s with last_access_at %s (the operation started %s): the stamp before a completion is the time of the completion, within one step",
			row.Operation, e.At.UTC().Format(time.RFC3339Nano), stamp(la), stamp(row.OpStartedAt)), e.Seq)
	}
}
