package workspace

import (
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// The judge's own reading of SPEC. Every rule and number a checker
// enforces is written here from SPEC's text rather than taken from the
// reference coordinator's decisions (refimpl/workspace/decide): a bug in
// one of those (a timeout shortened, a TTL rule bent, an archive left
// unprotected) must not blind the checker that should catch it.
// spec_test.go holds the two readings equal on every input shape, so
// where they part, a test fails; the judge never follows the reference
// quietly. The types (Workspace, Patch, the enums) and the
// replay of writes stay shared: they are the history's vocabulary.

// SPEC 4.2.4: at most three attempts, the next no sooner than 30 s after a
// failure.
const (
	specMaxAttempts   = 3
	specRetryInterval = 30 * time.Second
)

// SPEC C9, 4.5: an orphan is deleted after 2 h seen orphaned.
const specOrphanDelay = 2 * time.Hour

// SPEC 3: the HealthMonitor's adaptive periods.
const (
	specPeriodBusy     = 2 * time.Second
	specPeriodDiverged = 5 * time.Second
	specPeriodIdle     = 30 * time.Second
)

// SPEC 1.1: the TTL columns' defaults.
const (
	specDefaultStandbyTTL = 300
	specDefaultArchiveTTL = 86400
)

// specTimeout is SPEC 4.2.3's timeout of op (0 for NONE).
func specTimeout(op contracts.Operation) time.Duration {
	switch op {
	case contracts.OpProvisioning, contracts.OpStarting, contracts.OpStopping:
		return 5 * time.Minute
	case contracts.OpRestoring, contracts.OpArchiving:
		return 30 * time.Minute
	case contracts.OpDeleting:
		return 10 * time.Minute
	}
	return 0
}

// SPEC 1.4's names: archives/{workspace_id}/{op_id}/home.tar.zst, and its
// checksum object {archive}.meta.
const (
	specArchivePrefix = "archives/"
	specArchiveFile   = "home.tar.zst"
	specMetaSuffix    = ".meta"
)

func specArchiveKey(id, opID string) string {
	return specArchivePrefix + id + "/" + opID + "/" + specArchiveFile
}

func specOpPrefix(id, opID string) string { return specArchivePrefix + id + "/" + opID + "/" }

func specMetaKey(key string) string        { return key + specMetaSuffix }
func specIsMetaKey(key string) bool        { return strings.HasSuffix(key, specMetaSuffix) }
func specArchiveOfMeta(meta string) string { return strings.TrimSuffix(meta, specMetaSuffix) }
func specChannel(id string) string         { return "workspace:" + id }
func specStampsLastAccess(op contracts.Operation) bool {
	return op == contracts.OpRestoring || op == contracts.OpStarting || op == contracts.OpStopping
}

// specParseArchiveKey splits an object key under archives/{id}/{op_id}/
// into its workspace and op_id.
func specParseArchiveKey(key string) (id, opID string, ok bool) {
	rest, found := strings.CutPrefix(key, specArchivePrefix)
	if !found {
		return "", "", false
	}
	id, rest, found = strings.Cut(rest, "/")
	if !found || id == "" {
		return "", "", false
	}
	opID, rest, found = strings.Cut(rest, "/")
	if !found || opID == "" || rest == "" {
		return "", "", false
	}
	return id, opID, true
}

// specUnrestored is SPEC 4.2.1's amendment: a volume that does not hold
// its archive (archive_key set, restore_marker not equal to it).
func specUnrestored(w *contracts.Workspace) bool {
	return w.ArchiveKey != "" && w.RestoreMarker() != w.ArchiveKey
}

// specObserveStatus is SPEC 4.1's observed_status for a workspace (soft-
// deleted or not) given what the listings show: DELETED once a deleted
// workspace has neither container nor volume; RUNNING with a running
// container; STANDBY with a volume; PENDING otherwise.
func specObserveStatus(deleted bool, o contracts.Observation) contracts.ObservedStatus {
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

// specCompleted is SPEC 4.2.2's completion column: the condition, observed
// in the DB, under which the operation in progress completes.
func specCompleted(w *contracts.Workspace) bool {
	switch w.Operation {
	case contracts.OpProvisioning, contracts.OpStopping:
		return w.ObservedStatus == contracts.ObservedStandby
	case contracts.OpRestoring:
		return w.ObservedStatus == contracts.ObservedStandby && w.ArchiveKey != "" && w.RestoreMarker() == w.ArchiveKey
	case contracts.OpStarting:
		return w.ObservedStatus == contracts.ObservedRunning
	case contracts.OpArchiving:
		expected := w.OpID != "" && w.ArchiveKey == specArchiveKey(w.ID, w.OpID)
		return expected && (w.ObservedStatus == contracts.ObservedPending || (w.Deleted() && w.ObservedStatus == contracts.ObservedDeleted))
	case contracts.OpDeleting:
		return w.ObservedStatus == contracts.ObservedDeleted
	}
	return false
}

// specProtected is C9: for a workspace that is not soft-deleted, the
// archive at archive_key, anything under archives/{id}/{op_id}/ while
// op_id is set, and every archive of the workspace while its health is
// ERROR (a terminal error_info is ERROR too, 4.3) are protected; a .meta
// goes with its archive. A soft-deleted workspace, or none, protects
// nothing.
func specProtected(w *contracts.Workspace, key string) bool {
	if w == nil || w.Deleted() {
		return false
	}
	archive := key
	if specIsMetaKey(key) {
		archive = specArchiveOfMeta(key)
	}
	if w.ArchiveKey != "" && archive == w.ArchiveKey {
		return true
	}
	id, opID, ok := specParseArchiveKey(archive)
	if !ok || id != w.ID {
		return false
	}
	if w.OpID != "" && opID == w.OpID {
		return true
	}
	return w.HealthStatus == contracts.HealthError || w.Terminal()
}

// specTTL is SPEC 4.4 as amended: the standby TTL asks for STANDBY for a
// live, healthy RUNNING workspace at rest with no connection, no idle
// timer, untouched past standby_ttl_seconds, unless its desired state is
// already STANDBY or PENDING; the archive TTL asks for PENDING for one
// observed STANDBY, desired STANDBY, untouched past archive_ttl_seconds.
func specTTL(w *contracts.Workspace, a contracts.Activity, now time.Time) (contracts.DesiredState, bool) {
	want, ok := specTTLOfRow(w, now)
	if ok && want == contracts.DesiredStandby && (a.Connections > 0 || a.IdleTimerSet) {
		return "", false
	}
	return want, ok
}

// specTTLOfRow is specTTL before the activity keys: what the row alone
// allows. The activity can only hold a standby TTL off, so where this is
// false so is specTTL, whatever the keys say.
func specTTLOfRow(w *contracts.Workspace, now time.Time) (contracts.DesiredState, bool) {
	if w.Deleted() || w.HealthStatus != contracts.HealthOK || w.Operation != contracts.OpNone {
		return "", false
	}
	idle := now.Sub(w.LastAccessAt)
	switch w.ObservedStatus {
	case contracts.ObservedRunning:
		if idle <= time.Duration(w.StandbyTTLSeconds)*time.Second {
			return "", false
		}
		if w.DesiredState == contracts.DesiredStandby || w.DesiredState == contracts.DesiredPending {
			return "", false
		}
		return contracts.DesiredStandby, true
	case contracts.ObservedStandby:
		if idle <= time.Duration(w.ArchiveTTLSeconds)*time.Second || w.DesiredState != contracts.DesiredStandby {
			return "", false
		}
		return contracts.DesiredPending, true
	}
	return "", false
}

// specTerminalAtOnce reports whether a failed call's error names a
// provider code that SPEC 1.5 makes terminal at once: the DataLost codes
// and the three that need an administrator.
func specTerminalAtOnce(err string) bool {
	code, hasCode := specCodeOf(err)
	if specReasonOf(code, hasCode) == contracts.ReasonDataLost {
		return true
	}
	switch code {
	case "DISK_FULL", "CONTAINER_CREATE_FAILED", "VOLUME_NOT_FOUND": // an administrator's
		return true
	}
	return false
}

// specCodeOf reads the provider code a failed call's error begins with
// (SPEC 5: "CODE: message"); a code is upper-case letters, digits and
// underscores. hasCode is false for an error that carries none (a
// transport error).
func specCodeOf(err string) (code string, hasCode bool) {
	code, _, _ = strings.Cut(err, ":")
	code = strings.TrimSpace(code)
	if code == "" || code[0] < 'A' || code[0] > 'Z' {
		return "", false
	}
	for _, r := range code {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return "", false
		}
	}
	return code, true
}

// specReasonOf is SPEC 1.5's reason for a failure with code (hasCode) or
// without one.
func specReasonOf(code string, hasCode bool) contracts.Reason {
	if !hasCode {
		return contracts.ReasonUnreachable // "a provider failure that carries no code (a transport error)"
	}
	switch code {
	case "ARCHIVE_NOT_FOUND", "META_NOT_FOUND", "CHECKSUM_MISMATCH":
		return contracts.ReasonDataLost
	case "S3_ACCESS_ERROR", "K8S_API_ERROR", "DOCKER_UNREACHABLE":
		return contracts.ReasonUnreachable
	}
	// TAR_EXTRACT_FAILED … HEALTH_CHECK_FAILED, VOLUME_IN_USE, DISK_FULL,
	// CONTAINER_CREATE_FAILED, VOLUME_NOT_FOUND and any other code.
	return contracts.ReasonActionFailed
}

// specOwners is table 1.1's owner of each column a write may set.
var specOwners = map[contracts.Column]contracts.Component{
	contracts.ColName:              contracts.CompAPI,
	contracts.ColDescription:       contracts.CompAPI,
	contracts.ColMemo:              contracts.CompAPI,
	contracts.ColHomeCtx:           contracts.CompStateReconciler,
	contracts.ColObservedStatus:    contracts.CompHealthMonitor,
	contracts.ColHealthStatus:      contracts.CompHealthMonitor,
	contracts.ColObservedAt:        contracts.CompHealthMonitor,
	contracts.ColOperation:         contracts.CompStateReconciler,
	contracts.ColOpStartedAt:       contracts.CompStateReconciler,
	contracts.ColOpID:              contracts.CompStateReconciler,
	contracts.ColArchiveKey:        contracts.CompStateReconciler,
	contracts.ColErrorCount:        contracts.CompStateReconciler,
	contracts.ColErrorInfo:         contracts.CompStateReconciler,
	contracts.ColErrorMessage:      contracts.CompStateReconciler,
	contracts.ColPreviousStatus:    contracts.CompStateReconciler,
	contracts.ColDesiredState:      contracts.CompAPI,
	contracts.ColDeletedAt:         contracts.CompAPI,
	contracts.ColStandbyTTLSeconds: contracts.CompAPI,
	contracts.ColArchiveTTLSeconds: contracts.CompAPI,
	contracts.ColLastAccessAt:      contracts.CompAPI,
}

// specWriteAllowed is C3: every column a write sets belongs to its writer,
// with two exceptions: the HealthMonitor may set error_info once, while it
// is null, to the terminal Mismatch of a container without its volume
// (4.1); the administrator's recovery resets error_info, error_count and
// error_message, and writes nothing else (4.3).
func specWriteAllowed(w contracts.Writer, before *contracts.Workspace, p *contracts.Patch) (bool, contracts.Column) {
	for _, c := range p.Columns() {
		switch {
		case w.Component == contracts.CompAdmin:
			reset := c == contracts.ColErrorInfo && p.ErrorInfo.V == nil ||
				c == contracts.ColErrorCount && p.ErrorCount.V == 0 ||
				c == contracts.ColErrorMessage && p.ErrorMessage.V == ""
			if !reset {
				return false, c
			}
		case specOwners[c] == w.Component:
		case c == contracts.ColErrorInfo && w.Component == contracts.CompHealthMonitor &&
			before != nil && before.ErrorInfo == nil && p.ErrorInfo.V != nil &&
			p.ErrorInfo.V.Reason == contracts.ReasonMismatch && p.ErrorInfo.V.IsTerminal:
		default:
			return false, c
		}
	}
	return true, ""
}

// specFleet is what SPEC 3's adaptive period depends on: workspaces with
// an operation in progress, and healthy live ones whose desired state
// differs from the observed one (DELETED rows are past the HealthMonitor).
type specFleet struct{ busy, diverged int }

func (f *specFleet) add(w *contracts.Workspace) {
	if w.ObservedStatus == contracts.ObservedDeleted {
		return
	}
	if w.Operation != contracts.OpNone {
		f.busy++
	}
	if w.HealthStatus == contracts.HealthOK && !w.Terminal() && !w.Deleted() && string(w.ObservedStatus) != string(w.DesiredState) {
		f.diverged++
	}
}

// specCountsRunning is SPEC 4.3 as amended: a workspace counts toward the
// running limits while it is live and healthy and desired or observed
// RUNNING.
func specCountsRunning(w *contracts.Workspace) bool {
	return !w.Deleted() && w.HealthStatus == contracts.HealthOK &&
		(w.DesiredState == contracts.DesiredRunning || w.ObservedStatus == contracts.ObservedRunning)
}

// specLimits are SPEC 4.3's running limits: 2 per user, 100 in all,
// unless the run configures others.
func specLimits(l contracts.Limits) contracts.Limits {
	if l.MaxRunningPerUser <= 0 {
		l.MaxRunningPerUser = 2
	}
	if l.MaxRunningGlobal <= 0 {
		l.MaxRunningGlobal = 100
	}
	return l
}

// specMonitorTrigger is the channel that asks the HealthMonitor for a pass
// now (SPEC 4.3: recovery "publishes monitor:trigger").
const specMonitorTrigger = "monitor:trigger"
