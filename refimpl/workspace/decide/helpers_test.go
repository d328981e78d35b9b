package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// t0 is the fixed instant every table test measures from.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// wsOpt changes one aspect of a test row.
type wsOpt func(*contracts.Workspace)

// row builds workspace "w1" of user "u1" at its schema defaults (observed
// PENDING, health OK, operation NONE, desired RUNNING) and applies opts.
func row(opts ...wsOpt) *contracts.Workspace {
	w := contracts.NewWorkspace("w1", "u1", "dev", "img:1", t0)
	w.LastAccessAt = t0
	for _, o := range opts {
		o(&w)
	}
	return &w
}

func withObserved(s contracts.ObservedStatus) wsOpt {
	return func(w *contracts.Workspace) { w.ObservedStatus = s }
}
func withHealth(h contracts.HealthStatus) wsOpt {
	return func(w *contracts.Workspace) { w.HealthStatus = h }
}
func withDesired(d contracts.DesiredState) wsOpt {
	return func(w *contracts.Workspace) { w.DesiredState = d }
}
func withDeleted() wsOpt               { return func(w *contracts.Workspace) { w.DeletedAt = t0 } }
func withArchiveKey(k string) wsOpt    { return func(w *contracts.Workspace) { w.ArchiveKey = k } }
func withOpID(id string) wsOpt         { return func(w *contracts.Workspace) { w.OpID = id } }
func withCount(n int) wsOpt            { return func(w *contracts.Workspace) { w.ErrorCount = n } }
func withOwner(u string) wsOpt         { return func(w *contracts.Workspace) { w.OwnerUserID = u } }
func withLastAccess(t time.Time) wsOpt { return func(w *contracts.Workspace) { w.LastAccessAt = t } }

// withOp sets the operation, started at t0.
func withOp(o contracts.Operation) wsOpt {
	return func(w *contracts.Workspace) {
		w.Operation = o
		w.OpStartedAt = t0
	}
}

// withOpStarted sets op_started_at.
func withOpStarted(t time.Time) wsOpt { return func(w *contracts.Workspace) { w.OpStartedAt = t } }

// withMarker sets home_ctx.restore_marker.
func withMarker(m string) wsOpt {
	return func(w *contracts.Workspace) { w.HomeCtx = &contracts.HomeCtx{RestoreMarker: m} }
}

// withError records an error_info of the given terminality at occurred.
func withError(terminal bool, occurred time.Time) wsOpt {
	return func(w *contracts.Workspace) {
		reason := contracts.ReasonActionFailed
		if terminal {
			reason = contracts.ReasonDataLost
		}
		w.ErrorInfo = &contracts.ErrorInfo{
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

// sec is n seconds.
func sec(n int) time.Duration { return time.Duration(n) * time.Second }

// requireColumns asserts that p assigns exactly cols (in table order).
func requireColumns(t *testing.T, p contracts.Patch, cols ...contracts.Column) {
	t.Helper()
	if len(cols) == 0 {
		cols = []contracts.Column{}
	}
	require.Equal(t, cols, p.Columns())
}

// requireAllowed asserts that writer c may make write p on before (C3).
func requireAllowed(t *testing.T, c contracts.Component, before *contracts.Workspace, p contracts.Patch) {
	t.Helper()
	ok, bad := contracts.WriteAllowed(contracts.Writer{Component: c}, before, &p)
	require.True(t, ok, "column %q refused for %s", bad, c)
}
