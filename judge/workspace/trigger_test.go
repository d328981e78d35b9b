package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// SPEC 3: the StateReconciler publishes monitor:trigger after each claim,
// completion and ERROR entry.
func TestMonitorTriggerAfterClaimsCompletionsAndErrorEntries(t *testing.T) {
	r := run(t, provisionAndStart(newTrace()), nil, "monitor-trigger")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("monitor-trigger"))

	// A claim with no trigger: flagged once the step is over.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
		check("c1", 1, "").call("c1", MProvision, "w", "", "", "").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "monitor-trigger")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "the claim of w was not followed by a publish of monitor:trigger")

	// A publish that fails still counts: the trigger is a hint.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
		call("c1", MPublish, "", specMonitorTrigger, "w", "bus unavailable").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "monitor-trigger")
	require.Empty(t, r.Violations)

	// A lease lost right after the write excuses it (SPEC 3.1).
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
		add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FDepose}).at(2*time.Second).check("c1", 1, "not leader")
	r = run(t, tr, nil, "monitor-trigger")
	require.Empty(t, r.Violations)
}

// A write whose answer was lost owes no trigger: its writer saw a failure.
func TestMonitorTriggerNotOwedForAWriteWhoseAnswerWasLost(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
		add(history.Event{Kind: history.KindFault, Instance: "c1", Workspace: "w", Method: FLostResp, Args: "store.Update"}).
		at(2*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "monitor-trigger")
	require.Empty(t, r.Violations)
}
