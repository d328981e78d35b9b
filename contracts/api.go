package contracts

import "time"

// API error codes (SPEC 4.3).
const (
	APIInvalidState  = "INVALID_STATE"
	APIBadRequest    = "BAD_REQUEST"
	APINotFound      = "NOT_FOUND"
	APIUnauthorized  = "UNAUTHORIZED"
	APIForbidden     = "FORBIDDEN"
	APITooLarge      = "PAYLOAD_TOO_LARGE"
	APILimitExceeded = "workspace_limit_exceeded"
	APIInternal      = "INTERNAL"
)

// APIError is an API rejection: an HTTP status and the JSON error body.
type APIError struct {
	Status  int
	Code    string
	Message string
	Limit   *LimitExceeded
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

func apiErr(status int, code, msg string) *APIError {
	return &APIError{Status: status, Code: code, Message: msg}
}

// CheckVisible is the visibility rule: another user's workspace and a
// soft-deleted one are 404 (never reveal either).
func CheckVisible(w *Workspace, user string, admin bool) *APIError {
	if w == nil || (!admin && w.OwnerUserID != user) || w.Deleted() || w.ObservedStatus == ObservedDeleted {
		return apiErr(404, APINotFound, "workspace not found")
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
func CheckDesiredChange(w *Workspace, to DesiredState) (DesiredChange, *APIError) {
	if !to.Valid() {
		return 0, apiErr(400, APIBadRequest, "desired_state must be PENDING, STANDBY or RUNNING")
	}
	if w.DesiredState == to {
		return DesiredNoop, nil
	}
	if w.Operation != OpNone {
		return 0, apiErr(409, APIInvalidState, "operation "+string(w.Operation)+" is in progress")
	}
	if w.Terminal() {
		return 0, apiErr(409, APIInvalidState, "workspace is in ERROR: recover it first")
	}
	return DesiredApply, nil
}

// NeedsLimitCheck reports whether a change to desired state to is checked
// against the running limits.
func NeedsLimitCheck(to DesiredState) bool { return to == DesiredRunning }

// CheckDelete applies SPEC 4.3's rule to DELETE: 409 while an operation runs.
func CheckDelete(w *Workspace) *APIError {
	if w.Operation != OpNone {
		return apiErr(409, APIInvalidState, "operation "+string(w.Operation)+" is in progress")
	}
	return nil
}

// CheckRecover applies SPEC 4.3's rule to recovery: admin only, 409 unless
// health is ERROR.
func CheckRecover(w *Workspace, admin bool) *APIError {
	if !admin {
		return apiErr(403, APIForbidden, "recovery needs the admin role")
	}
	if w.HealthStatus != HealthError {
		return apiErr(409, APIInvalidState, "workspace health is not ERROR")
	}
	return nil
}

// RecoverPatch is the administrator's reset (a C3 exception): error_info,
// error_count and error_message in one write (SPEC 4.3 as amended), so the
// change notification it fires no longer carries the old message.
func RecoverPatch() Patch {
	return Patch{ErrorInfo: Some[*ErrorInfo](nil), ErrorCount: Some(0), ErrorMessage: Some("")}
}

// DeletePatch is the soft delete: deleted_at = now, desired PENDING.
func DeletePatch(now time.Time) Patch {
	return Patch{DeletedAt: Some(now), DesiredState: Some(DesiredPending)}
}
