package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// requireAPIError asserts err is nil when status is 0, else an APIError of
// that status and code.
func requireAPIError(t *testing.T, err *contracts.APIError, status int, code string) {
	t.Helper()
	if status == 0 {
		require.Nil(t, err)
		return
	}
	require.NotNil(t, err)
	require.Equal(t, status, err.Status)
	require.Equal(t, code, err.Code)
	require.NotEmpty(t, err.Message)
	require.Equal(t, code+": "+err.Message, err.Error())
}

func TestCheckVisible(t *testing.T) {
	cases := []struct {
		name   string
		w      *contracts.Workspace
		user   string
		admin  bool
		status int
	}{
		{"4.3: own live workspace is visible", row(), "u1", false, 0},
		{"4.3: own ERROR workspace is visible", row(withHealth(contracts.HealthError)), "u1", false, 0},
		{"4.3: another user's workspace → 404 (never reveal it)", row(withOwner("u2")), "u1", false, 404},
		{"4.3: an admin sees another user's workspace", row(withOwner("u2")), "u1", true, 0},
		{"4.3: soft-deleted → 404", row(withDeleted()), "u1", false, 404},
		{"4.3: soft-deleted → 404 even for an admin", row(withDeleted()), "u1", true, 404},
		{"4.3: observed DELETED → 404", row(withObserved(contracts.ObservedDeleted)), "u1", false, 404},
		{"4.3: no such row → 404", nil, "u1", false, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireAPIError(t, CheckVisible(tc.w, tc.user, tc.admin), tc.status, contracts.APINotFound)
		})
	}
}

func TestCheckDesiredChange(t *testing.T) {
	cases := []struct {
		name   string
		w      *contracts.Workspace
		to     contracts.DesiredState
		want   DesiredChange
		status int
		code   string
	}{
		{"4.3: a valid change → apply", row(withObserved(contracts.ObservedRunning)), contracts.DesiredStandby, DesiredApply, 0, ""},
		{"4.3: same value → 200 no-op", row(), contracts.DesiredRunning, DesiredNoop, 0, ""},
		{"4.3: same value is a no-op even with an operation in progress", row(withOp(contracts.OpProvisioning)), contracts.DesiredRunning, DesiredNoop, 0, ""},
		{"4.3: same value is a no-op even in ERROR", row(withHealth(contracts.HealthError)), contracts.DesiredRunning, DesiredNoop, 0, ""},
		{"4.3: operation in progress → 409 INVALID_STATE", row(withOp(contracts.OpProvisioning)), contracts.DesiredPending, 0, 409, contracts.APIInvalidState},
		{"4.3: health ERROR → 409 until recovery", row(withHealth(contracts.HealthError), withTerminal()), contracts.DesiredPending, 0, 409, contracts.APIInvalidState},
		{"4.3: terminal error_info before health turns ERROR → 409", row(withTerminal()), contracts.DesiredPending, 0, 409, contracts.APIInvalidState},
		{"4.3: a retried error does not block a change", row(withError(false, t0)), contracts.DesiredStandby, DesiredApply, 0, ""},
		{"4.3 amended: right after recovery (error_info reset, health not yet re-observed) → apply",
			row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError)), contracts.DesiredPending, DesiredApply, 0, ""},
		{"4.3: ERROR is not a desired state → 400", row(), "ERROR", 0, 400, contracts.APIBadRequest},
		{"4.3: DELETED is not a desired state → 400", row(), "DELETED", 0, 400, contracts.APIBadRequest},
		{"4.3: empty → 400", row(), "", 0, 400, contracts.APIBadRequest},
		{"4.3: bad input is 400 before 409", row(withOp(contracts.OpStarting)), "running", 0, 400, contracts.APIBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckDesiredChange(tc.w, tc.to)
			requireAPIError(t, err, tc.status, tc.code)
			if tc.status == 0 {
				require.Equal(t, tc.want, got)
			}
		})
	}
	require.True(t, NeedsLimitCheck(contracts.DesiredRunning), "4.3: limits checked on PATCH to RUNNING")
	require.False(t, NeedsLimitCheck(contracts.DesiredStandby))
	require.False(t, NeedsLimitCheck(contracts.DesiredPending))
}

func TestCheckDelete(t *testing.T) {
	requireAPIError(t, CheckDelete(row(withObserved(contracts.ObservedRunning))), 0, "")
	requireAPIError(t, CheckDelete(row(withOp(contracts.OpStarting))), 409, contracts.APIInvalidState)
	requireAPIError(t, CheckDelete(row(withHealth(contracts.HealthError), withTerminal())), 0, "")
	requireAPIError(t, CheckDelete(row(withHealth(contracts.HealthError), withOp(contracts.OpStarting))), 409, contracts.APIInvalidState)
}

func TestCheckRecover(t *testing.T) {
	cases := []struct {
		name   string
		w      *contracts.Workspace
		admin  bool
		status int
		code   string
	}{
		{"4.3: non-admin → 403", row(withHealth(contracts.HealthError), withTerminal()), false, 403, contracts.APIForbidden},
		{"4.3: non-admin on a healthy ws → 403 first", row(), false, 403, contracts.APIForbidden},
		{"4.3: admin, health OK → 409", row(), true, 409, contracts.APIInvalidState},
		{"4.3: admin, terminal info but health not yet ERROR → 409", row(withTerminal()), true, 409, contracts.APIInvalidState},
		{"4.3: admin, health ERROR → allowed", row(withHealth(contracts.HealthError), withTerminal()), true, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireAPIError(t, CheckRecover(tc.w, tc.admin), tc.status, tc.code)
		})
	}
}

func TestRecoverPatch(t *testing.T) {
	w := row(withObserved(contracts.ObservedStandby), withHealth(contracts.HealthError), withCount(3), withTerminal(), withOpID("op1"))
	p := contracts.RecoverPatch()
	requireColumns(t, p, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage)
	requireAllowed(t, contracts.CompAdmin, w, p)
	p.Apply(w, t0)
	require.Nil(t, w.ErrorInfo)
	require.Zero(t, w.ErrorCount)
	require.Equal(t, "op1", w.OpID)
	// With the error reset, the next observation turns health OK and the
	// reconciler plans again.
	obs := ObservationPatch(w, obsVolume, t0)
	obs.Apply(w, t0)
	require.Equal(t, contracts.HealthOK, w.HealthStatus)
	require.Equal(t, StepClaim, classify(w, t0, time.Time{}).Kind)
}

func TestDeletePatch(t *testing.T) {
	now := t0.Add(time.Hour)
	w := row(withObserved(contracts.ObservedRunning))
	p := DeletePatch(now)
	requireColumns(t, p, contracts.ColDesiredState, contracts.ColDeletedAt)
	requireAllowed(t, contracts.CompAPI, w, p)
	p.Apply(w, now)
	require.Equal(t, now, w.DeletedAt)
	require.Equal(t, contracts.DesiredPending, w.DesiredState)
	requireAPIError(t, CheckVisible(w, "u1", false), 404, contracts.APINotFound)
}
