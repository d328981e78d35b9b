package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// completionObserved: C1. An operation completes only when the DB's last
// observation satisfies its completion condition.
type completionObserved struct{ base }

func (*completionObserved) Name() string     { return "c1-completion-observed" }
func (*completionObserved) Contract() string { return "C1" }
func (*completionObserved) Observe(s *State, e *history.Event, r *Report) {
	if !reconcilerWrite(e) {
		return
	}
	before := s.Row(e.Workspace)
	if classify(before, e.Patch) != tComplete {
		return
	}
	r.Exercise()
	if !specCompleted(before) {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed but the last observation (observed %s, archive_key %q, restore_marker %q) does not satisfy it",
			before.Operation, before.ObservedStatus, before.ArchiveKey, before.RestoreMarker()), e.Seq)
	}
}

// singleWriter: C3. Every column is written by its owner only, with the
// two exceptions.
type singleWriter struct{ base }

func (*singleWriter) Name() string     { return "c3-single-writer" }
func (*singleWriter) Contract() string { return "C3" }
func (*singleWriter) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind == history.KindInsert && e.Row != nil {
		r.Exercise()
		if e.Component != contracts.CompAPI {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("row inserted by %s, not the API", e.Component), e.Seq)
		}
		return
	}
	if e.Kind != history.KindWrite || !e.Applied || e.Patch == nil {
		return
	}
	r.Exercise()
	w := contracts.Writer{Component: e.Component, Instance: e.Instance, Epoch: e.Epoch}
	if ok, col := specWriteAllowed(w, s.Row(e.Workspace), e.Patch); !ok {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s wrote %s, which it does not own", e.Component, col), e.Seq)
	}
}

// nonPreemptive: C4. No claim while an operation runs, claims by
// compare-and-set, and no desired-state change or delete through the API
// while one runs.
type nonPreemptive struct{ base }

func (*nonPreemptive) Name() string     { return "c4-non-preemptive" }
func (*nonPreemptive) Contract() string { return "C4" }
func (*nonPreemptive) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindWrite || e.Patch == nil {
		return
	}
	before := s.Row(e.Workspace)
	if before == nil {
		return
	}
	p := e.Patch
	if e.Component == contracts.CompStateReconciler && p.Operation.Set && p.Operation.V != contracts.OpNone && p.Operation.V != before.Operation {
		r.Exercise()
		if e.Cond == nil || !e.Cond.Operation.Set || e.Cond.Operation.V != contracts.OpNone {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("claim of %s without compare-and-set on operation = NONE", p.Operation.V), e.Seq)
		}
		if e.Applied && before.Operation != contracts.OpNone {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("claimed %s while %s was in progress", p.Operation.V, before.Operation), e.Seq)
		}
	}
	if e.Applied && e.Component == contracts.CompAPI && before.Operation != contracts.OpNone {
		if p.DesiredState.Set && p.DesiredState.V != before.DesiredState {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("desired_state changed to %s while %s was in progress", p.DesiredState.V, before.Operation), e.Seq)
		}
		if p.DeletedAt.Set && !before.Deleted() {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("deleted while %s was in progress", before.Operation), e.Seq)
		}
	}
}

// oneLevel: C5. Every operation starts from the level below or above its
// target and ends exactly one level away.
type oneLevel struct{ base }

func (*oneLevel) Name() string     { return "c5-one-level" }
func (*oneLevel) Contract() string { return "C5" }

// claimFrom lists the observed statuses each operation may start from.
var claimFrom = map[contracts.Operation][]contracts.ObservedStatus{
	contracts.OpProvisioning: {contracts.ObservedPending},
	contracts.OpRestoring:    {contracts.ObservedPending, contracts.ObservedStandby}, // STANDBY: an unrestored volume (docs/decisions/workspaces-4.2-reconciler.md, DR15)
	contracts.OpStarting:     {contracts.ObservedStandby},
	contracts.OpStopping:     {contracts.ObservedRunning},
	contracts.OpArchiving:    {contracts.ObservedStandby},
	contracts.OpDeleting:     {contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning},
}

// endAt lists the observed statuses each operation may complete at.
var endAt = map[contracts.Operation][]contracts.ObservedStatus{
	contracts.OpProvisioning: {contracts.ObservedStandby},
	contracts.OpRestoring:    {contracts.ObservedStandby},
	contracts.OpStarting:     {contracts.ObservedRunning},
	contracts.OpStopping:     {contracts.ObservedStandby},
	contracts.OpArchiving:    {contracts.ObservedPending, contracts.ObservedDeleted},
	contracts.OpDeleting:     {contracts.ObservedDeleted},
}

