package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// steps adds a successful lock check of c1 every 2 s from from to to.
func (tr *trace) steps(from, to time.Duration) *trace {
	for d := from; d <= to; d += 2 * time.Second {
		tr.at(d).check("c1", 1, "")
	}
	return tr
}

// SPEC 3: the StateReconciler's adaptive period. A row that calls for a
// claim is claimed within the idle period (plus tolerance) whatever the
// fleet; one that calls for its completion while an operation runs, within
// the busy or diverged period of a tick that read the fleet so.
func TestReconcilePeriod(t *testing.T) {
	// A claim in the next tick: fine, and the situation arose.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		at(time.Second).check("c1", 1, "").claim("w", contracts.OpProvisioning).steps(2*time.Second, 10*time.Second)
	r := run(t, tr, nil, "reconcile-period")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("reconcile-period"))

	// Never claimed while the leader steps: past the idle period and its
	// tolerance (PeriodNotice), flagged at the second step past it.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).steps(time.Second, time.Minute)
	r = run(t, tr, nil, "reconcile-period")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "claim PROVISIONING of w")
	require.Contains(t, r.Violations[0].Message, "idle period")

	// A leader that stops stepping is not judged here (step-bound is).
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Hour).check("c1", 1, "")
	r = run(t, tr, nil, "reconcile-period")
	require.Empty(t, r.Violations)

	// The claim's tick read a diverging fleet: the reconciler ticks every
	// 5 s from then, so the completion the HealthMonitor shows at 3 s is
	// owed by 3 s + 8.5 s. A reconciler on a 30 s period misses it.
	claimed := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
			at(time.Second).check("c1", 1, "").claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
			at(3*time.Second).check("c1", 1, "").observe("w", contracts.ObservedStandby)
	}
	tr = claimed().steps(4*time.Second, 30*time.Second).complete("w")
	r = run(t, tr, nil, "reconcile-period")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "complete of w")
	require.Contains(t, r.Violations[0].Message, "period 5s")
	tr = claimed().steps(4*time.Second, 6*time.Second).complete("w").steps(8*time.Second, 30*time.Second)
	r = run(t, tr, nil, "reconcile-period")
	require.Empty(t, r.Violations)

	// A failed DB call of the leader may have skipped the tick and stalled
	// its view: the bounds start again from it.
	tr = claimed().at(10*time.Second).call("c1", "store.List", "", "", "", "db unavailable").steps(12*time.Second, 40*time.Second)
	r = run(t, tr, nil, "reconcile-period")
	require.Empty(t, r.Violations)

	// A write the row refused (its condition failed) is the tick's
	// handling of it: owed again from then, by the next ticks.
	tr = claimed().at(6*time.Second).check("c1", 1, "").
		add(history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c1", Epoch: 1, Workspace: "w", Method: "store.Update",
			Patch: &contracts.Patch{Operation: contracts.Some(contracts.OpNone)}, Cond: &contracts.Cond{}, Applied: false}).
		steps(8*time.Second, 8*time.Second).complete("w").steps(10*time.Second, 20*time.Second)
	r = run(t, tr, nil, "reconcile-period")
	require.Empty(t, r.Violations)
}

// SPEC 3: a step runs every component that is due, one after another, in a
// fixed order.
func TestComponentOrder(t *testing.T) {
	step := func(tr *trace, d time.Duration) *trace {
		return tr.at(d).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedPending)
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning)
	tr = step(tr, time.Second).claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "")
	tr = step(tr, 2*time.Second).write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(1)})
	r := run(t, tr, nil, "component-order")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("component-order"))

	// The reconciler before the HealthMonitor in a later step.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning)
	tr = step(tr, time.Second).claim("w", contracts.OpProvisioning)
	tr = tr.at(2*time.Second).check("c1", 1, "").call("c1", MProvision, "w", "", "", "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "component-order")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "fixed order")

	// The HealthMonitor acting again after the reconciler in one step.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning)
	tr = step(tr, time.Second).claim("w", contracts.OpProvisioning).observe("w", contracts.ObservedStandby)
	r = run(t, tr, nil, "component-order")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "acted again")

	// A crash ends the step: the restarted process begins a new one.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning)
	tr = step(tr, time.Second).claim("w", contracts.OpProvisioning).
		add(history.Event{Kind: history.KindCrash, Instance: "c1"}).leader("c1", 2)
	tr = step(tr, time.Second).claim("w", contracts.OpProvisioning)
	r = run(t, tr, nil, "component-order")
	require.Empty(t, r.Violations)

	// Another instance's events at the same instant are its own.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning)
	tr = step(tr, time.Second).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{Name: contracts.Some("x")}).claim("w", contracts.OpProvisioning)
	r = run(t, tr, nil, "component-order")
	require.Empty(t, r.Violations)
}

