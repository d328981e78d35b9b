package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestCompleted(t *testing.T) {
	expected := contracts.ArchiveKey("w1", "op1")
	previous := contracts.ArchiveKey("w1", "op0")
	cases := []struct {
		name string
		w    *contracts.Workspace
		done bool
	}{
		{"4.2.2 PROVISIONING: observed STANDBY → done", row(withOp(contracts.OpProvisioning), withObserved(contracts.ObservedStandby)), true},
		{"4.2.2 PROVISIONING: observed PENDING → not done", row(withOp(contracts.OpProvisioning)), false},
		{"4.2.2 PROVISIONING: observed RUNNING → not done", row(withOp(contracts.OpProvisioning), withObserved(contracts.ObservedRunning)), false},

		{"4.2.2 RESTORING: STANDBY and marker == archive_key → done", row(withOp(contracts.OpRestoring), withObserved(contracts.ObservedStandby), withArchiveKey(previous), withMarker(previous)), true},
		{"4.2.2 RESTORING: STANDBY without marker → not done (C7)", row(withOp(contracts.OpRestoring), withObserved(contracts.ObservedStandby), withArchiveKey(previous)), false},
		{"4.2.2 RESTORING: STANDBY with another key's marker → not done", row(withOp(contracts.OpRestoring), withObserved(contracts.ObservedStandby), withArchiveKey(previous), withMarker(expected)), false},
		{"4.2.2 RESTORING: marker == archive_key but PENDING → not done", row(withOp(contracts.OpRestoring), withArchiveKey(previous), withMarker(previous)), false},
		{"4.2.2 RESTORING: null archive_key and empty marker → not done", row(withOp(contracts.OpRestoring), withObserved(contracts.ObservedStandby), withMarker("")), false},

		{"4.2.2 STARTING: observed RUNNING → done", row(withOp(contracts.OpStarting), withObserved(contracts.ObservedRunning)), true},
		{"4.2.2 STARTING: observed STANDBY → not done", row(withOp(contracts.OpStarting), withObserved(contracts.ObservedStandby)), false},

		{"4.2.2 STOPPING: observed STANDBY → done", row(withOp(contracts.OpStopping), withObserved(contracts.ObservedStandby)), true},
		{"4.2.2 STOPPING: observed RUNNING → not done", row(withOp(contracts.OpStopping), withObserved(contracts.ObservedRunning)), false},
		{"4.2.2 STOPPING: observed PENDING → not done", row(withOp(contracts.OpStopping), withObserved(contracts.ObservedPending)), false},

		{"4.2.2 ARCHIVING: PENDING and archive_key == expected key of op_id → done", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected)), true},
		{"4.2.2 ARCHIVING: PENDING with the previous archive_key → not done (SPEC 9)", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(previous)), false},
		{"4.2.2 ARCHIVING: PENDING with null archive_key → not done", row(withOp(contracts.OpArchiving), withOpID("op1")), false},
		{"4.2.2 ARCHIVING: expected key but still STANDBY → not done", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected), withObserved(contracts.ObservedStandby)), false},
		{"4.2.2 ARCHIVING: null op_id → not done", row(withOp(contracts.OpArchiving), withArchiveKey(expected)), false},
		{"4.2.2 ARCHIVING: key of another workspace's op → not done", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(contracts.ArchiveKey("w2", "op1"))), false},
		{"4.2.2 ARCHIVING of a soft-deleted ws: expected key and observed DELETED → done (choice)", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected), withDeleted(), withObserved(contracts.ObservedDeleted)), true},
		{"4.2.2 ARCHIVING: observed DELETED but not soft-deleted → not done", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected), withObserved(contracts.ObservedDeleted)), false},

		{"4.2.2 DELETING: observed DELETED → done", row(withOp(contracts.OpDeleting), withDeleted(), withObserved(contracts.ObservedDeleted)), true},
		{"4.2.2 DELETING: observed PENDING → not done", row(withOp(contracts.OpDeleting), withDeleted()), false},
		{"4.2.2 DELETING: observed STANDBY → not done", row(withOp(contracts.OpDeleting), withDeleted(), withObserved(contracts.ObservedStandby)), false},

		{"NONE is never completed", row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredStandby)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.done, Completed(tc.w))
		})
	}
}

