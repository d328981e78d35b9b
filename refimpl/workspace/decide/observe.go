package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

// ObserveStatus is the observed_status rule of SPEC 4.1 (first match wins).
func ObserveStatus(deleted bool, o contracts.Observation) contracts.ObservedStatus {
	switch {
	case deleted && !o.ContainerExists && !o.VolumeExists:
		return contracts.ObservedDeleted
	case o.ContainerExists && o.ContainerRunning:
		return contracts.ObservedRunning
	case o.VolumeExists:
		return contracts.ObservedStandby
	}
	return contracts.ObservedPending
}

// ObserveHealth is the health_status rule of SPEC 4.1. setInfo, when non-nil,
// is the error_info the HealthMonitor must write first (the C3 exception:
// only when error_info is null).
func ObserveHealth(w *contracts.Workspace, o contracts.Observation, now time.Time) (h contracts.HealthStatus, setInfo *contracts.ErrorInfo) {
	if w.Terminal() {
		return contracts.HealthError, nil
	}
	if o.ContainerExists && !o.VolumeExists {
		if w.ErrorInfo == nil {
			setInfo = &contracts.ErrorInfo{
				Reason:     contracts.ReasonMismatch,
				Message:    "container exists without its volume",
				IsTerminal: true,
				Operation:  w.Operation,
				ErrorCount: w.ErrorCount,
				Context:    map[string]any{"violation": contracts.ViolationContainerWithoutVolume, "expected": "volume_exists=true", "actual": "false"},
				OccurredAt: now,
			}
		}
		return contracts.HealthError, setInfo
	}
	return contracts.HealthOK, nil
}

// ObservationPatch is the HealthMonitor's whole write for one workspace: the
// observed and health statuses, observed_at, and possibly the one-time
// error_info. The result always sets observed_at.
func ObservationPatch(w *contracts.Workspace, o contracts.Observation, now time.Time) contracts.Patch {
	h, info := ObserveHealth(w, o, now)
	p := contracts.Patch{ObservedAt: contracts.Some(now)}
	if s := ObserveStatus(w.Deleted(), o); s != w.ObservedStatus {
		p.ObservedStatus = contracts.Some(s)
	}
	if h != w.HealthStatus {
		p.HealthStatus = contracts.Some(h)
	}
	if info != nil {
		p.ErrorInfo = contracts.Some(info)
	}
	return p
}

// ObservesOnly reports whether ObservationPatch(w, o, now) sets observed_at
// and nothing else, without building the patch: the common case of a pass
// over a settled fleet.
func ObservesOnly(w *contracts.Workspace, o contracts.Observation) bool {
	if ObserveStatus(w.Deleted(), o) != w.ObservedStatus {
		return false
	}
	switch {
	case w.Terminal():
		return w.HealthStatus == contracts.HealthError
	case o.ContainerExists && !o.VolumeExists:
		return w.ErrorInfo != nil && w.HealthStatus == contracts.HealthError
	}
	return w.HealthStatus == contracts.HealthOK
}

// ObservationCond is the condition of the HealthMonitor's write of p (an
// ObservationPatch): one that sets error_info applies only while
// error_info is still null (C3's one exception never overwrites another
// component's error); any other write is unconditioned.
func ObservationCond(p contracts.Patch) contracts.Cond {
	return contracts.Cond{ErrorInfoNull: p.ErrorInfo.Set}
}
