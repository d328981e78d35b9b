package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// recordFailure is c1's write recording a failed attempt of the running
// operation with reason (SPEC 4.2.4).
func (tr *trace) recordFailure(id string, reason contracts.Reason, terminal bool, count int) *trace {
	info := &contracts.ErrorInfo{Reason: reason, IsTerminal: terminal, ErrorCount: count, OccurredAt: tr.now}
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, contracts.Patch{ErrorCount: contracts.Some(count), ErrorInfo: contracts.Some(info)})
}

const (
	transportErr = "instances.Start: injected outage: unavailable"
	inUseErr     = "VOLUME_IN_USE: volume ws-w-home is in use by another container"
)

// SPEC 1.5: "A provider failure that carries no code (a transport error)
// is Unreachable", a call's or a lost answer's.
func TestErrorReasonNoCodeIsUnreachable(t *testing.T) {
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(time.Second)
	}
	r := run(t, starting().call("c1", MStart, "w", "img", "", transportErr).recordFailure("w", contracts.ReasonUnreachable, false, 1), nil, "error-reason-no-code")
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Exercised["error-reason-no-code"])

	r = run(t, starting().call("c1", MStart, "w", "img", "", transportErr).recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason-no-code")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "recorded with reason ActionFailed after call #4 failed without a code (a transport error)")
	require.Contains(t, r.Violations[0].Message, "SPEC 1.5 makes it Unreachable")

	// A lost answer without a code, after the effect.
	lost := historyLost("c1", "w", MStart)
	lost.Err = transportErr
	r = run(t, starting().call("c1", MStart, "w", "img", "started", "").add(lost).recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason-no-code")
	require.Len(t, r.Violations, 1)

	// A coded failure is not this checker's: it is error-reason's.
	coded := starting().call("c1", MStart, "w", "img", "", "DOCKER_UNREACHABLE: down").recordFailure("w", contracts.ReasonActionFailed, false, 1)
	r = run(t, coded, nil, "error-reason-no-code")
	require.Zero(t, r.Exercised["error-reason-no-code"])
	require.Empty(t, r.Violations)
	require.Len(t, run(t, coded, nil, "error-reason").Violations, 1)

	// Another instance's failure, a failed write since, or RetryExceeded: not judged.
	require.Empty(t, run(t, starting().call("c2", MStart, "w", "img", "", transportErr).recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason-no-code").Violations)
	require.Empty(t, run(t, starting().call("c1", MStart, "w", "img", "", transportErr).add(failedWrite("c1", "w")).recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason-no-code").Violations)
	require.Empty(t, run(t, starting().call("c1", MStart, "w", "img", "", transportErr).recordFailure("w", contracts.ReasonRetryExceeded, true, 3), nil, "error-reason-no-code").Violations)
}

// SPEC 1.5: VOLUME_IN_USE is ActionFailed (and 4.2.2: a retried one).
func TestErrorReasonVolumeInUseIsActionFailed(t *testing.T) {
	archiving := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).claim("w", contracts.OpArchiving).at(time.Second).
			call("c1", MDelete, "w", "", "removed", "").call("c1", MDeleteVolume, "w", "", "", inUseErr)
	}
	r := run(t, archiving().recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason-in-use")
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Exercised["error-reason-in-use"])

	r = run(t, archiving().recordFailure("w", contracts.ReasonUnreachable, false, 1), nil, "error-reason-in-use")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "recorded with reason Unreachable after call #5 failed with code VOLUME_IN_USE")

	// Not terminal at once: error-entry flags an ERROR entry at the first.
	atOnce := archiving().recordFailure("w", contracts.ReasonActionFailed, true, 1)
	require.Empty(t, run(t, atOnce, nil, "error-reason-in-use").Violations)
	r = run(t, atOnce, nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "none with a code that is terminal at once")
}

// error-entry: a codeless failure is retried, never terminal at once.
func TestErrorEntryNoCodeIsNotTerminalAtOnce(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(time.Second).
		call("c1", MStart, "w", "img", "", transportErr)
	r := run(t, tr.recordFailure("w", contracts.ReasonUnreachable, true, 1), nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "none with a code that is terminal at once")
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(time.Second).
		call("c1", MStart, "w", "img", "", transportErr)
	require.Empty(t, run(t, tr.recordFailure("w", contracts.ReasonUnreachable, false, 1), nil, "error-entry").Violations)
}

// error-reason: the table of 1.5, code by code.
func TestErrorReasonTable(t *testing.T) {
	for code, want := range map[string]contracts.Reason{
		"ARCHIVE_NOT_FOUND": contracts.ReasonDataLost, "CHECKSUM_MISMATCH": contracts.ReasonDataLost,
		"S3_ACCESS_ERROR": contracts.ReasonUnreachable, "K8S_API_ERROR": contracts.ReasonUnreachable, "DOCKER_UNREACHABLE": contracts.ReasonUnreachable,
		"TAR_EXTRACT_FAILED": contracts.ReasonActionFailed, "DISK_FULL": contracts.ReasonActionFailed, "VOLUME_IN_USE": contracts.ReasonActionFailed,
		"STORAGE_JOB_FAILED": contracts.ReasonActionFailed,
	} {
		got, has := specCodeOf(code + ": x")
		require.True(t, has, code)
		require.Equal(t, want, specReasonOf(got, has), code)
	}
	for _, err := range []string{transportErr, "context deadline exceeded", "dial tcp: connection refused", ""} {
		code, has := specCodeOf(err)
		require.False(t, has, err)
		require.Equal(t, contracts.ReasonUnreachable, specReasonOf(code, has), err)
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).at(time.Second).
		call("c1", MRestore, "w", "k", "", "K8S_API_ERROR: down")
	require.Len(t, run(t, tr.recordFailure("w", contracts.ReasonActionFailed, false, 1), nil, "error-reason").Violations, 1)
}
