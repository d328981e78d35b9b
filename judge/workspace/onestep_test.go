package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// provisioned: w (desired RUNNING) is claimed for PROVISIONING at 0 s and
// observed STANDBY by the HealthMonitor at 1 s: the tick at 2 s finds its
// completion condition holding.
func provisioned() *trace {
	return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).trigger("c1", "w").check("c1", 1, "").call("c1", MProvision, "w", "", "", "").
		at(time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedStandby).
		at(2*time.Second).check("c1", 1, "")
}

// unapplied is c1's reconciler write p on id that did not apply (its
// compare-and-set failed, or err).
func unapplied(id string, cond *contracts.Cond, p contracts.Patch, err string) history.Event {
	return history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c1", Epoch: 1, Workspace: id,
		Method: "store.Update", Patch: &p, Cond: cond, Err: err}
}

func claimPatch(op contracts.Operation, at time.Time) contracts.Patch {
	return contracts.Patch{Operation: contracts.Some(op), OpStartedAt: contracts.Some(at)}
}

// SPEC 4.2: "For one row, the first step that applies decides". A tick that
// completes a row's operation does not also claim the next one: the next
// tick does, from the row as it then reads it.
func TestOneStepCompletionThenClaim(t *testing.T) {
	// Completed and claimed in one tick: flagged.
	tr := provisioned().complete("w").trigger("c1", "w").claim("w", contracts.OpStarting).trigger("c1", "w").
		check("c1", 1, "").call("c1", MStart, "w", "img", "", "").
		at(4*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "w", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "completed PROVISIONING of w")
	require.Contains(t, r.Violations[0].Message, "then in the same tick claimed STARTING")

	// Completed only; claimed at the next tick (even 100 ms later, the
	// least time between two steps): not flagged.
	for _, next := range []time.Duration{100 * time.Millisecond, 2 * time.Second} {
		tr = provisioned().complete("w").trigger("c1", "w").
			at(2*time.Second+next).check("c1", 1, "").claim("w", contracts.OpStarting).trigger("c1", "w").
			check("c1", 1, "").call("c1", MStart, "w", "img", "", "").
			at(6*time.Second).check("c1", 1, "")
		r = run(t, tr, nil, "reconcile-one-step")
		require.Empty(t, r.Violations, next)
		require.Equal(t, Pass, r.Verdict("reconcile-one-step"))
	}

	// A claim attempt that does not apply (its compare-and-set finds
	// NONE gone, or the DB fails) is a second step all the same.
	c := decide.ClaimCond(contracts.OpStarting)
	tr = provisioned().complete("w").add(unapplied("w", &c, claimPatch(contracts.OpStarting, t0.Add(2*time.Second)), "store.Update: unavailable")).
		at(4*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "claimed STARTING (not applied)")

	// An actuator call on the row after its completion: flagged too.
	tr = provisioned().complete("w").check("c1", 1, "").call("c1", MStart, "w", "img", "", "").
		at(4*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "then in the same tick called instances.Start")
}

// A tick that enters ERROR on a row does not also claim it (step 2 claims
// DELETING of a soft-deleted row in ERROR at a later tick), nor call its
// actuators.
func TestOneStepErrorEntryThenClaim(t *testing.T) {
	deleting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
			at(time.Second).write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0.Add(time.Second))).
			at(6*time.Minute).check("c1", 1, "").timeoutEntry("c1", 1, "w").trigger("c1", "w")
	}
	tr := deleting().claim("w", contracts.OpDeleting).at(6*time.Minute+2*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "ended in ERROR PROVISIONING of w")
	require.Contains(t, r.Violations[0].Message, "claimed DELETING")

	tr = deleting().at(6*time.Minute+2*time.Second).check("c1", 1, "").claim("w", contracts.OpDeleting).
		check("c1", 1, "").call("c1", MDelete, "w", "", "", "").at(6*time.Minute+4*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-one-step")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("reconcile-one-step"))
}

