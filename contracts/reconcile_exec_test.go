package contracts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompleted(t *testing.T) {
	expected := ArchiveKey("w1", "op1")
	previous := ArchiveKey("w1", "op0")
	cases := []struct {
		name string
		w    *Workspace
		done bool
	}{
		{"4.2.2 PROVISIONING: observed STANDBY → done", row(withOp(OpProvisioning), withObserved(ObservedStandby)), true},
		{"4.2.2 PROVISIONING: observed PENDING → not done", row(withOp(OpProvisioning)), false},
		{"4.2.2 PROVISIONING: observed RUNNING → not done", row(withOp(OpProvisioning), withObserved(ObservedRunning)), false},

		{"4.2.2 RESTORING: STANDBY and marker == archive_key → done", row(withOp(OpRestoring), withObserved(ObservedStandby), withArchiveKey(previous), withMarker(previous)), true},
		{"4.2.2 RESTORING: STANDBY without marker → not done (C7)", row(withOp(OpRestoring), withObserved(ObservedStandby), withArchiveKey(previous)), false},
		{"4.2.2 RESTORING: STANDBY with another key's marker → not done", row(withOp(OpRestoring), withObserved(ObservedStandby), withArchiveKey(previous), withMarker(expected)), false},
		{"4.2.2 RESTORING: marker == archive_key but PENDING → not done", row(withOp(OpRestoring), withArchiveKey(previous), withMarker(previous)), false},
		{"4.2.2 RESTORING: null archive_key and empty marker → not done", row(withOp(OpRestoring), withObserved(ObservedStandby), withMarker("")), false},

		{"4.2.2 STARTING: observed RUNNING → done", row(withOp(OpStarting), withObserved(ObservedRunning)), true},
		{"4.2.2 STARTING: observed STANDBY → not done", row(withOp(OpStarting), withObserved(ObservedStandby)), false},

		{"4.2.2 STOPPING: observed STANDBY → done", row(withOp(OpStopping), withObserved(ObservedStandby)), true},
		{"4.2.2 STOPPING: observed RUNNING → not done", row(withOp(OpStopping), withObserved(ObservedRunning)), false},
		{"4.2.2 STOPPING: observed PENDING → not done", row(withOp(OpStopping), withObserved(ObservedPending)), false},

		{"4.2.2 ARCHIVING: PENDING and archive_key == expected key of op_id → done", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected)), true},
		{"4.2.2 ARCHIVING: PENDING with the previous archive_key → not done (SPEC 9)", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(previous)), false},
		{"4.2.2 ARCHIVING: PENDING with null archive_key → not done", row(withOp(OpArchiving), withOpID("op1")), false},
		{"4.2.2 ARCHIVING: expected key but still STANDBY → not done", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected), withObserved(ObservedStandby)), false},
		{"4.2.2 ARCHIVING: null op_id → not done", row(withOp(OpArchiving), withArchiveKey(expected)), false},
		{"4.2.2 ARCHIVING: key of another workspace's op → not done", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(ArchiveKey("w2", "op1"))), false},
		{"4.2.2 ARCHIVING of a soft-deleted ws: expected key and observed DELETED → done (choice)", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected), withDeleted(), withObserved(ObservedDeleted)), true},
		{"4.2.2 ARCHIVING: observed DELETED but not soft-deleted → not done", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected), withObserved(ObservedDeleted)), false},

		{"4.2.2 DELETING: observed DELETED → done", row(withOp(OpDeleting), withDeleted(), withObserved(ObservedDeleted)), true},
		{"4.2.2 DELETING: observed PENDING → not done", row(withOp(OpDeleting), withDeleted()), false},
		{"4.2.2 DELETING: observed STANDBY → not done", row(withOp(OpDeleting), withDeleted(), withObserved(ObservedStandby)), false},

		{"NONE is never completed", row(withObserved(ObservedStandby), withDesired(DesiredStandby)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.done, Completed(tc.w))
		})
	}
}

