package contracts

import (
	"time"
)

// t0 is the fixed instant every table test measures from.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// wsOpt changes one aspect of a test row.
type wsOpt func(*Workspace)

// row builds workspace "w1" of user "u1" at its schema defaults (observed
// PENDING, health OK, operation NONE, desired RUNNING) and applies opts.
func row(opts ...wsOpt) *Workspace {
	w := NewWorkspace("w1", "u1", "dev", "img:1", t0)
	w.LastAccessAt = t0
	for _, o := range opts {
		o(&w)
	}
	return &w
}

func withObserved(s ObservedStatus) wsOpt { return func(w *Workspace) { w.ObservedStatus = s } }
func withHealth(h HealthStatus) wsOpt     { return func(w *Workspace) { w.HealthStatus = h } }
func withDesired(d DesiredState) wsOpt    { return func(w *Workspace) { w.DesiredState = d } }
func withDeleted() wsOpt                  { return func(w *Workspace) { w.DeletedAt = t0 } }
func withArchiveKey(k string) wsOpt       { return func(w *Workspace) { w.ArchiveKey = k } }
func withOpID(id string) wsOpt            { return func(w *Workspace) { w.OpID = id } }
func withOwner(u string) wsOpt            { return func(w *Workspace) { w.OwnerUserID = u } }

// withOp sets the operation, started at t0.
func withOp(o Operation) wsOpt {
	return func(w *Workspace) {
		w.Operation = o
		w.OpStartedAt = t0
	}
}

// withMarker sets home_ctx.restore_marker.
func withMarker(m string) wsOpt {
	return func(w *Workspace) { w.HomeCtx = &HomeCtx{RestoreMarker: m} }
}

// withError records an error_info of the given terminality at occurred.
func withError(terminal bool, occurred time.Time) wsOpt {
	return func(w *Workspace) {
		reason := ReasonActionFailed
		if terminal {
			reason = ReasonDataLost
		}
		w.ErrorInfo = &ErrorInfo{
			Reason:     reason,
			Message:    "boom",
			IsTerminal: terminal,
			Operation:  w.Operation,
			ErrorCount: w.ErrorCount,
			Context:    map[string]any{"code": "X"},
			OccurredAt: occurred,
		}
		w.ErrorMessage = "boom"
	}
}

// withTerminal records a terminal error_info at t0.
func withTerminal() wsOpt { return withError(true, t0) }
