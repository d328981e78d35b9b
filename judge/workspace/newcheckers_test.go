package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

func (tr *trace) listInstances(inst, result, err string) *trace {
	return tr.call(inst, history.MethodListInstances, "", "", result, err)
}

func (tr *trace) listVolumes(inst, result, err string) *trace {
	return tr.call(inst, history.MethodListVolumes, "", "", result, err)
}

func TestObservationTruthJudgesTheLatestSuccessfulListings(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		listInstances("c1", "1 = w+", "").listVolumes("c1", "1 = w", "").
		observe("w", contracts.ObservedRunning).
		listInstances("c1", "1 same", "").listVolumes("c1", "1 same", "").
		observe("w", contracts.ObservedRunning)
	r := run(t, tr, nil, "c1-observation-truth")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c1-observation-truth"))

	// The container listing fails and the observer writes STANDBY: the
	// failure was read as "no containers".
	tr.listInstances("c1", "", "docker unreachable").listVolumes("c1", "1 same", "").
		observe("w", contracts.ObservedStandby)
	r = run(t, tr, nil, "c1-observation-truth")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "failed listing was read as absent")
	require.Contains(t, r.Violations[0].Message, "show RUNNING")
}

// A listing recorded as a change against the previous one ("N ~ …") is
// judged like a full one; an unreadable one is no evidence.
func TestObservationTruthReadsChangedListings(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
			listInstances("c1", "2 = w+ x+", "").listVolumes("c1", "2 = w x", "").
			observe("w", contracts.ObservedRunning)
	}
	tr := base().listInstances("c1", "2 ~ -w+ +w-", "").listVolumes("c1", "2 same", "").
		observe("w", contracts.ObservedStandby)
	r := run(t, tr, nil, "c1-observation-truth")
	require.Empty(t, r.Violations)

	tr = base().listInstances("c1", "2 ~ -w+ +w-", "").listVolumes("c1", "1 ~ -w", "").
		observe("w", contracts.ObservedRunning)
	r = run(t, tr, nil, "c1-observation-truth")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "show PENDING")

	tr = base().listInstances("c1", "4 ~ +y+", "").
		observe("w", contracts.ObservedStandby)
	r = run(t, tr, nil, "c1-observation-truth")
	require.Empty(t, r.Violations, "a listing that does not add up is not evidence")
}

func TestObservationTruthAfterAFailureWithNothingBefore(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		listInstances("c1", "", "docker unreachable").listVolumes("c1", "0 = ", "").
		observe("w", contracts.ObservedPending)
	r := run(t, tr, nil, "c1-observation-truth")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no successful one before it")
}

func TestObservationTruthSoftDeletedMayStillBePending(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DeletedAt: contracts.Some(t0), DesiredState: contracts.Some(contracts.DesiredPending)}).
		listInstances("c1", "0 = ", "").listVolumes("c1", "0 = ", "").
		observe("w", contracts.ObservedPending).observe("w", contracts.ObservedDeleted)
	r := run(t, tr, nil, "c1-observation-truth")
	require.Empty(t, r.Violations)
}

func TestClaimMustSetOpStartedAt(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning)
	r := run(t, tr, nil, "claim-op-started-at")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("claim-op-started-at"))

	c := decide.ClaimCond(contracts.OpStarting)
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c1", 1, "w", &c, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	r = run(t, tr, nil, "claim-op-started-at")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "does not set op_started_at")
}

func TestLastAccessNeverMovesBack(t *testing.T) {
	stamp := func(tr *trace, at time.Time) *trace {
		return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Workspace: "w", Args: onBehalfOf + string(contracts.CompStateReconciler),
			Patch: &contracts.Patch{LastAccessAt: contracts.Some(at)}, Applied: true})
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Minute)
	stamp(tr, t0.Add(time.Minute))
	r := run(t, tr, nil, "last-access-forward")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("last-access-forward"))

	stamp(tr.at(2*time.Minute), t0.Add(-9*time.Minute))
	r = run(t, tr, nil, "last-access-forward")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "moved last_access_at back by 10m0s")
}

func TestDualLeaderWindowIsAFigure(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		at(10*time.Second).leader("c2", 2).
		at(13*time.Second).call("c1", MProvision, "w", "", "", "").
		at(20 * time.Second).add(history.Event{Kind: history.KindCrash, Method: "crash", Instance: "c1"})
	r := run(t, tr, &Final{End: t0.Add(time.Hour)}, "c10-fencing")
	require.Empty(t, r.Violations, "the successor had not acted yet")
	require.InDelta(t, 3.0, r.Figures["c10-fencing.dual-leader-seconds"], 1e-9)
}

// op_started_at is set by the claim and cleared at the end; a resume that
// writes it again restarts the timeout (fourth audit).
func TestOpStartedAtIsNotRewrittenWhileTheOperationRuns(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(3 * time.Minute)
	}
	// The same time written again, and the end of the operation: fine.
	tr := base().write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{OpStartedAt: contracts.Some(t0)}).
		at(4 * time.Minute).complete("w")
	r := run(t, tr, nil, "claim-op-started-at")
	require.Empty(t, r.Violations)

	// A new leader resumes the operation and restarts its clock.
	tr = base().leader("c2", 2).
		write(contracts.CompStateReconciler, "c2", 2, "w", nil, contracts.Patch{OpStartedAt: contracts.Some(t0.Add(3 * time.Minute))})
	r = run(t, tr, nil, "claim-op-started-at")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "rewritten")
	require.Contains(t, r.Violations[0].Message, "timeout starts again")
}

// Cleared while the operation stays in progress, op_started_at leaves it
// without a timeout (SPEC 4.2.3: "nothing moves [it] until the operation
// ends").
func TestOpStartedAtIsNotClearedWhileTheOperationRuns(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).at(3*time.Minute).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{OpStartedAt: contracts.Some(time.Time{})})
	r := run(t, tr, nil, "claim-op-started-at")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "cleared while it runs")
}