func TestCompletePatch(t *testing.T) {
	for _, op := range AllOperations[1:] {
		t.Run("4.2.2 on completion of "+string(op), func(t *testing.T) {
			w := row(withOp(op), withOpID("op1"), withCount(2), withError(false, t0))
			p := CompletePatch(w)
			want := []Column{ColOperation, ColOpStartedAt, ColErrorCount, ColErrorInfo, ColErrorMessage}
			if op == OpArchiving {
				want = []Column{ColOperation, ColOpStartedAt, ColOpID, ColErrorCount, ColErrorInfo, ColErrorMessage}
			}
			requireColumns(t, p, want...)
			requireAllowed(t, CompStateReconciler, w, p)
			p.Apply(w, t0)
			require.Equal(t, OpNone, w.Operation)
			require.True(t, w.OpStartedAt.IsZero())
			require.Zero(t, w.ErrorCount)
			require.Nil(t, w.ErrorInfo)
			require.Empty(t, w.ErrorMessage)
			if op == OpArchiving {
				require.Empty(t, w.OpID, "ARCHIVING clears op_id")
			} else {
				require.Equal(t, "op1", w.OpID)
			}
		})
	}
}

func TestStampsLastAccess(t *testing.T) {
	want := map[Operation]bool{
		OpNone: false, OpProvisioning: false, OpRestoring: true, OpStarting: true,
		OpStopping: true, OpArchiving: false, OpDeleting: false,
	}
	for _, op := range AllOperations {
		require.Equal(t, want[op], StampsLastAccess(op), "4.2.2 %s", op)
	}
}

func TestNextArchiveAction(t *testing.T) {
	expected := ArchiveKey("w1", "op1")
	cases := []struct {
		name string
		w    *Workspace
		want ArchiveAction
	}{
		{"4.2.2 ARCHIVING: no op_id yet → ensure op_id", row(withOp(OpArchiving), withObserved(ObservedStandby)), ArchiveEnsureOpID},
		{"4.2.2 resume 1: op_id set, archive_key null → upload", row(withOp(OpArchiving), withObserved(ObservedStandby), withOpID("op1")), ArchiveUpload},
		{"4.2.2 resume 1: op_id set, archive_key is the previous key → upload again with the same op_id", row(withOp(OpArchiving), withObserved(ObservedStandby), withOpID("op1"), withArchiveKey(ArchiveKey("w1", "op0"))), ArchiveUpload},
		{"4.2.2 resume 2: expected key committed, observed STANDBY → delete the volume", row(withOp(OpArchiving), withObserved(ObservedStandby), withOpID("op1"), withArchiveKey(expected)), ArchiveDeleteVolume},
		{"4.2.2 resume 3: expected key committed, observed PENDING → only complete", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected)), ArchiveAwait},
		{"4.2.2 resume 3: soft-deleted and observed DELETED → only complete", row(withOp(OpArchiving), withOpID("op1"), withArchiveKey(expected), withDeleted(), withObserved(ObservedDeleted)), ArchiveAwait},
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
		op    Operation
		w     *Workspace
		holds bool
	}{
		{"4.2 step 5: claim on operation NONE", OpStarting, row(withObserved(ObservedStandby)), true},
		{"C4: no claim while an operation runs", OpStarting, row(withOp(OpProvisioning)), false},
		{"C11: no claim on a terminal error", OpStarting, row(withTerminal()), false},
		{"4.2.4: a retried error does not block a claim", OpStarting, row(withError(false, t0)), true},
		{"4.2 step 2: DELETING claimed despite a terminal error", OpDeleting, row(withTerminal(), withDeleted(), withHealth(HealthError)), true},
		{"C4: DELETING not claimed while an operation runs", OpDeleting, row(withOp(OpArchiving), withDeleted()), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.holds, ClaimCond(tc.op).Holds(tc.w))
		})
	}
	for _, op := range AllOperations[1:] {
		c := ClaimCond(op)
		require.Equal(t, Some(OpNone), c.Operation, "%s", op)
		require.Equal(t, op != OpDeleting, c.NotTerminal, "%s", op)
	}
}

