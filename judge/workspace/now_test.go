package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// SPEC 3, "now in a write": each value SPEC sets to now is the time of
// the write that sets it, within one step.
func TestNowValuesAreTheTimeOfTheirWrite(t *testing.T) {
	ok := provisionAndStart(newTrace())
	r := run(t, ok, nil, "now-values")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("now-values"))

	cases := map[string]func(tr *trace){
		"claim stamped from an earlier read": func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompStateReconciler, "c1", 1, "w", nil,
				contracts.Patch{Operation: contracts.Some(contracts.OpStopping), OpStartedAt: contracts.Some(t0.Add(50 * time.Second))})
		},
		"last_access_at stamped with an old time": func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompAPI, "c1", 1, "w", nil, contracts.Patch{LastAccessAt: contracts.Some(t0.Add(30 * time.Second))})
		},
		"observed_at of a later time": func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{ObservedAt: contracts.Some(t0.Add(2 * time.Minute))})
		},
		"a pass stamping an old observed_at": func(tr *trace) {
			tr.at(time.Minute).add(history.Event{Kind: history.KindNote, Method: NoteHealthPass, Instance: "c1", Epoch: 1,
				Args: NoteObservedAtPrefix + t0.Format(time.RFC3339Nano)})
		},
		"a failure's occurred_at from the tick before": func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(1),
				ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, ErrorCount: 1, OccurredAt: t0.Add(58 * time.Second)})})
		},
		"a soft delete's deleted_at from a read": func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DeletedAt: contracts.Some(t0)})
		},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			tr := provisionAndStart(newTrace())
			bad(tr)
			r := run(t, tr, nil, "now-values")
			require.Len(t, r.Violations, 1, name)
		})
	}

	// Within one step: a value read at the step's start, 200 ms before
	// the write.
	tr := provisionAndStart(newTrace())
	tr.at(time.Minute).write(contracts.CompAPI, "c1", 1, "w", nil, contracts.Patch{LastAccessAt: contracts.Some(t0.Add(time.Minute - 200*time.Millisecond))})
	r = run(t, tr, nil, "now-values")
	require.Empty(t, r.Violations)
}
