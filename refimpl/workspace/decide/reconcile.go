package decide

import (
	"fmt"
	"maps"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// ChooseOperation is the operation table of SPEC 4.2.1. It returns OpNone
// when no row matches (nothing to do, or a state the table leaves alone).
func ChooseOperation(w *contracts.Workspace) contracts.Operation {
	deleted := w.Deleted()
	ok := w.HealthStatus == contracts.HealthOK
	switch w.ObservedStatus {
	case contracts.ObservedPending:
		if deleted {
			return contracts.OpDeleting
		}
		if ok && (w.DesiredState == contracts.DesiredStandby || w.DesiredState == contracts.DesiredRunning) {
			if w.ArchiveKey == "" {
				return contracts.OpProvisioning
			}
			return contracts.OpRestoring
		}
	case contracts.ObservedStandby:
		switch {
		case deleted && !ok:
			return contracts.OpDeleting
		case deleted:
			return contracts.OpArchiving
		case ok && w.DesiredState != contracts.DesiredPending && Unrestored(w):
			// A choice beyond the table: the volume is not the archive's
			// restore (a RESTORING failed after provisioning it), so the
			// user's data is in the archive: restore before anything runs.
			return contracts.OpRestoring
		case ok && w.DesiredState == contracts.DesiredRunning:
			return contracts.OpStarting
		case ok && w.DesiredState == contracts.DesiredPending:
			return contracts.OpArchiving
		}
	case contracts.ObservedRunning:
		switch {
		case deleted && !ok:
			return contracts.OpDeleting
		case deleted:
			return contracts.OpStopping
		case ok && (w.DesiredState == contracts.DesiredStandby || w.DesiredState == contracts.DesiredPending):
			return contracts.OpStopping
		}
	}
	return contracts.OpNone
}

// Completed is the completion column of SPEC 4.2.2: does the DB's last
// observation show operation w.Operation done? ARCHIVING of a soft-deleted
// workspace also completes on observed DELETED: once its volume is gone
// there is nothing left to observe as PENDING (docs/decisions/workspaces-4.2-reconciler.md, DR1).
func Completed(w *contracts.Workspace) bool {
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
		return w.ObservedStatus == contracts.ObservedPending || (w.Deleted() && w.ObservedStatus == contracts.ObservedDeleted)
	case contracts.OpDeleting:
		return w.ObservedStatus == contracts.ObservedDeleted
	}
	return false
}

