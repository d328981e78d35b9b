package acme

import (
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// This file holds acme's decisions as pure functions of a row (and the
// time): which operation to start, when one is complete, how long it may
// take, how an error is classified, when a TTL fires, what the GC must
// keep. The components in the other files do the I/O around them.

// Periods of the components (SPEC 3).
const (
	periodBusy     = 2 * time.Second  // an operation is in progress somewhere
	periodDiverged = 5 * time.Second  // a healthy workspace is away from its desired state
	periodIdle     = 30 * time.Second // everything at rest
	periodTTL      = time.Minute
	periodGC       = time.Hour
	// periodListener is how often the leader drains the change feed: well
	// inside SPEC 4.6's 2 s delivery bound.
	periodListener = time.Second
	// periodStandby is how often a standby tries to take the lead.
	periodStandby = time.Second
)

// Retry policy (SPEC 4.2.4) and the GC's orphan delay (SPEC 4.5, C9).
const (
	retryInterval = 30 * time.Second
	maxAttempts   = 3
	orphanDelay   = 2 * time.Hour
)

// timeout is each operation's limit counted from op_started_at (SPEC 4.2.3).
func timeout(op contracts.Operation) time.Duration {
	switch op {
	case contracts.OpRestoring, contracts.OpArchiving:
		return 30 * time.Minute
	case contracts.OpDeleting:
		return 10 * time.Minute
	}
	return 5 * time.Minute // PROVISIONING, STARTING, STOPPING
}

// inError is the reconciler's ERROR test (SPEC 4.2 step 2, C11): health
// ERROR as observed, or a terminal error_info the HealthMonitor has not
// turned into health ERROR yet.
func inError(w *contracts.Workspace) bool {
	return w.HealthStatus == contracts.HealthError || w.Terminal()
}

// unrestored reports whether the volume is not known to hold the archive
// at archive_key (SPEC 4.2.1): restore_marker names the archive the volume
// was last made equal to, by a restore or by the archive taken of it.
func unrestored(w *contracts.Workspace) bool {
	return w.ArchiveKey != "" && w.RestoreMarker() != w.ArchiveKey
}

// choose is SPEC 4.2.1's table for a workspace with no operation in
// progress; ok is false when nothing is to be done. ERROR rows are the
// caller's business (step 2) except for soft-deleted ones, which are
// deleted whatever their health.
func choose(w *contracts.Workspace) (op contracts.Operation, ok bool) {
	if w.ObservedStatus == contracts.ObservedDeleted {
		return "", false
	}
	if w.Deleted() {
		switch {
		case w.ObservedStatus == contracts.ObservedPending || inError(w):
			return contracts.OpDeleting, true
		case w.ObservedStatus == contracts.ObservedRunning:
			return contracts.OpStopping, true // step down first
		default: // STANDBY
			return contracts.OpArchiving, true // step down first
		}
	}
	if inError(w) {
		return "", false
	}
	switch w.ObservedStatus {
	case contracts.ObservedPending:
		if w.DesiredState == contracts.DesiredPending {
			return "", false
		}
		if w.ArchiveKey != "" {
			return contracts.OpRestoring, true
		}
		return contracts.OpProvisioning, true
	case contracts.ObservedStandby:
		switch w.DesiredState {
		case contracts.DesiredPending:
			return contracts.OpArchiving, true
		case contracts.DesiredRunning:
			if unrestored(w) {
				return contracts.OpRestoring, true // never start an empty volume
			}
			return contracts.OpStarting, true
		default:
			if unrestored(w) {
				return contracts.OpRestoring, true // kept STANDBY, but must hold its data
			}
			return "", false
		}
	case contracts.ObservedRunning:
		if w.DesiredState == contracts.DesiredRunning {
			return "", false
		}
		return contracts.OpStopping, true
	}
	return "", false
}

// archiveOpID is the op_id an ARCHIVING claimed on a row without op_id
// uses (an op_id an ERROR entry kept is taken first, SPEC 4.2.2: see
// claim). An unrestored
// volume is not the user's data (the archive at archive_key is), so the
// ARCHIVING reuses that archive's op_id: archive_key already equals its
// expected key, nothing is uploaded, and only the volume is removed. Any
// other ARCHIVING takes a fresh op_id, since the volume may have changed
// since any earlier archive (an op_id kept by an ERROR entry included).
func archiveOpID(w *contracts.Workspace, fresh func() string) string {
	if unrestored(w) {
		if id, opID, ok := contracts.ParseArchiveKey(w.ArchiveKey); ok && id == w.ID {
			return opID
		}
	}
	return fresh()
}

// completed is the completion condition of w's operation on the DB's last
// observation (SPEC 4.2.2, C1). An ARCHIVING of a soft-deleted workspace
// also completes at DELETED: once its volume is gone the HealthMonitor's
// rule 1 observes DELETED, never PENDING.
func completed(w *contracts.Workspace) bool {
	switch w.Operation {
	case contracts.OpProvisioning, contracts.OpStopping:
		return w.ObservedStatus == contracts.ObservedStandby
	case contracts.OpRestoring:
		return w.ObservedStatus == contracts.ObservedStandby && w.ArchiveKey != "" && w.RestoreMarker() == w.ArchiveKey
	case contracts.OpStarting:
		return w.ObservedStatus == contracts.ObservedRunning
	case contracts.OpArchiving:
		if w.OpID == "" || w.ArchiveKey != contracts.ArchiveKey(w.ID, w.OpID) {
			return false
		}
		return w.ObservedStatus == contracts.ObservedPending ||
			w.Deleted() && w.ObservedStatus == contracts.ObservedDeleted
	case contracts.OpDeleting:
		return w.ObservedStatus == contracts.ObservedDeleted
	}
	return false
}

// stampsAccess reports whether completing op stamps last_access_at through
// the API service layer first (SPEC 4.2.2).
func stampsAccess(op contracts.Operation) bool {
	return op == contracts.OpRestoring || op == contracts.OpStarting || op == contracts.OpStopping
}

// period is the adaptive period of the HealthMonitor and the
// StateReconciler (SPEC 3), from the fleet as last read.
func period(rows []contracts.Workspace) time.Duration {
	p := periodIdle
	for i := range rows {
		w := &rows[i]
		if w.Operation != contracts.OpNone {
			return periodBusy
		}
		if w.ObservedStatus != contracts.ObservedDeleted && !w.Deleted() && !inError(w) &&
			string(w.ObservedStatus) != string(w.DesiredState) {
			p = periodDiverged
		}
	}
	return p
}

// classify maps a provider error code to its reason and whether it is
// terminal at once (SPEC 1.5). Codes acme does not know, and VOLUME_IN_USE
// (the container is expected to go away), are a retried ActionFailed.
func classify(code contracts.ErrorCode) (contracts.Reason, bool) {
	switch code {
	case contracts.CodeArchiveNotFound, contracts.CodeMetaNotFound, contracts.CodeChecksumMismatch:
		return contracts.ReasonDataLost, true
	case contracts.CodeS3AccessError, contracts.CodeK8sAPIError, contracts.CodeDockerUnreachable:
		return contracts.ReasonUnreachable, false
	case contracts.CodeDiskFull, contracts.CodeContainerCreate, contracts.CodeVolumeNotFound:
		return contracts.ReasonActionFailed, true
	}
	return contracts.ReasonActionFailed, false
}

// activity is what the proxy's keys on the bus say about a workspace
// (SPEC 4.4).
type activity struct {
	connections int64
	idleTimer   bool
}

// ttlTarget is the desired state the TTL Manager asks for (SPEC 4.4), if
// any. Each rule lowers only the desired state it applies to: a workspace
// its user wants RUNNING is stopped when idle, one left in STANDBY is
// archived, and nothing else is touched.
func ttlTarget(w *contracts.Workspace, a activity, now time.Time) (contracts.DesiredState, bool) {
	if w.Deleted() || w.HealthStatus != contracts.HealthOK || w.Terminal() || w.Operation != contracts.OpNone {
		return "", false
	}
	idle := now.Sub(w.LastAccessAt)
	switch {
	case w.DesiredState == contracts.DesiredRunning && w.ObservedStatus == contracts.ObservedRunning:
		if a.connections <= 0 && !a.idleTimer && idle > time.Duration(w.StandbyTTLSeconds)*time.Second {
			return contracts.DesiredStandby, true
		}
	case w.DesiredState == contracts.DesiredStandby && w.ObservedStatus == contracts.ObservedStandby:
		if idle > time.Duration(w.ArchiveTTLSeconds)*time.Second {
			return contracts.DesiredPending, true
		}
	}
	return "", false
}

// protected reports whether the archive (or its .meta) at key must be kept
// because of row w, the row of the workspace the key belongs to (nil if
// there is none): C9. A soft-deleted workspace protects nothing.
func protected(w *contracts.Workspace, key string) bool {
	if w == nil || w.Deleted() {
		return false
	}
	archive := strings.TrimSuffix(key, ".meta")
	if w.ArchiveKey != "" && archive == w.ArchiveKey {
		return true
	}
	if w.OpID != "" && strings.HasPrefix(archive, contracts.OpPrefix(w.ID, w.OpID)) {
		return true
	}
	return inError(w)
}

// countsRunning reports whether w counts toward the running limits (SPEC
// 4.3 as amended): not soft-deleted, healthy, and wanted or seen RUNNING.
func countsRunning(w *contracts.Workspace) bool {
	return !w.Deleted() && w.ObservedStatus != contracts.ObservedDeleted && w.HealthStatus == contracts.HealthOK &&
		(w.DesiredState == contracts.DesiredRunning || w.ObservedStatus == contracts.ObservedRunning)
}