// SPEC 3 and 3.1: every step of the leader begins with a check of its lock.
func TestStepCheck(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		call("c1", MInstancesList, "", "", "", "").
		at(time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").claim("w", contracts.OpProvisioning)
	r := run(t, tr, nil, "step-check")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("step-check"))

	// A pass with no check in its step.
	tr = newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "").at(2*time.Second).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "step-check")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without checking its lock")

	// A leader whose answer to its lock try was lost acquires at a later
	// try the history does not show.
	tr = newTrace().leader("c1", 1).add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FLostResp, Args: MTryAcquire}).
		at(time.Second).call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "step-check")
	require.Empty(t, r.Violations)
}

// SPEC 3 and 4.5: the Archive GC passes every hour.
func TestGCPeriod(t *testing.T) {
	list := func(tr *trace, d time.Duration) *trace {
		return tr.at(d).check("c1", 1, "").call("c1", MObjList, "", "archives/", "0", "")
	}
	tr := newTrace().leader("c1", 1)
	for h := range 4 {
		tr = list(tr, time.Duration(h)*time.Hour)
	}
	r := run(t, tr, nil, "gc-period")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-period"))

	// No pass for three hours while the leader steps.
	tr = list(newTrace().leader("c1", 1), 0)
	for m := 10; m <= 180; m += 10 {
		tr = tr.at(time.Duration(m)*time.Minute).check("c1", 1, "")
	}
	r = run(t, tr, nil, "gc-period")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no Archive GC pass")

	// Passes every ten minutes.
	tr = list(list(newTrace().leader("c1", 1), 0), 10*time.Minute)
	r = run(t, tr, nil, "gc-period")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "10m0s later")

	// A failed call in between may have skipped the pass: not judged.
	tr = list(newTrace().leader("c1", 1), 0).at(5*time.Minute).call("c1", "objects.Delete", "", "k", "", "s3 unavailable")
	tr = list(tr, 10*time.Minute)
	r = run(t, tr, nil, "gc-period")
	require.Empty(t, r.Violations)
}

// SPEC 3 and 4.1: each HealthMonitor pass begins with one container listing.
func TestPassListing(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).at(time.Second).check("c1", 1, "").
		call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedPending).pass()
	r := run(t, tr, nil, "pass-listing")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("pass-listing"))

	// Observed from no listing of the step (an old one reused).
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).call("c1", MInstancesList, "", "", "", "").
		at(time.Second).check("c1", 1, "").observe("w", contracts.ObservedPending)
	r = run(t, tr, nil, "pass-listing")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no container listing")

	// Two listings in one step.
	tr = newTrace().leader("c1", 1).at(time.Second).check("c1", 1, "").
		call("c1", MInstancesList, "", "", "", "").call("c1", MInstancesList, "", "", "", "")
	r = run(t, tr, nil, "pass-listing")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "twice in one step")
}

// SPEC 3: the TTL Manager runs every 60 s; nothing is owed while no
// instance leads.
func TestTTLPeriodOwesNothingWithoutALeader(t *testing.T) {
	expired := func() *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).observe("w", contracts.ObservedStandby)
		tr.events[1].Row.ArchiveTTLSeconds = 60
		return tr
	}
	// Held 2 min while c1 leads: past the period and its tolerance.
	tr := expired().at(3*time.Minute).check("c1", 1, "")
	r := Check(Input{Events: tr.events, Final: &Final{End: t0.Add(3 * time.Minute)}}, &ttlPeriod{})
	require.Len(t, r.Violations, 1)

	// The leader crashed at once and nobody led since: nothing owed.
	tr = expired().add(history.Event{Kind: history.KindCrash, Instance: "c1"}).at(5 * time.Minute).add(history.Event{Kind: history.KindUser, Workspace: "x"})
	r = Check(Input{Events: tr.events, Final: &Final{End: t0.Add(5 * time.Minute)}}, &ttlPeriod{})
	require.Empty(t, r.Violations)
}

// SPEC 3.1: giving the lead up (a failed lock check, then the release)
// drops the listener; a new one listens before the instance publishes
// again.
func TestDropsListener(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
			at(time.Second).check("c1", 1, "db unavailable").add(history.Event{Kind: history.KindLeader, Method: "release", Instance: "c1", Epoch: 1})
	}
	tr := base().at(2*time.Second).call("c1", MListen, "", "", "", "").call("c1", MPublish, "w", "workspace:w", "{}", "")
	r := run(t, tr, nil, "drops-listener")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("drops-listener"))

	// The old listener kept across the failed check.
	tr = base().at(2*time.Second).check("c1", 1, "").call("c1", MPublish, "w", "workspace:w", "{}", "")
	r = run(t, tr, nil, "drops-listener")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without listening anew")

	// A crash ends the process and its listener.
	tr = base().add(history.Event{Kind: history.KindCrash, Instance: "c1"}).at(2*time.Second).call("c1", MPublish, "w", "workspace:w", "{}", "")
	r = run(t, tr, nil, "drops-listener")
	require.Empty(t, r.Violations)
}