// Timeout is each operation's limit from op_started_at (SPEC 4.2.3).
func Timeout(op contracts.Operation) time.Duration {
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

// TimedOut reports whether w's operation has run past its timeout at now.
func TimedOut(w *contracts.Workspace, now time.Time) bool {
	if w.Operation == contracts.OpNone || w.OpStartedAt.IsZero() {
		return false
	}
	return now.Sub(w.OpStartedAt) > Timeout(w.Operation)
}

// Retry policy (SPEC 4.2.4).
const (
	RetryInterval = 30 * time.Second
	MaxAttempts   = 3
)

// StepKind is what the reconciler does with one workspace on one tick.
type StepKind int

// Step kinds.
const (
	// StepNothing: terminal, converged, or nothing in the table applies.
	StepNothing StepKind = iota
	// StepSkipError: C11, the workspace is in ERROR and not soft-deleted.
	StepSkipError
	// StepEnterError: a terminal error with an operation still set (4.2.5).
	StepEnterError
	// StepClaim: claim Op by compare-and-set and execute it.
	StepClaim
	// StepComplete: the operation's completion condition is observed.
	StepComplete
	// StepTimeout: the operation ran past its timeout: enter ERROR.
	StepTimeout
	// StepExecute: invoke the operation's actuator calls (resume or retry).
	StepExecute
	// StepWait: the operation is in progress; nothing to do this tick.
	StepWait
)

var stepNames = [...]string{"nothing", "skip-error", "enter-error", "claim", "complete", "timeout", "execute", "wait"}

func (k StepKind) String() string {
	if int(k) < len(stepNames) {
		return stepNames[k]
	}
	return fmt.Sprintf("step(%d)", int(k))
}

// Step is the step SPEC 4.2 takes with one workspace: what kind, for
// which operation, and why (the head of a Decision).
type Step struct {
	Kind StepKind
	Op   contracts.Operation
	Why  string
}

// classify is the step of SPEC 4.2 steps 1–5 for w (see Reconcile).
// lastInvoked is when this leader last invoked the operation's actuator calls
// for w (zero if it has not since it became leader): a leader that has not
// invoked them resumes by invoking them (4.2.2, "Resuming"); otherwise it
// only re-invokes them as a retry, once a failure recorded after its last
// invocation is RetryInterval old (4.2.4).
func classify(w *contracts.Workspace, now time.Time, lastInvoked time.Time) Step {
	// 1. DELETED is terminal. An operation still set on a DELETED row
	// (ARCHIVING of a soft-deleted workspace) goes on to step 3, where it
	// completes, times out or resumes.
	if w.ObservedStatus == contracts.ObservedDeleted {
		switch {
		case w.Operation == contracts.OpNone:
			return Step{Kind: StepNothing, Why: "DELETED is terminal"}
		case Completed(w):
			return Step{Kind: StepComplete, Op: w.Operation, Why: "completion observed"}
		case (w.HealthStatus == contracts.HealthError || w.Terminal()) && w.Operation != contracts.OpDeleting:
			return Step{Kind: StepEnterError, Op: w.Operation, Why: "error with an operation in progress"}
		}
	}
	// 2. ERROR skip (C11), with the soft-delete exception.
	if w.ObservedStatus != contracts.ObservedDeleted && (w.HealthStatus == contracts.HealthError || w.Terminal()) {
		switch {
		case w.Deleted() && w.Operation == contracts.OpNone:
			if w.ErrorInfo != nil && now.Sub(w.ErrorInfo.OccurredAt) < RetryInterval {
				// Deletion is retried, but never faster than retries are.
				return Step{Kind: StepWait, Why: "deletion retry spacing"}
			}
			return Step{Kind: StepClaim, Op: contracts.OpDeleting, Why: "soft-deleted workspace in ERROR"}
		case w.Deleted() && w.Operation == contracts.OpDeleting:
			// continue with step 3
		case w.Operation != contracts.OpNone:
			return Step{Kind: StepEnterError, Op: w.Operation, Why: "error with an operation in progress"}
		default:
			return Step{Kind: StepSkipError, Why: "ERROR: skipped until recovered (C11)"}
		}
	}
	// 3. An operation in progress: completion, then timeout, then resume or retry.
	if w.Operation != contracts.OpNone {
		if Completed(w) {
			return Step{Kind: StepComplete, Op: w.Operation, Why: "completion observed"}
		}
		if TimedOut(w, now) {
			return Step{Kind: StepTimeout, Op: w.Operation, Why: fmt.Sprintf("exceeded %s", Timeout(w.Operation))}
		}
		failedAfterLastCall := w.ErrorInfo != nil && !w.ErrorInfo.IsTerminal && !w.ErrorInfo.OccurredAt.Before(lastInvoked)
		if lastInvoked.IsZero() || failedAfterLastCall {
			if w.ErrorInfo != nil && !w.ErrorInfo.IsTerminal && now.Sub(w.ErrorInfo.OccurredAt) < RetryInterval {
				return Step{Kind: StepWait, Op: w.Operation, Why: "retry spacing"}
			}
			if w.Operation == contracts.OpStarting && w.ObservedStatus == contracts.ObservedPending {
				// C6: STARTING is never attempted without a volume. The
				// volume went away under it: no retry, the timeout ends it.
				return Step{Kind: StepWait, Op: w.Operation, Why: "no volume to start on (C6)"}
			}
			why := "resume"
			if failedAfterLastCall && !lastInvoked.IsZero() {
				why = "retry"
			}
			return Step{Kind: StepExecute, Op: w.Operation, Why: why}
		}
		return Step{Kind: StepWait, Op: w.Operation, Why: "awaiting observation"}
	}
	// 4. Converged.
	if !w.Deleted() && string(w.ObservedStatus) == string(w.DesiredState) {
		return Step{Kind: StepNothing, Why: "converged"}
	}
	// 5. Choose and claim.
	if op := ChooseOperation(w); op != contracts.OpNone {
		return Step{Kind: StepClaim, Op: op, Why: "observed " + string(w.ObservedStatus) + ", desired " + string(w.DesiredState)}
	}
	return Step{Kind: StepNothing, Why: "no operation applies"}
}

// ClaimCond is the compare-and-set condition of a claim: no operation in
// progress, and (except DELETING of a soft-deleted workspace) no terminal
// error.
func ClaimCond(op contracts.Operation) contracts.Cond {
	c := contracts.Cond{Operation: contracts.Some(contracts.OpNone)}
	if op != contracts.OpDeleting {
		c.NotTerminal = true
	}
	return c
}

// ClaimPatch is the claim write. ARCHIVING creates its op_id in the claim
// itself (committed before anything else), or resumes under the op_id an
// ERROR entry kept; any other claim but DELETING clears such an op_id;
// RESTORING clears a stale
// restore_marker so that only this restore can complete it (a choice: a
// marker left from an earlier restore of the same key would otherwise let an
// empty re-provisioned volume pass as restored).
func ClaimPatch(w *contracts.Workspace, op contracts.Operation, now time.Time, newOpID string) contracts.Patch {
	// error_count restarts with every claim (a DELETING claimed on a
	// workspace in ERROR gets its own three attempts); a terminal
	// error_info is kept until the operation completes.
	p := contracts.Patch{Operation: contracts.Some(op), OpStartedAt: contracts.Some(now), ErrorCount: contracts.Some(0)}
	if !w.Terminal() {
		p.ErrorInfo = contracts.Some[*contracts.ErrorInfo](nil)
		p.ErrorMessage = contracts.Some("")
	}
	switch op {
	case contracts.OpArchiving:
		if w.OpID == "" {
			p.OpID = contracts.Some(newOpID)
			if Unrestored(w) {
				// The volume holds nothing newer than the archive at
				// archive_key (it was never restored from it): archive
				// under that key's op_id, so the volume is only deleted
				// and the archive is not replaced by an emptier one.
				if id, op, ok := contracts.ParseArchiveKey(w.ArchiveKey); ok && id == w.ID {
					p.OpID = contracts.Some(op)
				}
			}
		}
	case contracts.OpRestoring:
		if w.RestoreMarker() != "" {
			p.HomeCtx = contracts.Some[*contracts.HomeCtx](nil)
		}
	}
	if w.OpID != "" && op != contracts.OpArchiving && op != contracts.OpDeleting {
		// An op_id kept by an ERROR entry during ARCHIVING (4.2.5) is
		// stale once another operation starts: the volume may change from
		// now on, so a later ARCHIVING must not resume under that op_id
		// (its archive, or its committed archive_key, would be taken for
		// the newer data and the volume deleted without archiving it).
		p.OpID = contracts.Some("")
	}
	return p
}

// CompletePatch is the completion write: operation NONE and the error state
// cleared; ARCHIVING also clears op_id.
func CompletePatch(w *contracts.Workspace) contracts.Patch {
	p := contracts.Patch{
		Operation:    contracts.Some(contracts.OpNone),
		OpStartedAt:  contracts.Some(time.Time{}),
		ErrorCount:   contracts.Some(0),
		ErrorInfo:    contracts.Some[*contracts.ErrorInfo](nil),
		ErrorMessage: contracts.Some(""),
	}
	if w.Operation == contracts.OpArchiving {
		p.OpID = contracts.Some("")
	}
	return p
}

// Unrestored reports whether a workspace's volume does not hold what its
// archive_key holds: an archive exists and home_ctx.restore_marker, the
// archive the volume's content was last made equal to (by a restore, or by
// the archive taken of it), names another or none. Then the user's data is
// in the archive, not in the volume (a RESTORING failed after provisioning
// it).
func Unrestored(w *contracts.Workspace) bool {
	return w.ArchiveKey != "" && w.RestoreMarker() != w.ArchiveKey
}

// ArchiveCommitPatch commits the archive ARCHIVING took (SPEC 4.2.2) and
// records in home_ctx that the volume's content equals it, so that a volume
// left behind by an ARCHIVING that could not delete it is not taken for
// an unrestored one (docs/decisions/workspaces-4.2-reconciler.md, DR15).
func ArchiveCommitPatch(key string) contracts.Patch {
	return contracts.Patch{ArchiveKey: contracts.Some(key), HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})}
}

