package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// recordWithContext is c1's write recording a failed attempt of the
// running operation with reason and context (SPEC 4.2.4).
func (tr *trace) recordWithContext(id string, reason contracts.Reason, terminal bool, ctx map[string]any) *trace {
	info := &contracts.ErrorInfo{Reason: reason, IsTerminal: terminal, ErrorCount: 1, Context: ctx, OccurredAt: tr.now}
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, contracts.Patch{ErrorCount: contracts.Some(1), ErrorInfo: contracts.Some(info)})
}

// restoringFailed is a RESTORING whose restore call failed with err.
func restoringFailed(t *testing.T, inst, err string) *trace {
	t.Helper()
	return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).at(time.Second).
		call(inst, MRestore, "w", "k", "", err)
}

// SPEC 1.5: "for a failed actuator call it [context] includes code, the
// provider code".
func TestErrorContextCodeOfTheFailedCall(t *testing.T) {
	const name = "error-context-code"
	s3 := "S3_ACCESS_ERROR: bucket down"

	// The code the call returned: passes, and is the obligation.
	r := run(t, restoringFailed(t, "c1", s3).recordWithContext("w", contracts.ReasonUnreachable, false,
		map[string]any{"code": "S3_ACCESS_ERROR", "endpoint": "s3"}), nil, name)
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Exercised[name])

	// No code in the context, or no context at all.
	for _, ctx := range []map[string]any{{"endpoint": "s3"}, nil} {
		r = run(t, restoringFailed(t, "c1", s3).recordWithContext("w", contracts.ReasonUnreachable, false, ctx), nil, name)
		require.Len(t, r.Violations, 1)
		require.Contains(t, r.Violations[0].Message, "after call #4 failed with code S3_ACCESS_ERROR")
		require.Contains(t, r.Violations[0].Message, "its context has no code")
	}

	// Another code than the call's.
	r = run(t, restoringFailed(t, "c1", s3).recordWithContext("w", contracts.ReasonUnreachable, false,
		map[string]any{"code": "DOCKER_UNREACHABLE"}), nil, name)
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "its context has code DOCKER_UNREACHABLE")

	// A DataLost code is a call's too, terminal at once (4.2.5's entry).
	r = run(t, restoringFailed(t, "c1", "ARCHIVE_NOT_FOUND: no object").recordWithContext("w", contracts.ReasonDataLost, true,
		map[string]any{"archive_key": "k"}), nil, name)
	require.Len(t, r.Violations, 1)
	r = run(t, restoringFailed(t, "c1", "ARCHIVE_NOT_FOUND: no object").recordWithContext("w", contracts.ReasonDataLost, true,
		map[string]any{"archive_key": "k", "code": "ARCHIVE_NOT_FOUND"}), nil, name)
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Exercised[name])

	// The error a fault gave in place of the answer is what the caller saw.
	lost := historyLost("c1", "w", MRestore)
	lost.Err = "K8S_API_ERROR: injected"
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).at(time.Second).
		call("c1", MRestore, "w", "k", "k", "").add(lost)
	r = run(t, tr.recordWithContext("w", contracts.ReasonUnreachable, false, map[string]any{}), nil, name)
	require.Len(t, r.Violations, 1)
}

// What the history cannot tie to a coded call is excused, and not counted.
func TestErrorContextCodeExcusesWhatIsNotTied(t *testing.T) {
	const name = "error-context-code"
	noCode := map[string]any{"endpoint": "s3"}
	for _, c := range []struct {
		what string
		tr   *trace
	}{
		{"another instance's call", restoringFailed(t, "c2", "S3_ACCESS_ERROR: down").
			recordWithContext("w", contracts.ReasonUnreachable, false, noCode)},
		{"a call succeeded since", restoringFailed(t, "c1", "S3_ACCESS_ERROR: down").call("c1", MRestore, "w", "k", "k", "").
			recordWithContext("w", contracts.ReasonUnreachable, false, noCode)},
		{"a failed write since", restoringFailed(t, "c1", "S3_ACCESS_ERROR: down").add(failedWrite("c1", "w")).
			recordWithContext("w", contracts.ReasonUnreachable, false, noCode)},
		{"a transport error (no code)", restoringFailed(t, "c1", transportErr).
			recordWithContext("w", contracts.ReasonUnreachable, false, noCode)},
		{"RetryExceeded", restoringFailed(t, "c1", "S3_ACCESS_ERROR: down").
			recordWithContext("w", contracts.ReasonRetryExceeded, true, map[string]any{"max_retries": 3, "last_error": "down"})},
		{"a reason not the code's (error-reason's)", restoringFailed(t, "c1", "S3_ACCESS_ERROR: down").
			recordWithContext("w", contracts.ReasonMismatch, false, noCode)},
	} {
		r := run(t, c.tr, nil, name)
		require.Empty(t, r.Violations, c.what)
		require.Zero(t, r.Exercised[name], c.what)
	}
}
