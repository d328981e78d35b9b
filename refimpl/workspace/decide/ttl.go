package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

// StandbyTTLExpired is the standby TTL rule (SPEC 4.4): a healthy, idle,
// RUNNING workspace with no operation, no connection and no idle timer,
// untouched for longer than its standby TTL, should go to STANDBY.
func StandbyTTLExpired(w *contracts.Workspace, a contracts.Activity, now time.Time) bool {
	return !w.Deleted() &&
		w.ObservedStatus == contracts.ObservedRunning &&
		w.HealthStatus == contracts.HealthOK &&
		w.Operation == contracts.OpNone &&
		a.Connections <= 0 &&
		!a.IdleTimerSet &&
		now.Sub(w.LastAccessAt) > time.Duration(w.StandbyTTLSeconds)*time.Second
}

// ArchiveTTLExpired is the archive TTL rule (SPEC 4.4): a healthy STANDBY
// workspace with no operation, untouched for longer than its archive TTL,
// should be archived (desired PENDING).
func ArchiveTTLExpired(w *contracts.Workspace, now time.Time) bool {
	return !w.Deleted() &&
		w.ObservedStatus == contracts.ObservedStandby &&
		w.HealthStatus == contracts.HealthOK &&
		w.Operation == contracts.OpNone &&
		now.Sub(w.LastAccessAt) > time.Duration(w.ArchiveTTLSeconds)*time.Second
}

// TTLDue reports whether TTLDecision(w, a, now) can ask for a change for
// some activity a (SPEC 4.4). No activity is the one every other only
// restricts (the standby rule asks for no connection and no idle timer;
// the archive rule reads none), so it is the decision for no activity.
// The activity keys are worth reading only for a workspace it selects;
// for the others the decision is "no change" whatever they hold.
func TTLDue(w *contracts.Workspace, now time.Time) bool {
	_, ok := TTLDecision(w, contracts.Activity{}, now)
	return ok
}

// TTLDecision is the desired state the TTL Manager asks for, if any.
func TTLDecision(w *contracts.Workspace, a contracts.Activity, now time.Time) (contracts.DesiredState, bool) {
	switch {
	case StandbyTTLExpired(w, a, now):
		if w.DesiredState == contracts.DesiredStandby || w.DesiredState == contracts.DesiredPending {
			return "", false
		}
		return contracts.DesiredStandby, true
	case ArchiveTTLExpired(w, now):
		// Only a workspace its user left in STANDBY is archived: a newer
		// request to run it wins over the TTL.
		if w.DesiredState != contracts.DesiredStandby {
			return "", false
		}
		return contracts.DesiredPending, true
	}
	return "", false
}

// TTLNeedsActivity reports whether the TTL Manager's decision for w reads
// its activity keys at all: only the standby rule does, and only for a
// RUNNING workspace.
func TTLNeedsActivity(w *contracts.Workspace) bool {
	return w.ObservedStatus == contracts.ObservedRunning
}

// TTLNeedsIdleTimer reports whether, with the connection count of a read,
// the idle timer matters too: with a connection open the standby rule
// does not hold whatever the timer says (IdleTimerSet is left false).
func TTLNeedsIdleTimer(a contracts.Activity) bool { return a.Connections <= 0 }