func TestCompletePatch(t *testing.T) {
	for _, op := range contracts.AllOperations[1:] {
		t.Run("4.2.2 on completion of "+string(op), func(t *testing.T) {
			w := row(withOp(op), withOpID("op1"), withCount(2), withError(false, t0))
			p := CompletePatch(w)
			want := []contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage}
			if op == contracts.OpArchiving {
				want = []contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColOpID, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage}
			}
			requireColumns(t, p, want...)
			requireAllowed(t, contracts.CompStateReconciler, w, p)
			p.Apply(w, t0)
			require.Equal(t, contracts.OpNone, w.Operation)
			require.True(t, w.OpStartedAt.IsZero())
			require.Zero(t, w.ErrorCount)
			require.Nil(t, w.ErrorInfo)
			require.Empty(t, w.ErrorMessage)
			if op == contracts.OpArchiving {
				require.Empty(t, w.OpID, "ARCHIVING clears op_id")
			} else {
				require.Equal(t, "op1", w.OpID)
			}
		})
	}
}

func TestStampsLastAccess(t *testing.T) {
	want := map[contracts.Operation]bool{
		contracts.OpNone: false, contracts.OpProvisioning: false, contracts.OpRestoring: true, contracts.OpStarting: true,
		contracts.OpStopping: true, contracts.OpArchiving: false, contracts.OpDeleting: false,
	}
	for _, op := range contracts.AllOperations {
		require.Equal(t, want[op], StampsLastAccess(op), "4.2.2 %s", op)
	}
}

func TestNextArchiveAction(t *testing.T) {
	expected := contracts.ArchiveKey("w1", "op1")
	cases := []struct {
		name string
		w    *contracts.Workspace
		want ArchiveAction
	}{
		{"4.2.2 ARCHIVING: no op_id yet → ensure op_id", row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby)), ArchiveEnsureOpID},
		{"4.2.2 resume 1: op_id set, archive_key null → upload", row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withOpID("op1")), ArchiveUpload},
		{"4.2.2 resume 1: op_id set, archive_key is the previous key → upload again with the same op_id", row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withOpID("op1"), withArchiveKey(contracts.ArchiveKey("w1", "op0"))), ArchiveUpload},
		{"4.2.2 resume 2: expected key committed, observed STANDBY → delete the volume", row(withOp(contracts.OpArchiving), withObserved(contracts.ObservedStandby), withOpID("op1"), withArchiveKey(expected)), ArchiveDeleteVolume},
		{"4.2.2 resume 3: expected key committed, observed PENDING → only complete", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected)), ArchiveAwait},
		{"4.2.2 resume 3: soft-deleted and observed DELETED → only complete", row(withOp(contracts.OpArchiving), withOpID("op1"), withArchiveKey(expected), withDeleted(), withObserved(contracts.ObservedDeleted)), ArchiveAwait},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, NextArchiveAction(tc.w))
		})
	}
}

func TestClaimCond(t *testing.T) {
	cases := []struct {
		name  string
		op    contracts.Operation
		w     *contracts.Workspace
		holds bool
	}{
		{"4.2 step 5: claim on operation NONE", contracts.OpStarting, row(withObserved(contracts.ObservedStandby)), true},
		{"C4: no claim while an operation runs", contracts.OpStarting, row(withOp(contracts.OpProvisioning)), false},
		{"C11: no claim on a terminal error", contracts.OpStarting, row(withTerminal()), false},
		{"4.2.4: a retried error does not block a claim", contracts.OpStarting, row(withError(false, t0)), true},
		{"4.2 step 2: DELETING claimed despite a terminal error", contracts.OpDeleting, row(withTerminal(), withDeleted(), withHealth(contracts.HealthError)), true},
		{"C4: DELETING not claimed while an operation runs", contracts.OpDeleting, row(withOp(contracts.OpArchiving), withDeleted()), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.holds, ClaimCond(tc.op).Holds(tc.w))
		})
	}
	for _, op := range contracts.AllOperations[1:] {
		c := ClaimCond(op)
		require.Equal(t, contracts.Some(contracts.OpNone), c.Operation, "%s", op)
		require.Equal(t, op != contracts.OpDeleting, c.NotTerminal, "%s", op)
	}
}

