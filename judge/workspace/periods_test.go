package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// observeEvery has c1 list the containers every `every` from `from` to
// `to`, running extra (when set) after each listing.
func observeEvery(tr *trace, from, to, every time.Duration, extra func(tr *trace, at time.Duration)) *trace {
	for at := from; at <= to; at += every {
		tr.at(at).call("c1", MInstancesList, "", "", "1", "")
		if extra != nil {
			extra(tr, at)
		}
	}
	return tr
}

// busyFleet: c1 leads; w's STARTING is claimed at 0 and is still in
// progress; c1 observes every `every` from 1 min to 3 min.
func busyFleet(every time.Duration, extra func(tr *trace, at time.Duration)) *trace {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting)
	return observeEvery(tr, time.Minute, 3*time.Minute, every, extra)
}

func TestPeriodsBusyFleetIsObservedEvery2s(t *testing.T) {
	r := run(t, busyFleet(2*time.Second, nil), nil, "adaptive-periods")
	require.Empty(t, r.Violations)
	require.Positive(t, r.Exercised["adaptive-periods"])

	r = run(t, busyFleet(30*time.Second, nil), nil, "adaptive-periods")
	require.NotEmpty(t, r.Violations, "a fixed 30 s poll while an operation runs")
	require.Contains(t, r.Violations[0].Message, "30s between two observation passes of the leader while an operation is in progress (period 2s)")
	require.Equal(t, "w", r.Violations[0].Subject)

	r = run(t, busyFleet(4*time.Second, nil), nil, "adaptive-periods")
	require.Empty(t, r.Violations, "within the tolerance (2 s + 1 s + 1 s)")
}

func TestPeriodsGiveTimeToNoticeAndExcuseDBFailures(t *testing.T) {
	// The operation started 20 s before: an idle coordinator polling every
	// 30 s may not have seen it yet.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		at(10*time.Second).call("c1", MInstancesList, "", "", "1", "").
		at(20*time.Second).claim("w", contracts.OpStarting).
		at(40*time.Second).call("c1", MInstancesList, "", "", "1", "").
		at(70*time.Second).call("c1", MInstancesList, "", "", "1", "")
	r := run(t, tr, nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// The DB fails the leader every 30 s: its view of the fleet may be
	// stale, the shorter periods are not judged.
	r = run(t, busyFleet(30*time.Second, func(tr *trace, at time.Duration) {
		tr.call("c1", "store.List", "", "", "", "unavailable")
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// A leadership change restarts the count.
	r = run(t, busyFleet(30*time.Second, func(tr *trace, at time.Duration) {
		tr.leader("c1", int64(at/time.Second))
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// The idle period is not judged as an upper bound.
	idle := newTrace().leader("c1", 1).call("c1", MInstancesList, "", "", "0", "").
		at(time.Hour).call("c1", MInstancesList, "", "", "0", "")
	r = run(t, idle, nil, "adaptive-periods")
	require.Empty(t, r.Violations)
}

// idleFleet: w was provisioned and started and has been at rest since 10 s;
// c1 observes every `every` from 2 min to 4 min.
func idleFleet(every time.Duration, extra func(tr *trace, at time.Duration)) *trace {
	return observeEvery(provisionAndStart(newTrace()), 2*time.Minute, 4*time.Minute, every, extra)
}

func TestPeriodsIdleFleetIsNotPolledFast(t *testing.T) {
	r := run(t, idleFleet(30*time.Second, nil), nil, "adaptive-periods")
	require.Empty(t, r.Violations)
	require.Positive(t, r.Exercised["adaptive-periods"])

	r = run(t, idleFleet(2*time.Second, nil), nil, "adaptive-periods")
	require.NotEmpty(t, r.Violations, "a busy period kept over an idle fleet")
	require.Contains(t, r.Violations[0].Message, "2s between two observation passes of the leader while the fleet was idle (period 30s)")

	// A monitor:trigger asks for a pass now.
	r = run(t, idleFleet(30*time.Second, func(tr *trace, at time.Duration) {
		tr.at(at+5*time.Second).call("api", MPublish, "", contracts.MonitorTriggerChannel, "w", "").
			call("c1", MInstancesList, "", "", "1", "")
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// A failed observation may be tried again at once (the Python
	// example retries after 2 s): a failed call of the leader, its
	// listing's or another provider's, excuses the next gaps.
	r = run(t, idleFleet(30*time.Second, func(tr *trace, at time.Duration) {
		tr.call("c1", "storage.ListVolumes", "", "", "", "K8S_API_ERROR: down").
			at(at+2*time.Second).call("c1", MInstancesList, "", "", "1", "")
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// So does a write of the leader that the DB failed (SPEC 3: "none of
	// the leader's calls failed"), such as a pass's bulk stamp.
	r = run(t, idleFleet(2*time.Second, func(tr *trace, at time.Duration) {
		tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompHealthMonitor, Instance: "c1", Epoch: 1, Workspace: "w",
			Method: "store.UpdateMany", Patch: &contracts.Patch{ObservedAt: contracts.Some(tr.now)}, Err: "store.UpdateMany: unavailable"})
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// Two listings within a second are one pass.
	r = run(t, idleFleet(30*time.Second, func(tr *trace, at time.Duration) {
		tr.at(at+500*time.Millisecond).call("c1", MInstancesList, "", "", "1", "")
	}), nil, "adaptive-periods")
	require.Empty(t, r.Violations)
}

// The periods are owed whether or not the leader ever observes, the idle
// 30 s included: a leader that steps (checks its lock) past its next
// pass's due time twice without a pass is flagged; a clock moved on
// without a step is not.
func TestPeriodsAreOwedAtTheLeadersSteps(t *testing.T) {
	steps := func(tr *trace, from, to, every time.Duration) *trace {
		for at := from; at <= to; at += every {
			tr.at(at).check("c1", 1, "")
		}
		return tr
	}
	idle := func() *trace { return newTrace().leader("c1", 1) }

	// Never observes: flagged at its second step past 46 s.
	r := run(t, steps(idle(), 2*time.Second, 2*time.Minute, 2*time.Second), nil, "adaptive-periods")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without an observation pass")

	// Observes every 30 s: the idle period is met.
	tr := idle()
	for at := time.Duration(0); at <= 2*time.Minute; at += 2 * time.Second {
		tr.at(at).check("c1", 1, "")
		if at%(30*time.Second) == 0 {
			tr.call("c1", MInstancesList, "", "", "1", "")
		}
	}
	r = run(t, tr, nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// Observes once, then stops observing for good while still stepping.
	tr = idle().call("c1", MInstancesList, "", "", "1", "")
	r = run(t, steps(tr, 2*time.Second, 3*time.Minute, 2*time.Second), nil, "adaptive-periods")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "the fleet is idle")

	// The clock moved on an hour with nobody stepped: the step after the
	// jump makes the pass.
	tr = idle().call("c1", MInstancesList, "", "", "1", "").at(time.Hour).check("c1", 1, "").call("c1", MInstancesList, "", "", "1", "")
	r = run(t, steps(tr, time.Hour+2*time.Second, time.Hour+20*time.Second, 2*time.Second), nil, "adaptive-periods")
	require.Empty(t, r.Violations)

	// Busy: an operation in progress owes a pass every 2 s (+2 s).
	tr = busyFleet(2*time.Second, nil)
	r = run(t, steps(tr, 3*time.Minute+time.Second, 3*time.Minute+20*time.Second, time.Second), nil, "adaptive-periods")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "an operation is in progress")
}
