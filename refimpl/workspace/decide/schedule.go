package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

// Periods of the coordinator's components (SPEC 3).
const (
	PeriodBusy     = 2 * time.Second
	PeriodDiverged = 5 * time.Second
	PeriodIdle     = 30 * time.Second
	PeriodTTL      = 60 * time.Second
	PeriodGC       = time.Hour
)

// FleetSummary is what the adaptive period depends on.
type FleetSummary struct {
	// OperationsInProgress counts workspaces with operation != NONE.
	OperationsInProgress int
	// Diverged counts non-ERROR, non-deleted workspaces whose desired
	// state differs from the observed one.
	Diverged int
}

// Add accounts for one workspace row.
func (f *FleetSummary) Add(w *contracts.Workspace) {
	if w.ObservedStatus == contracts.ObservedDeleted {
		return
	}
	if w.Operation != contracts.OpNone {
		f.OperationsInProgress++
	}
	if w.HealthStatus == contracts.HealthOK && !w.Terminal() && !w.Deleted() && string(w.ObservedStatus) != string(w.DesiredState) {
		f.Diverged++
	}
}

// AdaptivePeriod is the HealthMonitor's and StateReconciler's period: 2 s
// while any operation is in progress, else 5 s while any healthy workspace
// diverges, else 30 s.
func AdaptivePeriod(f FleetSummary) time.Duration {
	switch {
	case f.OperationsInProgress > 0:
		return PeriodBusy
	case f.Diverged > 0:
		return PeriodDiverged
	}
	return PeriodIdle
}

// HealthAfterReconcile is when the HealthMonitor runs next, once a
// StateReconciler pass has set its own next run to nextReconcile: no later
// than the reconciler while an operation is in progress, so the completion
// it waits for is observed in time.
func HealthAfterReconcile(nextHealth, nextReconcile time.Time, f FleetSummary) time.Time {
	if f.OperationsInProgress > 0 && nextHealth.After(nextReconcile) {
		return nextReconcile
	}
	return nextHealth
}