func in(s contracts.ObservedStatus, set []contracts.ObservedStatus) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func (*oneLevel) Observe(s *State, e *history.Event, r *Report) {
	if !reconcilerWrite(e) {
		return
	}
	before := s.Row(e.Workspace)
	switch classify(before, e.Patch) {
	case tClaim:
		r.Exercise()
		op := e.Patch.Operation.V
		if !in(before.ObservedStatus, claimFrom[op]) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s claimed from observed %s: not one level away from its target", op, before.ObservedStatus), e.Seq)
		}
		if op == contracts.OpArchiving && before.DesiredState == contracts.DesiredPending && before.ObservedStatus == contracts.ObservedRunning {
			r.Flag(e.Workspace, e.At, "RUNNING → PENDING in one step", e.Seq)
		}
	case tComplete:
		a := after(before, e.Patch, e.At)
		if !in(a.ObservedStatus, endAt[before.Operation]) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s completed at observed %s", before.Operation, a.ObservedStatus), e.Seq)
		}
	}
}

// errorSkip: C11. Nothing but DELETING starts on a workspace in ERROR; the
// ERROR entry resets operation and keeps op_id; 4.2.5: it records
// "previous_status = observed_status". The observed status a reconciler
// read may be older than the row it writes (the HealthMonitor writes in
// between), so the entry may record any observed status the row held
// since the operation's claim, from the one it was claimed at.
type errorSkip struct {
	base
	inError map[string]bool
	// seen: the observed statuses each workspace held since its last
	// claim (a bit per status).
	seen map[string]uint8
}

func observedBit(o contracts.ObservedStatus) uint8 {
	switch o {
	case contracts.ObservedPending:
		return 1
	case contracts.ObservedStandby:
		return 2
	case contracts.ObservedRunning:
		return 4
	case contracts.ObservedDeleted:
		return 8
	}
	return 0
}

func (*errorSkip) Name() string     { return "c11-error-skip" }
func (*errorSkip) Contract() string { return "C11" }

func erroneous(w *contracts.Workspace) bool {
	return w != nil && (w.HealthStatus == contracts.HealthError || w.Terminal())
}

func (c *errorSkip) Observe(s *State, e *history.Event, r *Report) {
	if c.inError == nil {
		c.inError, c.seen = map[string]bool{}, map[string]uint8{}
	}
	before := s.Row(e.Workspace)
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && before != nil {
		if reconcilerWrite(e) && classify(before, e.Patch) == tClaim {
			c.seen[e.Workspace] = observedBit(before.ObservedStatus)
		}
		if e.Patch.ObservedStatus.Set {
			c.seen[e.Workspace] |= observedBit(e.Patch.ObservedStatus.V)
		}
	}
	switch {
	case e.Kind == history.KindNote && e.Method == NoteHealthPass:
		if len(c.inError) > 0 {
			r.Exercise()
		}
	case reconcilerWrite(e) && before != nil:
		switch classify(before, e.Patch) {
		case tClaim:
			if erroneous(before) && e.Patch.Operation.V != contracts.OpDeleting {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("%s claimed on a workspace in ERROR (%s)", e.Patch.Operation.V, errText(before)), e.Seq)
			}
		case tError:
			if e.Patch.OpID.Set && e.Patch.OpID.V != before.OpID {
				r.Flag(e.Workspace, e.At, "entering ERROR changed op_id (it protects the archive)", e.Seq)
			}
			if !e.Patch.PreviousStatus.Set {
				r.Flag(e.Workspace, e.At, "entering ERROR did not record previous_status", e.Seq)
			} else if seen, ok := c.seen[e.Workspace]; ok && e.Patch.PreviousStatus.V != before.ObservedStatus && observedBit(e.Patch.PreviousStatus.V)&seen == 0 {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("entering ERROR recorded previous_status %s, a status the workspace was not observed in since %s was claimed (observed %s): previous_status = observed_status",
					e.Patch.PreviousStatus.V, before.Operation, before.ObservedStatus), e.Seq)
			}
		}
	case e.Kind == history.KindCall && Mutating(e.Method) && e.Method != MObjDelete && before != nil && s.Leader.EpochOf[e.Instance] > 0:
		// (The GC's object deletes are no operation: C9 judges them, and
		// a soft-deleted workspace, whose health may stay ERROR, protects
		// none of its archives.)
		if erroneous(before) && before.Operation != contracts.OpDeleting {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s called on a workspace in ERROR (%s)", e.Method, errText(before)), e.Seq)
		}
	}
	if e.Kind == history.KindWrite && e.Applied && before != nil {
		a := after(before, e.Patch, e.At)
		if erroneous(&a) && !a.Deleted() && a.ObservedStatus != contracts.ObservedDeleted {
			c.inError[e.Workspace] = true
		} else {
			delete(c.inError, e.Workspace)
		}
	}
}

func errText(w *contracts.Workspace) string {
	if w.ErrorInfo == nil {
		return "health " + string(w.HealthStatus)
	}
	return string(w.ErrorInfo.Reason) + ": " + w.ErrorInfo.Message
}

// NoteHealthPass is the note a store records after each HealthMonitor
// pass (MarkObserved): proof that a full observation pass happened.
const NoteHealthPass = history.NoteHealthPass
