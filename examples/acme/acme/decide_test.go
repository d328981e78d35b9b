package acme

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

var t0 = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

// row is a healthy, idle workspace observed obs and desired d, changed by
// mods.
func row(obs contracts.ObservedStatus, d contracts.DesiredState, mods ...func(*contracts.Workspace)) contracts.Workspace {
	w := contracts.NewWorkspace("w1", "alice", "dev", "img", t0)
	w.ObservedStatus, w.DesiredState = obs, d
	for _, m := range mods {
		m(&w)
	}
	return w
}

func archived(key, marker string) func(*contracts.Workspace) {
	return func(w *contracts.Workspace) {
		w.ArchiveKey = key
		if marker != "" {
			w.HomeCtx = &contracts.HomeCtx{RestoreMarker: marker}
		}
	}
}

func softDeleted(w *contracts.Workspace) { w.DeletedAt, w.DesiredState = t0, contracts.DesiredPending }

func healthError(w *contracts.Workspace) { w.HealthStatus = contracts.HealthError }

var keyA = contracts.ArchiveKey("w1", "op-a")

// SPEC 4.2.1, row by row, with the unrestored rule.
func TestChoose(t *testing.T) {
	const (
		pending = contracts.ObservedPending
		standby = contracts.ObservedStandby
		running = contracts.ObservedRunning
		deleted = contracts.ObservedDeleted
		dP      = contracts.DesiredPending
		dS      = contracts.DesiredStandby
		dR      = contracts.DesiredRunning
		none    = contracts.Operation("")
	)
	for _, tc := range []struct {
		name string
		w    contracts.Workspace
		want contracts.Operation
	}{
		{"deleted PENDING → DELETING", row(pending, dP, softDeleted), contracts.OpDeleting},
		{"deleted PENDING in ERROR → DELETING", row(pending, dP, softDeleted, healthError), contracts.OpDeleting},
		{"deleted STANDBY in ERROR → DELETING", row(standby, dP, softDeleted, healthError), contracts.OpDeleting},
		{"deleted RUNNING in ERROR → DELETING", row(running, dP, softDeleted, healthError), contracts.OpDeleting},
		{"deleted RUNNING → STOPPING first", row(running, dP, softDeleted), contracts.OpStopping},
		{"deleted STANDBY → ARCHIVING first", row(standby, dP, softDeleted), contracts.OpArchiving},
		{"DELETED → nothing", row(deleted, dP, softDeleted), none},
		{"PENDING, wants STANDBY, no archive → PROVISIONING", row(pending, dS), contracts.OpProvisioning},
		{"PENDING, wants RUNNING, no archive → PROVISIONING", row(pending, dR), contracts.OpProvisioning},
		{"PENDING, wants RUNNING, archived → RESTORING", row(pending, dR, archived(keyA, keyA)), contracts.OpRestoring},
		{"PENDING, wants PENDING → nothing", row(pending, dP, archived(keyA, keyA)), none},
		{"STANDBY, wants RUNNING → STARTING", row(standby, dR), contracts.OpStarting},
		{"STANDBY restored, wants RUNNING → STARTING", row(standby, dR, archived(keyA, keyA)), contracts.OpStarting},
		{"STANDBY unrestored, wants RUNNING → RESTORING", row(standby, dR, archived(keyA, "")), contracts.OpRestoring},
		{"STANDBY unrestored, wants STANDBY → RESTORING", row(standby, dS, archived(keyA, "other")), contracts.OpRestoring},
		{"STANDBY, wants STANDBY → nothing", row(standby, dS, archived(keyA, keyA)), none},
		{"STANDBY, wants PENDING → ARCHIVING", row(standby, dP), contracts.OpArchiving},
		{"RUNNING, wants STANDBY → STOPPING", row(running, dS), contracts.OpStopping},
		{"RUNNING, wants PENDING → STOPPING (never one step)", row(running, dP), contracts.OpStopping},
		{"RUNNING, wants RUNNING → nothing", row(running, dR), none},
		{"ERROR, not deleted → nothing (C11)", row(standby, dR, healthError), none},
		{"terminal error_info before health ERROR → nothing", row(standby, dR, func(w *contracts.Workspace) {
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
		}), none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := choose(&tc.w)
			require.Equal(t, tc.want != "", ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestArchiveOpID(t *testing.T) {
	fresh := func() string { return "fresh" }
	w := row(contracts.ObservedStandby, contracts.DesiredPending, archived(keyA, ""))
	require.Equal(t, "op-a", archiveOpID(&w, fresh), "an unrestored volume reuses its archive's op_id: nothing is uploaded")
	w = row(contracts.ObservedStandby, contracts.DesiredPending, archived(keyA, keyA))
	require.Equal(t, "fresh", archiveOpID(&w, fresh), "a volume that may have changed gets a new op_id")
	w = row(contracts.ObservedStandby, contracts.DesiredPending, func(w *contracts.Workspace) { w.OpID = "kept" })
	require.Equal(t, "fresh", archiveOpID(&w, fresh), "an op_id kept by an ERROR entry is not reused")
}

// SPEC 4.2.2's completion conditions, observed in the DB (C1, C7).
func TestCompleted(t *testing.T) {
	op := func(o contracts.Operation) func(*contracts.Workspace) {
		return func(w *contracts.Workspace) { w.Operation = o }
	}
	withOpID := func(w *contracts.Workspace) { w.OpID = "op-a" }
	for _, tc := range []struct {
		name string
		w    contracts.Workspace
		want bool
	}{
		{"PROVISIONING at STANDBY", row(contracts.ObservedStandby, contracts.DesiredRunning, op(contracts.OpProvisioning)), true},
		{"PROVISIONING at PENDING", row(contracts.ObservedPending, contracts.DesiredRunning, op(contracts.OpProvisioning)), false},
		{"RESTORING with the marker", row(contracts.ObservedStandby, contracts.DesiredRunning, op(contracts.OpRestoring), archived(keyA, keyA)), true},
		{"RESTORING without the marker", row(contracts.ObservedStandby, contracts.DesiredRunning, op(contracts.OpRestoring), archived(keyA, "")), false},
		{"STARTING at RUNNING", row(contracts.ObservedRunning, contracts.DesiredRunning, op(contracts.OpStarting)), true},
		{"STARTING at STANDBY", row(contracts.ObservedStandby, contracts.DesiredRunning, op(contracts.OpStarting)), false},
		{"STOPPING at STANDBY", row(contracts.ObservedStandby, contracts.DesiredStandby, op(contracts.OpStopping)), true},
		{"ARCHIVING at PENDING with its key", row(contracts.ObservedPending, contracts.DesiredPending, op(contracts.OpArchiving), withOpID, archived(keyA, keyA)), true},
		{"ARCHIVING at PENDING with an older key", row(contracts.ObservedPending, contracts.DesiredPending, op(contracts.OpArchiving), withOpID,
			archived(contracts.ArchiveKey("w1", "older"), "")), false},
		{"ARCHIVING of a deleted workspace at DELETED", row(contracts.ObservedDeleted, contracts.DesiredPending, op(contracts.OpArchiving), withOpID, archived(keyA, keyA), softDeleted), true},
		{"ARCHIVING at DELETED, not deleted", row(contracts.ObservedDeleted, contracts.DesiredPending, op(contracts.OpArchiving), withOpID, archived(keyA, keyA)), false},
		{"DELETING at DELETED", row(contracts.ObservedDeleted, contracts.DesiredPending, op(contracts.OpDeleting), softDeleted), true},
		{"DELETING at STANDBY", row(contracts.ObservedStandby, contracts.DesiredPending, op(contracts.OpDeleting), softDeleted), false},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, completed(&tc.w)) })
	}
}

// SPEC 4.1's rules.
func TestObserve(t *testing.T) {
	for _, tc := range []struct {
		name   string
		w      contracts.Workspace
		s      seen
		obs    contracts.ObservedStatus
		health contracts.HealthStatus
		flag   bool
	}{
		{"nothing", row(contracts.ObservedPending, contracts.DesiredRunning), seen{}, contracts.ObservedPending, contracts.HealthOK, false},
		{"volume", row(contracts.ObservedPending, contracts.DesiredRunning), seen{volume: true}, contracts.ObservedStandby, contracts.HealthOK, false},
		{"stopped container and volume", row(contracts.ObservedRunning, contracts.DesiredRunning), seen{container: true, volume: true}, contracts.ObservedStandby, contracts.HealthOK, false},
		{"running", row(contracts.ObservedStandby, contracts.DesiredRunning), seen{container: true, running: true, volume: true}, contracts.ObservedRunning, contracts.HealthOK, false},
		{"container without volume: flagged once", row(contracts.ObservedRunning, contracts.DesiredRunning), seen{container: true, running: true},
			contracts.ObservedRunning, contracts.HealthError, true},
		{"container without volume, error_info taken", row(contracts.ObservedRunning, contracts.DesiredRunning, func(w *contracts.Workspace) {
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonUnreachable}
		}), seen{container: true}, contracts.ObservedPending, contracts.HealthError, false},
		{"terminal error_info", row(contracts.ObservedStandby, contracts.DesiredRunning, func(w *contracts.Workspace) {
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
		}), seen{volume: true}, contracts.ObservedStandby, contracts.HealthError, false},
		{"deleted, all gone", row(contracts.ObservedStandby, contracts.DesiredPending, softDeleted), seen{}, contracts.ObservedDeleted, contracts.HealthOK, false},
		{"deleted, volume left", row(contracts.ObservedStandby, contracts.DesiredPending, softDeleted), seen{volume: true}, contracts.ObservedStandby, contracts.HealthOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, health, flag := observe(&tc.w, tc.s)
			require.Equal(t, tc.obs, obs)
			require.Equal(t, tc.health, health)
			require.Equal(t, tc.flag, flag)
		})
	}
}