func TestClaimPatch(t *testing.T) {
	now := t0.Add(time.Minute)
	key := ArchiveKey("w1", "op0")
	cases := []struct {
		name  string
		w     *Workspace
		op    Operation
		cols  []Column
		check func(t *testing.T, after *Workspace)
	}{
		{
			"4.2.2 ARCHIVING claim creates op_id when null",
			row(withObserved(ObservedStandby), withDesired(DesiredPending)), OpArchiving,
			[]Column{ColOperation, ColOpStartedAt, ColOpID, ColErrorCount, ColErrorInfo, ColErrorMessage},
			func(t *testing.T, a *Workspace) { require.Equal(t, "new-op", a.OpID) },
		},
		{
			"C7: ARCHIVING claim keeps an existing op_id (same op_id, same key)",
			row(withObserved(ObservedStandby), withDesired(DesiredPending), withOpID("op1")), OpArchiving,
			[]Column{ColOperation, ColOpStartedAt, ColErrorCount, ColErrorInfo, ColErrorMessage},
			func(t *testing.T, a *Workspace) { require.Equal(t, "op1", a.OpID) },
		},
		{
			"C7: RESTORING claim clears a stale restore_marker",
			row(withArchiveKey(key), withMarker(key)), OpRestoring,
			[]Column{ColHomeCtx, ColOperation, ColOpStartedAt, ColErrorCount, ColErrorInfo, ColErrorMessage},
			func(t *testing.T, a *Workspace) { require.Empty(t, a.RestoreMarker()) },
		},
		{
			"RESTORING claim without a marker leaves home_ctx alone",
			row(withArchiveKey(key)), OpRestoring,
			[]Column{ColOperation, ColOpStartedAt, ColErrorCount, ColErrorInfo, ColErrorMessage},
			func(t *testing.T, a *Workspace) { require.Nil(t, a.HomeCtx) },
		},
		{
			"STARTING claim clears a retried error from before",
			row(withObserved(ObservedStandby), withCount(1), withError(false, t0)), OpStarting,
			[]Column{ColOperation, ColOpStartedAt, ColErrorCount, ColErrorInfo, ColErrorMessage},
			func(t *testing.T, a *Workspace) {
				require.Zero(t, a.ErrorCount)
				require.Nil(t, a.ErrorInfo)
				require.Empty(t, a.ErrorMessage)
			},
		},
		{
			"4.2 step 2: DELETING claim of a soft-deleted ERROR ws keeps its terminal error, restarts its attempts",
			row(withDeleted(), withHealth(HealthError), withCount(3), withTerminal(), withOpID("op1")), OpDeleting,
			[]Column{ColOperation, ColOpStartedAt, ColErrorCount},
			func(t *testing.T, a *Workspace) {
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
			requireAllowed(t, CompStateReconciler, tc.w, p)
			after := tc.w.Clone()
			p.Apply(&after, now)
			require.Equal(t, tc.op, after.Operation)
			require.Equal(t, now, after.OpStartedAt)
			tc.check(t, &after)
		})
	}
}

func TestTimeout(t *testing.T) {
	want := map[Operation]time.Duration{
		OpNone:         0,
		OpProvisioning: 5 * time.Minute,
		OpRestoring:    30 * time.Minute,
		OpStarting:     5 * time.Minute,
		OpStopping:     5 * time.Minute,
		OpArchiving:    30 * time.Minute,
		OpDeleting:     10 * time.Minute,
	}
	for _, op := range AllOperations {
		require.Equal(t, want[op], Timeout(op), "4.2.3 %s", op)
	}
}

func TestTimedOut(t *testing.T) {
	for _, op := range AllOperations[1:] {
		limit := Timeout(op)
		w := row(withOp(op))
		require.False(t, TimedOut(w, t0.Add(limit-time.Second)), "4.2.3 %s before its limit", op)
		require.False(t, TimedOut(w, t0.Add(limit)), "4.2.3 %s exactly at its limit is not exceeded", op)
		require.True(t, TimedOut(w, t0.Add(limit+time.Nanosecond)), "4.2.3 %s past its limit", op)
	}
	require.False(t, TimedOut(row(), t0.Add(24*time.Hour)), "NONE never times out")
	require.False(t, TimedOut(row(withOp(OpStarting), withOpStarted(time.Time{})), t0.Add(24*time.Hour)), "no op_started_at, no timeout")
}
