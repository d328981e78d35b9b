package coordinator

// Bug names one deliberately broken rule. The mutant catalogue builds each
// mutant as the reference with one Bug switched on, so every mutant is a
// realistic, minimal deviation from correct code. The empty Bug is none.
type Bug string

// Bugs.
const (
	BugDeleteVolumeBeforeKey  Bug = "delete-volume-before-key"    // C8: volume deleted before archive_key is committed
	BugReconcileError         Bug = "reconcile-error"             // C11: ERROR workspaces are reconciled
	BugGCIgnoresOpID          Bug = "gc-ignores-op-id"            // C9: op_id no longer protects its archive
	BugNonOwnerWrite          Bug = "non-owner-write"             // C3: the reconciler writes observed_status itself
	BugNoCAS                  Bug = "no-cas-claim"                // C4: claims ignore the operation in progress
	BugRunningToPending       Bug = "running-to-pending"          // C5: RUNNING → PENDING archives in one step
	BugRestoreWithoutMarker   Bug = "restore-without-marker"      // C7: RESTORING completes on STANDBY alone
	BugNoTimeouts             Bug = "no-timeouts"                 // 4.2.3: operations never time out
	BugFourthAttempt          Bug = "fourth-attempt"              // 4.2.4: a fourth attempt is made
	BugNoRetrySpacing         Bug = "no-retry-spacing"            // 4.2.4: retries do not wait 30 s
	BugNoLeaseRecheck         Bug = "deposed-leader-keeps-acting" // C10: no lock re-check, no fencing
	BugIgnoreRestoreError     Bug = "restore-ignores-data-loss"   // C12: a failed restore is taken as done
	BugNewOpIDOnRetry         Bug = "new-op-id-on-retry"          // C7: a retried archive takes a new op_id
	BugTTLWritesDesired       Bug = "ttl-writes-desired"          // C3: the TTL Manager writes desired_state itself
	BugHealthRunningIfExists  Bug = "health-running-if-exists"    // C1: a stopped container is observed RUNNING
	BugGCNoDelay              Bug = "gc-no-delay"                 // C9: orphans deleted at first sighting
	BugCompleteOnActuator     Bug = "complete-on-actuator"        // C1: completion on actuator success
	BugStartWithoutVolume     Bug = "start-without-volume-check"  // C6: container-without-volume not flagged
	BugGCDeleteProtectedError Bug = "gc-deletes-error-archives"   // C9: ERROR no longer protects archives
	BugTTLIgnoresActivity     Bug = "ttl-ignores-activity"        // 4.4: the standby TTL stops connected workspaces
	BugNeverStops             Bug = "never-stops"                 // C12: RUNNING → STANDBY is missing from the table
	BugIgnoreLimits           Bug = "ignore-limits"               // 4.3: the API accepts RUNNING over the limits
)

// AllBugs lists every bug, in catalogue order.
var AllBugs = []Bug{
	BugDeleteVolumeBeforeKey, BugReconcileError, BugGCIgnoresOpID, BugNonOwnerWrite, BugNoCAS,
	BugRunningToPending, BugRestoreWithoutMarker, BugNoTimeouts, BugFourthAttempt, BugNoRetrySpacing,
	BugNoLeaseRecheck, BugIgnoreRestoreError, BugNewOpIDOnRetry, BugTTLWritesDesired,
	BugHealthRunningIfExists, BugGCNoDelay, BugCompleteOnActuator, BugStartWithoutVolume,
	BugGCDeleteProtectedError, BugTTLIgnoresActivity, BugNeverStops, BugIgnoreLimits,
}

func (b Bug) is(x Bug) bool { return b == x }