// What a correct tick may do around its decision on a row, and what the
// judge must not hold against it.
func TestOneStepHazards(t *testing.T) {
	ok := func(name string, tr *trace) {
		t.Helper()
		r := run(t, tr.at(time.Hour).check("c1", 1, ""), nil, "reconcile-one-step")
		require.Empty(t, r.Violations, name)
	}
	// Other components' events interleave with the tick's, and the tick
	// goes on with other rows: the HealthMonitor, the TTL Manager's and
	// the API's writes, the GC, the trigger, the last-access stamp before
	// the completion, a claim of another row.
	ok("others interleave", provisioned().
		write(contracts.CompAPI, "c1", 1, "x", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}).
		add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Epoch: 1, Workspace: "w",
			Args: "on behalf of ttl_manager", Patch: &contracts.Patch{Name: contracts.Some("n")}, Applied: true}).
		stamp("w").complete("w").trigger("c1", "w").
		call("c1", MObjList, "", "archives/", "0", "").
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{Memo: contracts.Some("m")}).
		claim("x", contracts.OpProvisioning).trigger("c1", "x").check("c1", 1, "").call("c1", MProvision, "x", "", "", ""))

	// A claim executed in its tick, up to an attempt that fails for good:
	// the ERROR entry ends the tick's handling of the row.
	ok("claim, execute, terminal failure", newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).trigger("c1", "w").check("c1", 1, "").call("c1", MProvision, "w", "", "", "DISK_FULL").
		enterError("w", contracts.ReasonDataLost).trigger("c1", "w"))

	// A failed completion skips the row for the tick: nothing else on it.
	ok("a failed completion", provisioned().add(unapplied("w", nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone)}, "store.Update: unavailable")))

	// Another instance's events at the same instant are not the leader's
	// tick: c2, deposed, still tries to claim w (fenced).
	c := decide.ClaimCond(contracts.OpStarting)
	stale := unapplied("w", &c, claimPatch(contracts.OpStarting, t0.Add(2*time.Second)), "fenced")
	stale.Instance, stale.Epoch = "c2", 0
	ok("another instance", provisioned().complete("w").add(stale))

	// A step that a crash, a failed read or a leadership change disturbed
	// is not judged (its tick may have been two, or none).
	ok("a failed read", provisioned().complete("w").call("c1", "store.List", "", "", "", "unavailable").claim("w", contracts.OpStarting))
	ok("a crash", provisioned().complete("w").claim("w", contracts.OpStarting).
		add(history.Event{Kind: history.KindCrash, Instance: "c1", Method: "crash"}))

	// A tick that resumes a RESTORING and finds, after its own marker
	// write, the completion condition holding: completing it at once is
	// not judged (DR394).
	key := contracts.ArchiveKey("w", "op1")
	ok("restore then complete", newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ArchiveKey: contracts.Some(key)}).
		observe("w", contracts.ObservedStandby).
		at(time.Second).claim("w", contracts.OpRestoring).check("c1", 1, "").call("c1", MProvision, "w", "", "", "").
		call("c1", MRestore, "w", key, key, "").
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})}).
		stamp("w").complete("w"))
}

// The steps whose act is a write alone: a tick makes no actuator call on a
// row whose completion condition holds, which is in ERROR, or whose
// operation is past its timeout; nor on an idle row it did not claim.
func TestOneStepNoCallWhereTheStepIsAWrite(t *testing.T) {
	call := func(tr *trace) *trace {
		return tr.check("c1", 1, "").call("c1", MProvision, "w", "", "", "").at(time.Hour).check("c1", 1, "")
	}
	// Completion holds as read (observed STANDBY at an earlier step).
	r := run(t, call(provisioned()), nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "whose first applicable step was to complete its PROVISIONING")

	// The HealthMonitor wrote the row at this instant: the row as the
	// tick read it is not known, not judged.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
		at(2*time.Second).check("c1", 1, "").observe("w", contracts.ObservedStandby)
	r = run(t, call(tr), nil, "reconcile-one-step")
	require.Empty(t, r.Violations)

	// Past the timeout: the Timeout entry, not a resume.
	late := func(d time.Duration) *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
			at(d).check("c1", 1, "")
	}
	r = run(t, call(late(5*time.Minute+time.Second)), nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "to end in a Timeout ERROR its PROVISIONING")
	r = run(t, call(late(5*time.Minute)), nil, "reconcile-one-step") // not past it
	require.Empty(t, r.Violations)

	// In ERROR (the HealthMonitor's container-without-volume, at an
	// earlier step): the ERROR entry.
	tr = late(time.Minute).write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}).
		at(time.Minute+2*time.Second).check("c1", 1, "")
	r = run(t, call(tr), nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "to end in ERROR its PROVISIONING")

	// An idle row: a call without a claim that applied.
	idle := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).check("c1", 1, "")
	r = run(t, call(idle), nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "had no operation as the tick began")
	c := decide.ClaimCond(contracts.OpProvisioning)
	r = run(t, call(idle.add(unapplied("w", &c, claimPatch(contracts.OpProvisioning, t0.Add(time.Second)), "store.Update: unavailable"))), nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
}

// Steps 1 to 3: no claim, applied or not, on a row whose operation was in
// progress as the tick began.
func TestOneStepNoClaimOnABusyRow(t *testing.T) {
	c := decide.ClaimCond(contracts.OpStarting)
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
		at(2*time.Second).check("c1", 1, "").add(unapplied("w", &c, claimPatch(contracts.OpStarting, t0.Add(2*time.Second)), "")).
		at(4*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "reconcile-one-step")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "tried to claim STARTING on w at")
	require.Contains(t, r.Violations[0].Message, "while PROVISIONING was in progress")
}
