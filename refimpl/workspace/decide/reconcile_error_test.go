package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestFailurePatch(t *testing.T) {
	now := t0.Add(time.Minute)
	retriedCols := []contracts.Column{contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage}
	entryCols := []contracts.Column{contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage, contracts.ColPreviousStatus}
	cases := []struct {
		name     string
		count    int // error_count before
		code     contracts.ErrorCode
		terminal bool
		reason   contracts.Reason
	}{
		{"4.2.4: first failure (ActionFailed) → count 1, retried", 0, contracts.CodeContainerStartFailed, false, contracts.ReasonActionFailed},
		{"4.2.4: second failure (Unreachable) → count 2, retried", 1, contracts.CodeDockerUnreachable, false, contracts.ReasonUnreachable},
		{"4.2.4: third failure → RetryExceeded, terminal", 2, contracts.CodeContainerStartFailed, true, contracts.ReasonRetryExceeded},
		{"4.2.4: a count already past the limit stays terminal", 5, contracts.CodeS3AccessError, true, contracts.ReasonRetryExceeded},
		{"4.2.4: DataLost on the first failure → terminal at once", 0, contracts.CodeChecksumMismatch, true, contracts.ReasonDataLost},
		{"4.2.4: ARCHIVE_NOT_FOUND → terminal DataLost", 1, contracts.CodeArchiveNotFound, true, contracts.ReasonDataLost},
		{"4.2.4: DISK_FULL (admin-only) on the first failure → terminal ActionFailed", 0, contracts.CodeDiskFull, true, contracts.ReasonActionFailed},
		{"4.2.4: CONTAINER_CREATE_FAILED (admin-only) → terminal ActionFailed", 0, contracts.CodeContainerCreate, true, contracts.ReasonActionFailed},
		{"4.2.4: VOLUME_NOT_FOUND (admin-only) → terminal ActionFailed", 1, contracts.CodeVolumeNotFound, true, contracts.ReasonActionFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting), withOpID("op1"), withCount(tc.count))
			ctx := map[string]any{"action": "start"}
			p, terminal := FailurePatch(w, tc.code, "it failed", ctx, now)
			require.Equal(t, tc.terminal, terminal)
			require.Equal(t, map[string]any{"action": "start"}, ctx, "the caller's context is not modified")
			requireAllowed(t, contracts.CompStateReconciler, w, p)
			require.Equal(t, contracts.Some(tc.count+1), p.ErrorCount)
			require.True(t, p.ErrorInfo.Set)
			info := p.ErrorInfo.V
			require.NotNil(t, info)
			require.Equal(t, tc.reason, info.Reason)
			require.Equal(t, tc.terminal, info.IsTerminal)
			require.Equal(t, contracts.OpStarting, info.Operation)
			require.Equal(t, tc.count+1, info.ErrorCount)
			require.Equal(t, now, info.OccurredAt)
			require.Equal(t, info.Message, p.ErrorMessage.V)
			require.False(t, p.OpID.Set, "op_id kept")

			if !terminal {
				requireColumns(t, p, retriedCols...)
				require.Equal(t, "it failed", info.Message)
				require.Equal(t, map[string]any{"action": "start", "code": string(tc.code)}, info.Context)
				// The operation stays in progress and is retried 30 s later.
				after := w.Clone()
				p.Apply(&after, now)
				require.Equal(t, StepWait, classify(&after, now.Add(RetryInterval-time.Second), now).Kind)
				require.Equal(t, StepExecute, classify(&after, now.Add(RetryInterval), now).Kind)
				return
			}
			// The terminal write is the ERROR entry of 4.2.5.
			requireColumns(t, p, entryCols...)
			require.Equal(t, contracts.Some(contracts.OpNone), p.Operation)
			require.Equal(t, contracts.Some(time.Time{}), p.OpStartedAt)
			require.Equal(t, contracts.Some(contracts.ObservedStandby), p.PreviousStatus)
			if tc.reason == contracts.ReasonRetryExceeded {
				require.Equal(t, MaxAttempts, info.Context["max_retries"])
				require.Equal(t, 3, info.Context["max_retries"])
				require.Equal(t, "it failed", info.Context["last_error"])
				require.Contains(t, info.Message, "it failed")
			} else {
				require.Equal(t, "it failed", info.Message)
				require.Equal(t, string(tc.code), info.Context["code"])
			}
			after := w.Clone()
			p.Apply(&after, now)
			require.Equal(t, "op1", after.OpID)
			require.Equal(t, StepSkipError, classify(&after, now, now).Kind, "C11 after the entry")
		})
	}
}