// SPEC 4.4: each TTL lowers only the desired state it applies to.
func TestTTLTarget(t *testing.T) {
	now := t0.Add(2 * time.Hour)
	idle := func(d time.Duration) func(*contracts.Workspace) {
		return func(w *contracts.Workspace) {
			w.LastAccessAt = now.Add(-d)
			w.StandbyTTLSeconds, w.ArchiveTTLSeconds = 300, 3600
		}
	}
	for _, tc := range []struct {
		name string
		w    contracts.Workspace
		a    activity
		want contracts.DesiredState
	}{
		{"idle RUNNING past its standby TTL → STANDBY", row(contracts.ObservedRunning, contracts.DesiredRunning, idle(301*time.Second)), activity{}, contracts.DesiredStandby},
		{"exactly at the TTL → nothing", row(contracts.ObservedRunning, contracts.DesiredRunning, idle(300*time.Second)), activity{}, ""},
		{"an open connection → nothing", row(contracts.ObservedRunning, contracts.DesiredRunning, idle(time.Hour)), activity{connections: 1}, ""},
		{"an idle timer → nothing", row(contracts.ObservedRunning, contracts.DesiredRunning, idle(time.Hour)), activity{idleTimer: true}, ""},
		{"RUNNING but its user wants STANDBY → nothing", row(contracts.ObservedRunning, contracts.DesiredStandby, idle(time.Hour)), activity{}, ""},
		{"STANDBY left by its user past the archive TTL → PENDING", row(contracts.ObservedStandby, contracts.DesiredStandby, idle(61*time.Minute)), activity{}, contracts.DesiredPending},
		{"STANDBY whose user wants RUNNING → nothing (restart, not archive)", row(contracts.ObservedStandby, contracts.DesiredRunning, idle(10*time.Hour)), activity{}, ""},
		{"an operation in progress → nothing", row(contracts.ObservedRunning, contracts.DesiredRunning, idle(time.Hour), func(w *contracts.Workspace) {
			w.Operation = contracts.OpStopping
		}), activity{}, ""},
		{"soft-deleted → nothing", row(contracts.ObservedStandby, contracts.DesiredStandby, idle(10*time.Hour), softDeleted), activity{}, ""},
		{"ERROR → nothing", row(contracts.ObservedStandby, contracts.DesiredStandby, idle(10*time.Hour), healthError), activity{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ttlTarget(&tc.w, tc.a, now)
			require.Equal(t, tc.want != "", ok)
			require.Equal(t, tc.want, got)
		})
	}
}

