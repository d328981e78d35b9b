package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// C10 and SPEC 3.1/1.6: every coordinator write carries the leader epoch.
func TestWriteEpochCarriedByEveryCoordinatorWrite(t *testing.T) {
	r := run(t, provisionAndStart(newTrace()).pass(), nil, "c10-write-epoch")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c10-write-epoch"))

	// A TTL change through the API service layer made without the epoch.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Workspace: "w", Args: onBehalfOf + string(contracts.CompTTLManager),
			Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}, Cond: &contracts.Cond{}, Applied: true})
	r = run(t, tr, nil, "c10-write-epoch")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "carries epoch 0")

	// A reconciler write by an instance that never led.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c2", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(1)})
	r = run(t, tr, nil, "c10-write-epoch")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "never took the leader lock")

	// The API's own writes are not fenced: epoch 0 is theirs.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
	r = run(t, tr, nil, "c10-write-epoch")
	require.Empty(t, r.Violations)
}

// C10: only the holder acts. What an instance does at the instant its
// lease ends is the step the loss struck in; at a later instant it acts
// no more before it takes the lock again.
func TestHolderActsOnlyWhileHolding(t *testing.T) {
	lost := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			at(time.Second).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(0)})
	}
	// The step it was in: not flagged; its next step checks and stops.
	tr := lost().at(2*time.Second).check("c1", 1, "not leader")
	r := run(t, tr, nil, "c10-holder-acts")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c10-holder-acts"))

	// A later step that runs its components without a check.
	tr = lost().at(2*time.Second).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "c10-holder-acts")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "c1 acted at a later step")

	// Superseded: another instance's acquisition ends its lease too.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).leader("c2", 2).
		at(2*time.Second).write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthOK)})
	r = run(t, tr, nil, "c10-holder-acts")
	require.Len(t, r.Violations, 1)

	// Taking the lock again makes it the holder.
	tr = lost().at(2*time.Second).leader("c1", 2).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "c10-holder-acts")
	require.Empty(t, r.Violations)
}

// SPEC 3: a failed lock check, or a write refused as fenced, makes the
// instance give up leadership at once.
func TestGivesUpAtOnce(t *testing.T) {
	fenced := func() *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("v", contracts.DesiredRunning).leader("c2", 2)
		return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c1", Epoch: 1, Workspace: "w", Method: "store.Update",
			Patch: &contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)}, Cond: &contracts.Cond{}, Err: "update workspace w: " + contracts.ErrFenced.Error()})
	}
	// It releases and stands by: fine.
	tr := fenced().call("c1", MRelease, "", "c1", "", "")
	r := run(t, tr, nil, "gives-up-at-once")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gives-up-at-once"))

	// It goes on with the next workspace.
	tr = fenced().add(history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c1", Epoch: 1, Workspace: "v", Method: "store.Update",
		Patch: &contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)}, Cond: &contracts.Cond{}, Err: contracts.ErrFenced.Error()})
	r = run(t, tr, nil, "gives-up-at-once")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "refused as fenced")

	// A failed check whose lock is gone, then a publish.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).
		check("c1", 1, "not leader").trigger("c1", "w")
	r = run(t, tr, nil, "gives-up-at-once")
	require.Len(t, r.Violations, 1)

	// A check failed by a DB error, the session still holding the lock:
	// giving the lead up at once is releasing it; an instance that goes
	// on to its next step without a release attempt has given up
	// nothing, whoever the record shows holding the lock.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		check("c1", 1, "db unavailable").at(time.Second).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "gives-up-at-once")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "its lock check failed")

	// After a release attempt that failed (its session still holding the
	// lock), a lock try takes the lock again unrecorded: not judged.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		check("c1", 1, "db unavailable").call("c1", MRelease, "", "c1", "", "db unavailable").
		at(time.Second).call("c1", MTryAcquire, "", "c1", "", "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "gives-up-at-once")
	require.Empty(t, r.Violations)
}

// C10: when the holder's session ends another takes over, within SPEC
// 7's failover target (read as TakeoverBound).
func TestTakeoverAfterTheLockIsFreed(t *testing.T) {
	lost := func() *trace {
		return newTrace().leader("c1", 1).call("c2", MTryAcquire, "", "c2", "", "db unavailable").
			at(time.Second).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1})
	}
	tr := lost().at(3*time.Second).leader("c2", 2)
	r := run(t, tr, nil, "c10-takeover")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c10-takeover"))

	tr = lost().at(time.Second+TakeoverBound+time.Second).leader("c2", 2)
	r = run(t, tr, nil, "c10-takeover")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "nobody took over")

	// Lock tries failing (the DB refuses them) hold the count back; with
	// every instance down nobody can take over.
	tr = lost().at(20*time.Second).call("c2", MTryAcquire, "", "c2", "", "db unavailable").
		at(time.Second+TakeoverBound+time.Second).leader("c2", 2)
	r = run(t, tr, nil, "c10-takeover")
	require.Empty(t, r.Violations)
	tr = lost().add(history.Event{Kind: history.KindCrash, Method: "crash", Instance: "c1"}).
		add(history.Event{Kind: history.KindCrash, Method: "crash", Instance: "c2"}).
		at(time.Hour).add(history.Event{Kind: history.KindCrash, Method: "restart", Instance: "c2"}).leader("c2", 2)
	r = run(t, tr, nil, "c10-takeover")
	require.Empty(t, r.Violations)
}
