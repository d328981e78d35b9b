package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// timeOut is c1's Timeout entry of id's op with context ctx (SPEC 4.2.3).
func (tr *trace) timeOut(id string, terminal bool, ctx map[string]any) *trace {
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: terminal, OccurredAt: tr.now, Context: ctx}
	p := contracts.Patch{ErrorInfo: contracts.Some(info), ErrorMessage: contracts.Some("timed out")}
	if terminal {
		p.Operation, p.OpStartedAt = contracts.Some(contracts.OpNone), contracts.Some(time.Time{})
		p.PreviousStatus = contracts.Some(contracts.ObservedStandby)
	}
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, p)
}

func elapsedCtx(op contracts.Operation, n any) map[string]any {
	return map[string]any{"operation": string(op), "elapsed_seconds": n}
}

func TestTimeoutEntryCompletionFirst(t *testing.T) {
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).observe("w", contracts.ObservedStandby).claim("w", contracts.OpStarting)
	}
	// An overdue STARTING that never ran times out.
	r := run(t, starting().at(5*time.Minute+2*time.Second).timeOut("w", true, elapsedCtx(contracts.OpStarting, 302)), nil, "timeout-entry")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("timeout-entry"))

	// The HealthMonitor observed it RUNNING in the same step, before the
	// reconciler ran: the reconciler completes it.
	tr := starting().at(5*time.Minute+2*time.Second).observe("w", contracts.ObservedRunning).timeOut("w", true, elapsedCtx(contracts.OpStarting, 302))
	r = run(t, tr, nil, "timeout-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "completion is checked first")

	// ...unless its completion failed in that step (the stamp's write).
	tr = starting().at(5*time.Minute+2*time.Second).observe("w", contracts.ObservedRunning).add(failedWrite("c1", "w")).
		timeOut("w", true, elapsedCtx(contracts.OpStarting, 302))
	require.Empty(t, run(t, tr, nil, "timeout-entry").Violations)

	// Observed RUNNING long before by a predecessor: the same.
	tr = starting().at(4*time.Minute).observe("w", contracts.ObservedRunning).at(6*time.Minute).timeOut("w", true, elapsedCtx(contracts.OpStarting, 360))
	require.Len(t, run(t, tr, nil, "timeout-entry").Violations, 1)
}

func TestTimeoutEntryOwnWriteInTheTickIsNotJudged(t *testing.T) {
	// RESTORING of an unrestored STANDBY volume: the reconciler's own
	// marker write in this tick makes the condition hold; whether its tick
	// read the row before it is not known.
	key := specArchiveKey("w", "op1")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ArchiveKey: contracts.Some(key)}).
		observe("w", contracts.ObservedStandby).claim("w", contracts.OpRestoring).at(31*time.Minute).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})}).
		timeOut("w", true, elapsedCtx(contracts.OpRestoring, 1860))
	require.Empty(t, run(t, tr, nil, "timeout-entry").Violations)
}

func TestTimeoutEntryTerminalWithItsContext(t *testing.T) {
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(5*time.Minute + 3*time.Second)
	}
	for _, ok := range []any{303, int64(302), 303.0, float64(302.5)} {
		require.Empty(t, run(t, starting().timeOut("w", true, elapsedCtx(contracts.OpStarting, ok)), nil, "timeout-entry").Violations, "%v", ok)
	}
	for what, ctx := range map[string]map[string]any{
		"in minutes":           elapsedCtx(contracts.OpStarting, 5),
		"in milliseconds":      elapsedCtx(contracts.OpStarting, 303000),
		"not a number":         elapsedCtx(contracts.OpStarting, "303"),
		"another operation":    elapsedCtx(contracts.OpStopping, 303),
		"no context":           nil,
		"no elapsed_seconds":   {"operation": "STARTING"},
		"before the timeout":   elapsedCtx(contracts.OpStarting, 120),
		"longer than it ran":   elapsedCtx(contracts.OpStarting, 400),
		"operation in another": {"op": "STARTING", "elapsed_seconds": 303},
	} {
		r := run(t, starting().timeOut("w", true, ctx), nil, "timeout-entry")
		require.Len(t, r.Violations, 1, what)
	}
	r := run(t, starting().timeOut("w", false, elapsedCtx(contracts.OpStarting, 303)), nil, "timeout-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "recorded as retryable")
}
