package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// nowValues: every value SPEC defines as "now" is the time of the write
// that sets it, not an earlier read (SPEC 3, "now in a write"):
//
//   - last_access_at, at creation (4.3: "last_access_at = now") and in
//     every stamp (4.2.2: "the time of the completion, never an earlier
//     read"; 4.4: "each with the time of the event it records");
//   - op_started_at in a claim (4.2.2: "op_started_at = now");
//   - deleted_at in a soft delete (4.3: "deleted_at = now");
//   - observed_at (4.1: "the time of the pass"), in a row's observation
//     and in a pass that stamps rows it changed nothing else on (the
//     health.pass note's observed_at=…);
//   - error_info.occurred_at of a failure the reconciler records (4.2.4:
//     "occurred_at = now", the write that increments error_count) and of
//     the HealthMonitor's container-without-volume error (4.1).
//
// A value is the time of its write when it lies within NowSlack before
// it and not after it: an implementation may read its clock once at the
// start of a step. Under the simulator a step takes no virtual time, so
// the two are equal; a real-time runtime's step takes milliseconds. A
// lower bound alone is not enough: a stamp taken from an earlier read
// passes any bound a later write keeps.
type nowValues struct{ base }

// NowSlack is how long before its write a value SPEC defines as "now" may
// have been read: one step of a real-time runtime (SPEC 3).
const NowSlack = time.Second

func (*nowValues) Name() string     { return "now-values" }
func (*nowValues) Contract() string { return "3" }

// NoteObservedAtPrefix starts the Args of a health.pass note that names
// the observed_at its pass stamped.
const NoteObservedAtPrefix = "observed_at="

func (c *nowValues) Observe(s *State, e *history.Event, r *Report) {
	switch e.Kind {
	case history.KindInsert:
		if e.Err != "" || e.Row == nil || e.Component != contracts.CompAPI {
			return
		}
		c.judge(r, e, "last_access_at at creation (SPEC 4.3)", e.Row.LastAccessAt)
	case history.KindNote:
		if e.Method != NoteHealthPass {
			return
		}
		v, ok := strings.CutPrefix(e.Args, NoteObservedAtPrefix)
		if !ok {
			return
		}
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			c.judge(r, e, "observed_at of an observation pass (SPEC 4.1)", at)
		}
	case history.KindWrite:
		if !e.Applied || e.Patch == nil || e.Err != "" {
			return
		}
		before := s.Row(e.Workspace)
		if before == nil {
			return
		}
		p := e.Patch
		if p.LastAccessAt.Set && !p.LastAccessAt.V.IsZero() {
			c.judge(r, e, "last_access_at stamp (SPEC 4.2.2, 4.4)", p.LastAccessAt.V)
		}
		if p.OpStartedAt.Set && !p.OpStartedAt.V.IsZero() && classify(before, p) == tClaim && before.Operation == contracts.OpNone {
			c.judge(r, e, "op_started_at of the claim of "+string(p.Operation.V)+" (SPEC 4.2.2)", p.OpStartedAt.V)
		}
		if p.DeletedAt.Set && !p.DeletedAt.V.IsZero() && before.DeletedAt.IsZero() {
			c.judge(r, e, "deleted_at of a soft delete (SPEC 4.3)", p.DeletedAt.V)
		}
		if p.ObservedAt.Set && !p.ObservedAt.V.IsZero() {
			c.judge(r, e, "observed_at (SPEC 4.1)", p.ObservedAt.V)
		}
		if p.ErrorInfo.Set && p.ErrorInfo.V != nil && !sameInfo(p.ErrorInfo.V, before.ErrorInfo) {
			failure := e.Component == contracts.CompStateReconciler && p.ErrorCount.Set && p.ErrorCount.V > before.ErrorCount
			if failure || e.Component == contracts.CompHealthMonitor {
				c.judge(r, e, "error_info.occurred_at of a recorded failure (SPEC 4.2.4, 4.1)", p.ErrorInfo.V.OccurredAt)
			}
		}
	}
}

// judge holds v, a value SPEC defines as now, to the time of e.
func (*nowValues) judge(r *Report, e *history.Event, what string, v time.Time) {
	r.Exercise()
	switch {
	case v.IsZero():
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s is null; SPEC sets it to now (%s)", what, stamp(e.At)), e.Seq)
	case v.After(e.At):
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s is %s, after the write that sets it at %s: now is the writer's clock, not a time to come",
			what, v.UTC().Format(time.RFC3339Nano), e.At.UTC().Format(time.RFC3339Nano)), e.Seq)
	case v.Before(e.At.Add(-NowSlack)):
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s is %s, %s before the write that sets it at %s: now is the time of the write, never an earlier read",
			what, v.UTC().Format(time.RFC3339Nano), e.At.Sub(v), e.At.UTC().Format(time.RFC3339Nano)), e.Seq)
	}
}