func TestClaimPatch(t *testing.T) {
	now := t0.Add(time.Minute)
	key := contracts.ArchiveKey("w1", "op0")
	cases := []struct {
		name  string
		w     *contracts.Workspace
		op    contracts.Operation
		cols  []contracts.Column
		check func(t *testing.T, after *contracts.Workspace)
	}{
		{
			"4.2.2 ARCHIVING claim creates op_id when null",
			row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending)), contracts.OpArchiving,
			[]contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColOpID, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage},
			func(t *testing.T, a *contracts.Workspace) { require.Equal(t, "new-op", a.OpID) },
		},
		{
			"C7: ARCHIVING claim keeps an existing op_id (same op_id, same key)",
			row(withObserved(contracts.ObservedStandby), withDesired(contracts.DesiredPending), withOpID("op1")), contracts.OpArchiving,
			[]contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage},
			func(t *testing.T, a *contracts.Workspace) { require.Equal(t, "op1", a.OpID) },
		},
		{
			"C7: RESTORING claim clears a stale restore_marker",
			row(withArchiveKey(key), withMarker(key)), contracts.OpRestoring,
			[]contracts.Column{contracts.ColHomeCtx, contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage},
			func(t *testing.T, a *contracts.Workspace) { require.Empty(t, a.RestoreMarker()) },
		},
		{
			"RESTORING claim without a marker leaves home_ctx alone",
			row(withArchiveKey(key)), contracts.OpRestoring,
			[]contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage},
			func(t *testing.T, a *contracts.Workspace) { require.Nil(t, a.HomeCtx) },
		},
		{
			"STARTING claim clears a retried error from before",
			row(withObserved(contracts.ObservedStandby), withCount(1), withError(false, t0)), contracts.OpStarting,
			[]contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage},
			func(t *testing.T, a *contracts.Workspace) {
				require.Zero(t, a.ErrorCount)
				require.Nil(t, a.ErrorInfo)
				require.Empty(t, a.ErrorMessage)
			},
		},
		{
			"4.2 step 2: DELETING claim of a soft-deleted ERROR ws keeps its terminal error, restarts its attempts",
			row(withDeleted(), withHealth(contracts.HealthError), withCount(3), withTerminal(), withOpID("op1")), contracts.OpDeleting,
			[]contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount},
			func(t *testing.T, a *contracts.Workspace) {
				require.True(t, a.Terminal())
				require.Equal(t, 0, a.ErrorCount)
				require.Equal(t, "op1", a.OpID)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, ClaimCond(tc.op).Holds(tc.w))
			p := ClaimPatch(tc.w, tc.op, now, "new-op")
			requireColumns(t, p, tc.cols...)
			requireAllowed(t, contracts.CompStateReconciler, tc.w, p)
			after := tc.w.Clone()
			p.Apply(&after, now)
			require.Equal(t, tc.op, after.Operation)
			require.Equal(t, now, after.OpStartedAt)
			tc.check(t, &after)
		})
	}
}

func TestTimeout(t *testing.T) {
	want := map[contracts.Operation]time.Duration{
		contracts.OpNone:         0,
		contracts.OpProvisioning: 5 * time.Minute,
		contracts.OpRestoring:    30 * time.Minute,
		contracts.OpStarting:     5 * time.Minute,
		contracts.OpStopping:     5 * time.Minute,
		contracts.OpArchiving:    30 * time.Minute,
		contracts.OpDeleting:     10 * time.Minute,
	}
	for _, op := range contracts.AllOperations {
		require.Equal(t, want[op], Timeout(op), "4.2.3 %s", op)
	}
}

func TestTimedOut(t *testing.T) {
	for _, op := range contracts.AllOperations[1:] {
		limit := Timeout(op)
		w := row(withOp(op))
		require.False(t, TimedOut(w, t0.Add(limit-time.Second)), "4.2.3 %s before its limit", op)
		require.False(t, TimedOut(w, t0.Add(limit)), "4.2.3 %s exactly at its limit is not exceeded", op)
		require.True(t, TimedOut(w, t0.Add(limit+time.Nanosecond)), "4.2.3 %s past its limit", op)
	}
	require.False(t, TimedOut(row(), t0.Add(24*time.Hour)), "NONE never times out")
	require.False(t, TimedOut(row(withOp(contracts.OpStarting), withOpStarted(time.Time{})), t0.Add(24*time.Hour)), "no op_started_at, no timeout")
}
