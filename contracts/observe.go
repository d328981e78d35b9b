package contracts

import "time"

// Observation is what the providers reported of one workspace's resources.
type Observation struct {
	ContainerExists  bool
	ContainerRunning bool
	VolumeExists     bool
}

// ObserveStatus is the observed_status rule of SPEC 4.1 (first match wins).
func ObserveStatus(deleted bool, o Observation) ObservedStatus {
	switch {
	case deleted && !o.ContainerExists && !o.VolumeExists:
		return ObservedDeleted
	case o.ContainerExists && o.ContainerRunning:
		return ObservedRunning
	case o.VolumeExists:
		return ObservedStandby
	}
	return ObservedPending
}

// ObserveHealth is the health_status rule of SPEC 4.1. setInfo, when non-nil,
// is the error_info the HealthMonitor must write first (the C3 exception:
// only when error_info is null).
func ObserveHealth(w *Workspace, o Observation, now time.Time) (h HealthStatus, setInfo *ErrorInfo) {
	if w.Terminal() {
		return HealthError, nil
	}
	if o.ContainerExists && !o.VolumeExists {
		if w.ErrorInfo == nil {
			setInfo = &ErrorInfo{
				Reason:     ReasonMismatch,
				Message:    "container exists without its volume",
				IsTerminal: true,
				Operation:  w.Operation,
				ErrorCount: w.ErrorCount,
				Context:    map[string]any{"violation": ViolationContainerWithoutVolume, "expected": "volume_exists=true", "actual": "false"},
				OccurredAt: now,
			}
		}
		return HealthError, setInfo
	}
	return HealthOK, nil
}

// ObservationPatch is the HealthMonitor's whole write for one workspace: the
// observed and health statuses, observed_at, and possibly the one-time
// error_info. The result always sets observed_at.
func ObservationPatch(w *Workspace, o Observation, now time.Time) Patch {
	h, info := ObserveHealth(w, o, now)
	p := Patch{ObservedAt: Some(now)}
	if s := ObserveStatus(w.Deleted(), o); s != w.ObservedStatus {
		p.ObservedStatus = Some(s)
	}
	if h != w.HealthStatus {
		p.HealthStatus = Some(h)
	}
	if info != nil {
		p.ErrorInfo = Some(info)
	}
	return p
}

// ObservesOnly reports whether ObservationPatch(w, o, now) sets observed_at
// and nothing else, without building the patch: the common case of a pass
// over a settled fleet.
func ObservesOnly(w *Workspace, o Observation) bool {
	if ObserveStatus(w.Deleted(), o) != w.ObservedStatus {
		return false
	}
	switch {
	case w.Terminal():
		return w.HealthStatus == HealthError
	case o.ContainerExists && !o.VolumeExists:
		return w.ErrorInfo != nil && w.HealthStatus == HealthError
	}
	return w.HealthStatus == HealthOK
}
