package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Diverges reports whether a change notification leaves a healthy, idle
// workspace away from its desired state (or soft-deleted and not yet
// gone): a hint (C2) that brings the StateReconciler's next pass forward
// to now (SPEC 4.6).
func Diverges(ch *ports.Change) bool {
	if ch.Operation != contracts.OpNone || ch.HealthStatus != contracts.HealthOK || ch.ObservedStatus == contracts.ObservedDeleted {
		return false
	}
	return ch.Deleted || string(ch.ObservedStatus) != string(ch.DesiredState)
}

// Resyncs reports whether the EventListener, listening again after its
// last event at since, republishes w's current state: notifications sent
// while it did not listen are lost, so every workspace changed at or
// after since is published again (SPEC 4.6).
func Resyncs(w *contracts.Workspace, since time.Time) bool {
	return !w.UpdatedAt.Before(since)
}
