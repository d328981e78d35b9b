package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// recovered is an administrator's recovery of w by the API process.
func (tr *trace) recovered(id string) *trace {
	return tr.write(contracts.CompAdmin, "api", 0, id, nil, contracts.Patch{ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil), ErrorCount: contracts.Some(0), ErrorMessage: contracts.Some("")})
}

// SPEC 3: the API publishes monitor:trigger after a recovery.
func TestRecoveryTrigger(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).recovered("w").trigger("api", "w").
		at(5*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "recovery-trigger")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("recovery-trigger"))

	// No publish: flagged once the writer moves on, or at the end.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).recovered("w").
		at(5*time.Second).check("c1", 1, "")
	r = Check(Input{Events: tr.events, Final: &Final{End: t0.Add(time.Hour)}}, &recoveryTrigger{})
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "recovery of w")

	// The leader's own trigger for the workspace is not the API's.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).recovered("w").trigger("c1", "w")
	r = Check(Input{Events: tr.events, Final: &Final{End: t0.Add(time.Hour)}}, &recoveryTrigger{})
	require.Len(t, r.Violations, 1)
}

// SPEC 3: on receiving a monitor:trigger the HealthMonitor runs a pass at
// its next step.
func TestTriggerPassAtNextStep(t *testing.T) {
	subscribed := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			call("c1", MSubscribe, "", specMonitorTrigger, "", "").
			call("c1", MInstancesList, "", "", "", "").trigger("c1", "w")
	}
	// The next step observes.
	tr := subscribed().at(time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").at(2*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "trigger-pass")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("trigger-pass"))

	// The next step does not, nor the one after.
	tr = subscribed().at(time.Second).check("c1", 1, "").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "trigger-pass")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "stepped twice since without an observation pass")

	// Checks before actuator calls share their step's instant.
	tr = subscribed().check("c1", 1, "").at(time.Second).check("c1", 1, "").check("c1", 1, "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "trigger-pass")
	require.Empty(t, r.Violations)

	// Without a subscription nothing is received; a dropped message is
	// never received either.
	tr = newTrace().leader("c1", 1).trigger("c1", "w").at(time.Second).check("c1", 1, "").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "trigger-pass")
	require.Empty(t, r.Violations)
	tr = newTrace().leader("c1", 1).call("c1", MSubscribe, "", specMonitorTrigger, "", "").
		add(history.Event{Kind: history.KindFault, Method: FDropMsgs, Args: "1"}).trigger("c1", "w").
		at(time.Second).check("c1", 1, "").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "trigger-pass")
	require.Empty(t, r.Violations)
}

// SPEC 3 "Failures" and 4.2: a tick handles every row; a failure on one
// workspace skips only that one.
func TestReconcileTickClaimsEveryRowDespiteAFailure(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("a", contracts.DesiredRunning).insert("b", contracts.DesiredRunning).
			at(time.Second).check("c1", 1, "")
	}
	failedClaim := history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c1", Epoch: 1, Workspace: "a", Method: "store.Update",
		Patch: &contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)}, Cond: &contracts.Cond{}, Err: "db unavailable"}
	// Both claimed in the tick (the first one failing): fine.
	tr := base().add(failedClaim).claim("b", contracts.OpProvisioning).at(2*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "reconcile-tick-rows")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("reconcile-tick-rows"))

	// The failure on a ends the tick: b, which called for PROVISIONING,
	// is left for the next one.
	tr = base().add(failedClaim).at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-tick-rows")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "did not claim PROVISIONING on b")

	// A failed read may skip the whole tick: not judged.
	tr = base().add(failedClaim).call("c1", "store.List", "", "", "", "db unavailable").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-tick-rows")
	require.Empty(t, r.Violations)

	// A row another writer touched at that instant is not judged.
	tr = base().observe("b", contracts.ObservedPending).add(failedClaim).at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-tick-rows")
	require.Empty(t, r.Violations)
}

// SPEC 3: a leader's next step is never more than 2 s after the current one.
func TestStepBound(t *testing.T) {
	tr := newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "").check("c1", 1, "").at(3*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "step-bound")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("step-bound"))

	tr = newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "").at(3500*time.Millisecond).check("c1", 1, "")
	r = run(t, tr, nil, "step-bound")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "2.5s later")

	// A leader that gave the lead up steps as it likes until it leads again.
	tr = newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "not leader").at(10*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "step-bound")
	require.Empty(t, r.Violations)
}

// SPEC 3: only a failure of the lock session or a refused write ends a
// leadership; a failed listing only skips a tick.
func TestReleaseCause(t *testing.T) {
	tr := newTrace().leader("c1", 1).check("c1", 1, "not leader").add(history.Event{Kind: history.KindLeader, Method: "release", Instance: "c1", Epoch: 1})
	r := run(t, tr, nil, "release-cause")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("release-cause"))

	tr = newTrace().leader("c1", 1).call("c1", MInstancesList, "", "", "", "docker unreachable").
		add(history.Event{Kind: history.KindLeader, Method: "release", Instance: "c1", Epoch: 1})
	r = run(t, tr, nil, "release-cause")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "released the leader lock")
}

// SPEC 3: the TTL Manager runs every 60 s, all along the run.
func TestTTLPeriod(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
		observe("w", contracts.ObservedStandby)
	tr.events[1].Row.ArchiveTTLSeconds = 60
	tr = tr.at(2*time.Minute).write(contracts.CompAPI, "c1", 1, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredPending)})
	tr.events[len(tr.events)-1].Args = onBehalfOf + string(contracts.CompTTLManager)
	r := Check(Input{Events: tr.events, Final: &Final{End: t0.Add(3 * time.Minute)}}, &ttlPeriod{})
	require.Empty(t, r.Violations)

	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).observe("w", contracts.ObservedStandby)
	tr.events[1].Row.ArchiveTTLSeconds = 60
	tr = tr.at(5*time.Minute).check("c1", 1, "")
	r = Check(Input{Events: tr.events, Final: &Final{End: t0.Add(5 * time.Minute)}}, &ttlPeriod{})
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "has not applied it")
}

// SPEC 4.2 step 5 and SPEC 3: a claim is executed in its tick, a failed
// trigger publish changing nothing.
func TestClaimExecutes(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).claim("w", contracts.OpProvisioning).
			call("c1", MPublish, "", specMonitorTrigger, "w", "bus unavailable")
	}
	tr := base().check("c1", 1, "").call("c1", MProvision, "w", "", "", "").at(2*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "claim-executes")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("claim-executes"))

	tr = base().at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "claim-executes")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "made no actuator call")

	// A lost lease excuses it.
	tr = base().check("c1", 1, "not leader").at(2*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "claim-executes")
	require.Empty(t, r.Violations)
}
