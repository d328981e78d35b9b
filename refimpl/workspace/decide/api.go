package decide

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

func apiErr(status int, code, msg string) *contracts.APIError {
	return &contracts.APIError{Status: status, Code: code, Message: msg}
}

// CheckVisible is the visibility rule: another user's workspace and a
// soft-deleted one are 404 (never reveal either).
func CheckVisible(w *contracts.Workspace, user string, admin bool) *contracts.APIError {
	if w == nil || (!admin && w.OwnerUserID != user) || w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted {
		return apiErr(404, contracts.APINotFound, "workspace not found")
	}
	return nil
}

// DesiredChange is the outcome of a desired_state change request.
type DesiredChange int

// Desired change outcomes.
const (
	DesiredApply DesiredChange = iota
	DesiredNoop
)

// CheckDesiredChange applies SPEC 4.3's rules to a desired_state change:
// same value → 200 no-op; operation in progress → 409; ERROR → 409, where
// ERROR is judged by a terminal error_info (SPEC 4.3 as amended), not by a
// health_status the HealthMonitor has not re-observed since a recovery
// reset error_info. Limits are checked separately (they need counts).
func CheckDesiredChange(w *contracts.Workspace, to contracts.DesiredState) (DesiredChange, *contracts.APIError) {
	if !to.Valid() {
		return 0, apiErr(400, contracts.APIBadRequest, "desired_state must be PENDING, STANDBY or RUNNING")
	}
	if w.DesiredState == to {
		return DesiredNoop, nil
	}
	if w.Operation != contracts.OpNone {
		return 0, apiErr(409, contracts.APIInvalidState, "operation "+string(w.Operation)+" is in progress")
	}
	if w.Terminal() {
		return 0, apiErr(409, contracts.APIInvalidState, "workspace is in ERROR: recover it first")
	}
	return DesiredApply, nil
}

// NeedsLimitCheck reports whether a change to desired state to is checked
// against the running limits.
func NeedsLimitCheck(to contracts.DesiredState) bool { return to == contracts.DesiredRunning }

// CheckDelete applies SPEC 4.3's rule to DELETE: 409 while an operation runs.
func CheckDelete(w *contracts.Workspace) *contracts.APIError {
	if w.Operation != contracts.OpNone {
		return apiErr(409, contracts.APIInvalidState, "operation "+string(w.Operation)+" is in progress")
	}
	return nil
}

// CheckRecover applies SPEC 4.3's rule to recovery: admin only, 409 unless
// health is ERROR.
func CheckRecover(w *contracts.Workspace, admin bool) *contracts.APIError {
	if !admin {
		return apiErr(403, contracts.APIForbidden, "recovery needs the admin role")
	}
	if w.HealthStatus != contracts.HealthError {
		return apiErr(409, contracts.APIInvalidState, "workspace health is not ERROR")
	}
	return nil
}

// DeletePatch is the soft delete: deleted_at = now, desired PENDING.
func DeletePatch(now time.Time) contracts.Patch {
	return contracts.Patch{DeletedAt: contracts.Some(now), DesiredState: contracts.Some(contracts.DesiredPending)}
}