// StampsLastAccess reports whether completing op stamps last_access_at
// through the API service layer first (SPEC 4.2.2).
func StampsLastAccess(op contracts.Operation) bool {
	return op == contracts.OpRestoring || op == contracts.OpStarting || op == contracts.OpStopping
}

// ArchiveAction is the next actuator step of an ARCHIVING operation.
type ArchiveAction int

// Archive actions (SPEC 4.2.2, "ARCHIVING resume").
const (
	ArchiveEnsureOpID ArchiveAction = iota
	ArchiveUpload
	ArchiveDeleteVolume
	ArchiveAwait
)

// NextArchiveAction decides where an ARCHIVING operation stands.
func NextArchiveAction(w *contracts.Workspace) ArchiveAction {
	switch {
	case w.OpID == "":
		return ArchiveEnsureOpID
	case w.ArchiveKey != contracts.ArchiveKey(w.ID, w.OpID):
		return ArchiveUpload
	case w.ObservedStatus != contracts.ObservedPending && w.ObservedStatus != contracts.ObservedDeleted:
		return ArchiveDeleteVolume
	}
	return ArchiveAwait
}

// FailurePatch records a failed actuator call of w's operation at now
// (SPEC 4.2.4): FailureOf(w, now).Patch.
func FailurePatch(w *contracts.Workspace, code contracts.ErrorCode, message string, ctx map[string]any, now time.Time) (p contracts.Patch, terminal bool) {
	return FailureOf(w, now).Patch(code, message, ctx)
}