func TestFailurePatchAtMostThreeAttempts(t *testing.T) {
	// 4.2.4: three attempts in all: failures 1 and 2 are retried, the third
	// is terminal.
	w := row(withObserved(contracts.ObservedStandby), withOp(contracts.OpStarting))
	now := t0
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		p, terminal := FailurePatch(w, contracts.CodeImagePullFailed, "pull", nil, now)
		require.Equal(t, attempt == MaxAttempts, terminal, "attempt %d", attempt)
		p.Apply(w, now)
		now = now.Add(RetryInterval)
	}
	require.Equal(t, 3, w.ErrorCount)
	require.True(t, w.Terminal())
	require.Equal(t, contracts.ReasonRetryExceeded, w.ErrorInfo.Reason)
	require.Equal(t, contracts.OpNone, w.Operation)
}

func TestErrorEntryPatch(t *testing.T) {
	w := row(withObserved(contracts.ObservedRunning), withOp(contracts.OpArchiving), withOpID("op1"), withCount(1))
	info := contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "mismatch", IsTerminal: false, Operation: contracts.OpArchiving}
	p := ErrorEntryPatch(w, info)
	requireColumns(t, p, contracts.ColOperation, contracts.ColOpStartedAt, contracts.ColErrorInfo, contracts.ColErrorMessage, contracts.ColPreviousStatus)
	requireAllowed(t, contracts.CompStateReconciler, w, p)
	require.Equal(t, contracts.Some(contracts.OpNone), p.Operation, "4.2.5: operation = NONE")
	require.Equal(t, contracts.Some(time.Time{}), p.OpStartedAt, "4.2.5: op_started_at = null")
	require.True(t, p.ErrorInfo.V.IsTerminal, "4.2.5: error_info is terminal")
	require.Equal(t, contracts.Some("mismatch"), p.ErrorMessage, "4.2.5: error_message = error_info.message")
	require.Equal(t, contracts.Some(contracts.ObservedRunning), p.PreviousStatus, "4.2.5: previous_status = observed_status")
	require.False(t, p.OpID.Set, "4.2.5: op_id kept (C9)")
	require.False(t, info.IsTerminal, "the caller's info is not modified")

	p.Apply(w, t0)
	require.Equal(t, "op1", w.OpID)
	require.Equal(t, contracts.ObservedRunning, w.ObservedStatus, "observed_status keeps tracking reality")
	require.Equal(t, contracts.HealthOK, w.HealthStatus, "the HealthMonitor sets health ERROR, not the reconciler")
}

func TestEntryInfo(t *testing.T) {
	now := t0.Add(time.Minute)
	t.Run("4.2 step 2: the workspace's own terminal error_info", func(t *testing.T) {
		w := row(withObserved(contracts.ObservedRunning), withOp(contracts.OpStarting), withTerminal())
		info := EntryInfo(w, now)
		require.Equal(t, *w.ErrorInfo, info)
		info.Context["code"] = "changed"
		require.Equal(t, "X", w.ErrorInfo.Context["code"], "a copy, not the row's map")
	})
	for _, tc := range []struct {
		name string
		w    *contracts.Workspace
	}{
		{"4.2 step 2: health ERROR without error_info → terminal Mismatch", row(withHealth(contracts.HealthError), withOp(contracts.OpStarting), withCount(1))},
		{"4.2 step 2: health ERROR with a retried error_info → terminal Mismatch", row(withHealth(contracts.HealthError), withOp(contracts.OpStarting), withCount(1), withError(false, t0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := EntryInfo(tc.w, now)
			require.Equal(t, contracts.ReasonMismatch, info.Reason)
			require.True(t, info.IsTerminal)
			require.Equal(t, contracts.OpStarting, info.Operation)
			require.Equal(t, 1, info.ErrorCount)
			require.Equal(t, contracts.ViolationContainerWithoutVolume, info.Context["violation"])
			require.Equal(t, now, info.OccurredAt)
			require.NotEmpty(t, info.Message)
		})
	}
}

func TestTimeoutInfo(t *testing.T) {
	cases := []struct {
		name    string
		op      contracts.Operation
		elapsed time.Duration
	}{
		{"4.2.3: ARCHIVING after 30 min", contracts.OpArchiving, 30*time.Minute + time.Second},
		{"4.2.3: STARTING after 5 min", contracts.OpStarting, 5*time.Minute + 2*time.Second},
		{"4.2.3: DELETING after 10 min", contracts.OpDeleting, 10*time.Minute + 500*time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := row(withOp(tc.op), withCount(2))
			now := t0.Add(tc.elapsed)
			require.True(t, TimedOut(w, now))
			info := TimeoutInfo(w, now)
			require.Equal(t, contracts.ReasonTimeout, info.Reason)
			require.True(t, info.IsTerminal)
			require.Equal(t, tc.op, info.Operation)
			require.Equal(t, 2, info.ErrorCount)
			require.Equal(t, now, info.OccurredAt)
			require.Equal(t, map[string]any{"operation": string(tc.op), "elapsed_seconds": int(tc.elapsed / time.Second)}, info.Context)
			require.Contains(t, info.Message, string(tc.op))
		})
	}
}
