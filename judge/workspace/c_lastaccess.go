package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// lastAccessForward: SPEC 4.4. "last_access_at only moves forward: it is
// stamped with the time of the completion it records, never with an
// earlier read." No applied write sets it earlier than the value it
// replaces (nor to null once set). A stamp from an earlier read makes the
// TTLs expire early: a workspace just started or restored is stopped or
// archived again at once.
//
// Evidence: every applied write and insert, and the row replayed before
// each. LastAccessSlack forgives commits of two stamps made within the
// same second landing in the opposite order (two API processes).
type lastAccessForward struct{ base }

// LastAccessSlack is how far back a stamp may land behind the value it
// replaces (commit reordering of concurrent stamps, not a stale read).
const LastAccessSlack = time.Second

func (*lastAccessForward) Name() string     { return "last-access-forward" }
func (*lastAccessForward) Contract() string { return "4.4" }
func (*lastAccessForward) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindWrite || !e.Applied || e.Patch == nil || !e.Patch.LastAccessAt.Set {
		return
	}
	before := s.Row(e.Workspace)
	if before == nil {
		return
	}
	r.Exercise()
	prev, to := before.LastAccessAt, e.Patch.LastAccessAt.V
	switch {
	case prev.IsZero():
	case to.IsZero():
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s cleared last_access_at (was %s)", writerOf(e), prev.UTC().Format(time.RFC3339)), e.Seq)
	case to.Before(prev.Add(-LastAccessSlack)):
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s moved last_access_at back by %s (from %s to %s)", writerOf(e), prev.Sub(to),
			prev.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339)), e.Seq)
	}
}

// writerOf names the writer of e ("API on behalf of StateReconciler").
func writerOf(e *history.Event) string {
	w := string(e.Component)
	if e.Args != "" {
		w += " " + e.Args
	}
	if w == "" {
		w = string(contracts.CompAPI)
	}
	return w
}