// Patch is the write for a call that failed with code and message (ctx:
// the provider's context, copied): error_count goes up by one and
// error_info is recorded; when the code is terminal at once, or the count
// reaches MaxAttempts, the error is terminal and the write is the ERROR
// entry of 4.2.5 (terminal reports which).
func (f Failure) Patch(code contracts.ErrorCode, message string, ctx map[string]any) (p contracts.Patch, terminal bool) {
	reason, immediate := contracts.Classify(code)
	count := f.ErrorCount + 1
	// Copy the caller's context (often a ProviderError's): the recorded
	// error_info must not share a map with it.
	ctx = maps.Clone(ctx)
	if ctx == nil {
		ctx = map[string]any{}
	}
	// A provider's text may hold what the store cannot (CheckText): store
	// a readable approximation rather than fail to record the error.
	message = contracts.SanitizeText(message)
	for k, v := range ctx {
		if s, ok := v.(string); ok {
			ctx[k] = contracts.SanitizeText(s)
		}
	}
	ctx["code"] = string(code)
	info := contracts.ErrorInfo{
		Reason:     reason,
		Message:    message,
		IsTerminal: immediate,
		Operation:  f.Operation,
		ErrorCount: count,
		Context:    ctx,
		OccurredAt: f.At,
	}
	if !immediate && count >= MaxAttempts {
		info = contracts.ErrorInfo{
			Reason:     contracts.ReasonRetryExceeded,
			Message:    fmt.Sprintf("%d attempts failed: %s", count, message),
			IsTerminal: true,
			Operation:  f.Operation,
			ErrorCount: count,
			Context:    map[string]any{"max_retries": MaxAttempts, "last_error": message},
			OccurredAt: f.At,
		}
	}
	if info.IsTerminal {
		p = errorEntry(f.Observed, info)
		p.ErrorCount = contracts.Some(count)
		return p, true
	}
	return contracts.Patch{ErrorCount: contracts.Some(count), ErrorInfo: contracts.Some(&info), ErrorMessage: contracts.Some(message)}, false
}

// TimeoutInfo is the terminal error of an operation past its timeout.
func TimeoutInfo(w *contracts.Workspace, now time.Time) contracts.ErrorInfo {
	return contracts.ErrorInfo{
		Reason:     contracts.ReasonTimeout,
		Message:    fmt.Sprintf("%s exceeded its timeout of %s", w.Operation, Timeout(w.Operation)),
		IsTerminal: true,
		Operation:  w.Operation,
		ErrorCount: w.ErrorCount,
		Context:    map[string]any{"operation": string(w.Operation), "elapsed_seconds": int(now.Sub(w.OpStartedAt).Seconds())},
		OccurredAt: now,
	}
}

// ErrorEntryPatch is the ERROR entry write of SPEC 4.2.5: operation NONE,
// op_started_at null, the terminal error_info and message, previous_status
// = observed_status; op_id is kept (it protects the archive, C9).
func ErrorEntryPatch(w *contracts.Workspace, info contracts.ErrorInfo) contracts.Patch {
	return errorEntry(w.ObservedStatus, info)
}

func errorEntry(observed contracts.ObservedStatus, info contracts.ErrorInfo) contracts.Patch {
	info.IsTerminal = true
	return contracts.Patch{
		Operation:      contracts.Some(contracts.OpNone),
		OpStartedAt:    contracts.Some(time.Time{}),
		ErrorInfo:      contracts.Some(&info),
		ErrorMessage:   contracts.Some(info.Message),
		PreviousStatus: contracts.Some(observed),
	}
}

// EntryInfo is the terminal error_info to record when entering ERROR from
// step 2: the workspace's own terminal info, or, when health is ERROR with
// a non-terminal (or no) error_info, the container-without-volume Mismatch
// made terminal (a choice: the spec only names the terminal case).
func EntryInfo(w *contracts.Workspace, now time.Time) contracts.ErrorInfo {
	if w.Terminal() {
		return w.ErrorInfo.Clone()
	}
	return contracts.ErrorInfo{
		Reason:     contracts.ReasonMismatch,
		Message:    "health ERROR while " + string(w.Operation) + " was in progress",
		IsTerminal: true,
		Operation:  w.Operation,
		ErrorCount: w.ErrorCount,
		Context:    map[string]any{"violation": contracts.ViolationContainerWithoutVolume},
		OccurredAt: now,
	}
}
