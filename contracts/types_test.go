package contracts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestObservedStatusLevelAndValid(t *testing.T) {
	cases := []struct {
		name    string
		s       ObservedStatus
		level   int
		leveled bool
		valid   bool
	}{
		{"1.2: PENDING is level 0", ObservedPending, 0, true, true},
		{"1.2: STANDBY is level 10", ObservedStandby, 10, true, true},
		{"1.2: RUNNING is level 20", ObservedRunning, 20, true, true},
		{"1.2: DELETED has no level but is valid", ObservedDeleted, 0, false, true},
		{"1.2: ERROR is never an observed status", "ERROR", 0, false, false},
		{"1.2: empty is not an observed status", "", 0, false, false},
		{"1.2: lower case is not an observed status", "running", 0, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			level, ok := tc.s.Level()
			require.Equal(t, tc.leveled, ok)
			require.Equal(t, tc.level, level)
			require.Equal(t, tc.valid, tc.s.Valid())
		})
	}
}

func TestObservedLevelsAreOrdered(t *testing.T) {
	// C5: PENDING < STANDBY < RUNNING, and AllObserved lists them in that
	// order with DELETED last.
	require.Equal(t, []ObservedStatus{ObservedPending, ObservedStandby, ObservedRunning, ObservedDeleted}, AllObserved)
	prev := -1
	for _, s := range AllObserved[:3] {
		l, ok := s.Level()
		require.True(t, ok, "%s", s)
		require.Greater(t, l, prev, "%s", s)
		prev = l
	}
}

func TestHealthValid(t *testing.T) {
	require.True(t, HealthOK.Valid())
	require.True(t, HealthError.Valid())
	require.False(t, HealthStatus("").Valid())
	require.False(t, HealthStatus("DEGRADED").Valid())
}

func TestOperationValid(t *testing.T) {
	require.Equal(t, []Operation{OpNone, OpProvisioning, OpRestoring, OpStarting, OpStopping, OpArchiving, OpDeleting}, AllOperations)
	for _, o := range AllOperations {
		require.True(t, o.Valid(), "%s", o)
	}
	require.False(t, Operation("").Valid())
	require.False(t, Operation("ERROR").Valid())
}

func TestDesiredState(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		valid bool
	}{
		{"1.2: PENDING accepted", "PENDING", true},
		{"1.2: STANDBY accepted", "STANDBY", true},
		{"1.2: RUNNING accepted", "RUNNING", true},
		{"1.2: ERROR rejected", "ERROR", false},
		{"1.2: DELETED rejected", "DELETED", false},
		{"1.2: empty rejected", "", false},
		{"1.2: lower case rejected", "running", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.valid, DesiredState(tc.in).Valid())
			d, err := ParseDesiredState(tc.in)
			if tc.valid {
				require.NoError(t, err)
				require.Equal(t, DesiredState(tc.in), d)
				return
			}
			require.Error(t, err)
			require.Empty(t, d)
			require.Contains(t, err.Error(), "desired_state")
		})
	}
}

func TestDesiredObservedHasSameLevel(t *testing.T) {
	require.Equal(t, []DesiredState{DesiredPending, DesiredStandby, DesiredRunning}, AllDesired)
	for i, d := range AllDesired {
		require.Equal(t, AllObserved[i], d.Observed(), "%s", d)
	}
}

func TestNewWorkspaceSchemaDefaults(t *testing.T) {
	// 1.1: the defaults of every column a new row does not name.
	w := NewWorkspace("abc", "u1", "dev", "img:1", t0)
	require.Equal(t, "abc", w.ID)
	require.Equal(t, "u1", w.OwnerUserID)
	require.Equal(t, "ws-abc-home", w.HomeStoreKey)
	require.Nil(t, w.HomeCtx)
	require.Equal(t, ObservedPending, w.ObservedStatus)
	require.Equal(t, HealthOK, w.HealthStatus)
	require.True(t, w.ObservedAt.IsZero())
	require.Equal(t, OpNone, w.Operation)
	require.True(t, w.OpStartedAt.IsZero())
	require.Empty(t, w.OpID)
	require.Empty(t, w.ArchiveKey)
	require.Zero(t, w.ErrorCount)
	require.Nil(t, w.ErrorInfo)
	require.Empty(t, w.ErrorMessage)
	require.Empty(t, w.PreviousStatus)
	require.Equal(t, DesiredRunning, w.DesiredState)
	require.False(t, w.Deleted())
	require.Equal(t, 300, w.StandbyTTLSeconds)
	require.Equal(t, 86400, w.ArchiveTTLSeconds)
	require.True(t, w.LastAccessAt.IsZero())
	require.Equal(t, t0, w.CreatedAt)
	require.Equal(t, t0, w.UpdatedAt)
}

func TestWorkspaceAccessors(t *testing.T) {
	require.False(t, row().Terminal())
	require.False(t, row(withError(false, t0)).Terminal())
	require.True(t, row(withTerminal()).Terminal())
	require.True(t, row(withDeleted()).Deleted())
	require.Empty(t, row().RestoreMarker())
	require.Equal(t, "k", row(withMarker("k")).RestoreMarker())
}

func TestCloneIsDeep(t *testing.T) {
	w := row(withMarker("k"), withTerminal())
	c := w.Clone()
	require.Equal(t, *w, c)
	c.HomeCtx.RestoreMarker = "other"
	c.ErrorInfo.Message = "changed"
	c.ErrorInfo.Context["code"] = "Y"
	require.Equal(t, "k", w.RestoreMarker())
	require.Equal(t, "boom", w.ErrorInfo.Message)
	require.Equal(t, "X", w.ErrorInfo.Context["code"])
}