// C9: what the GC keeps.
func TestProtected(t *testing.T) {
	other := contracts.ArchiveKey("w1", "op-b")
	w := row(contracts.ObservedPending, contracts.DesiredPending, archived(keyA, keyA))
	require.True(t, protected(&w, keyA))
	require.True(t, protected(&w, contracts.MetaKey(keyA)))
	require.False(t, protected(&w, other))
	w.OpID = "op-b"
	require.True(t, protected(&w, contracts.MetaKey(other)), "under the op_id in progress")
	w.OpID = ""
	w.HealthStatus = contracts.HealthError
	require.True(t, protected(&w, other), "every archive of a workspace in ERROR")
	softDeleted(&w)
	require.False(t, protected(&w, keyA), "a soft-deleted workspace protects nothing")
	require.False(t, protected(nil, keyA), "no row, no protection")
}

// SPEC 3's adaptive period.
func TestPeriod(t *testing.T) {
	idle := row(contracts.ObservedRunning, contracts.DesiredRunning)
	diverged := row(contracts.ObservedStandby, contracts.DesiredRunning)
	busy := row(contracts.ObservedStandby, contracts.DesiredRunning, func(w *contracts.Workspace) { w.Operation = contracts.OpStarting })
	stuck := row(contracts.ObservedStandby, contracts.DesiredRunning, healthError)
	require.Equal(t, periodIdle, period([]contracts.Workspace{idle}))
	require.Equal(t, periodIdle, period([]contracts.Workspace{idle, stuck}), "ERROR workspaces do not speed it up")
	require.Equal(t, periodDiverged, period([]contracts.Workspace{idle, diverged}))
	require.Equal(t, periodBusy, period([]contracts.Workspace{diverged, busy}))
}

// SPEC 1.5's codes.
func TestClassify(t *testing.T) {
	for code, want := range map[contracts.ErrorCode]struct {
		reason   contracts.Reason
		terminal bool
	}{
		contracts.CodeChecksumMismatch:     {contracts.ReasonDataLost, true},
		contracts.CodeMetaNotFound:         {contracts.ReasonDataLost, true},
		contracts.CodeS3AccessError:        {contracts.ReasonUnreachable, false},
		contracts.CodeDockerUnreachable:    {contracts.ReasonUnreachable, false},
		contracts.CodeContainerStartFailed: {contracts.ReasonActionFailed, false},
		contracts.CodeDiskFull:             {contracts.ReasonActionFailed, true},
		contracts.CodeVolumeNotFound:       {contracts.ReasonActionFailed, true},
		contracts.CodeVolumeInUse:          {contracts.ReasonActionFailed, false},
		"SOMETHING_NEW":                    {contracts.ReasonActionFailed, false},
	} {
		reason, terminal := classify(code)
		require.Equal(t, want.reason, reason, code)
		require.Equal(t, want.terminal, terminal, code)
	}
}
