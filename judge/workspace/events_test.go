package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// eventsTrace: c1 leads and listens; w is inserted and, 40 s later (past
// the forwarder grace), asked to stand by.
func eventsTrace() *trace {
	return newTrace().call("c1", MTryAcquire, "", "c1", "", "").leader("c1", 1).
		call("c1", MListen, "", "", "", "").
		call("c2", MTryAcquire, "", "c2", "", "").
		insert("w", contracts.DesiredRunning).
		at(40*time.Second).
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
}

func publish(tr *trace, inst string) *trace {
	return tr.call(inst, MPublish, "", contracts.WorkspaceChannel("w"), `{"workspace_id":"w"}`, "")
}

func finalAt(d time.Duration) *Final { return &Final{End: t0.Add(d)} }

func TestEventsPublishedWithinTheBoundPass(t *testing.T) {
	tr := publish(eventsTrace().at(41*time.Second), "c1")
	r := run(t, tr, finalAt(time.Minute), "events")
	require.Empty(t, r.Violations)
	require.Equal(t, 1, r.Exercised["events"])
}

func TestEventsNotPublishedAreFlagged(t *testing.T) {
	late := publish(eventsTrace().at(43*time.Second), "c1")
	r := run(t, late, finalAt(time.Minute), "events")
	require.Len(t, r.Violations, 1, "published 3 s later")
	require.Contains(t, r.Violations[0].Message, "not published on workspace:w within 2s")

	never := eventsTrace()
	r = run(t, never, finalAt(time.Minute), "events")
	require.Len(t, r.Violations, 1, "never published, seen at the end")

	// A value written again unchanged fires no trigger: nothing owed.
	same := eventsTrace().write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
	r = run(t, publish(same.at(41*time.Second), "c1"), finalAt(time.Minute), "events")
	require.Empty(t, r.Violations)
}

func TestEventsByTwoForwardersAreFlagged(t *testing.T) {
	tr := publish(publish(eventsTrace().at(41*time.Second), "c1"), "c2")
	r := run(t, tr, finalAt(time.Minute), "events")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "2 coordinator instances (c1, c2)")

	// Within the grace after a leadership change, the old leader may still
	// forward what it polled.
	early := newTrace().call("c1", MTryAcquire, "", "c1", "", "").leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c2", MTryAcquire, "", "c2", "", "").insert("w", contracts.DesiredRunning).at(5*time.Second).
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
	r = run(t, publish(publish(early.at(6*time.Second), "c1"), "c2"), finalAt(time.Minute), "events")
	require.Empty(t, r.Violations)
}

func TestEventsDuringFaultsAreNotJudged(t *testing.T) {
	for name, tr := range map[string]*trace{
		"bus outage":      eventsTrace().fault(FOutage, "", "outage bus 100% for 2m0s"),
		"feed broken":     eventsTrace().at(41*time.Second).fault(FBreakFeed, "", ""),
		"messages lost":   publish(eventsTrace().at(30*time.Second).fault(FDropMsgs, "", "1").at(41*time.Second), "c1"),
		"no listener yet": newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}),
		"leader crashed":  eventsTrace().at(41 * time.Second).add(crashEvent("c1")),
	} {
		r := run(t, tr, finalAt(time.Minute), "events")
		require.Empty(t, r.Violations, name)
		require.Zero(t, r.Exercised["events"], name)
	}
	// A fault window on another port is no excuse.
	r := run(t, eventsTrace().fault(FOutage, "", "outage storage.Archive 100% for 2m0s"), finalAt(time.Minute), "events")
	require.Len(t, r.Violations, 1)
}

func TestEventsAfterAReconnectAreRepublished(t *testing.T) {
	// c1's feed breaks; w changes while it is away; c1 listens again and
	// must republish w within 2 s.
	base := func() *trace {
		tr := eventsTrace()
		tr = publish(tr.at(41*time.Second), "c1").at(50*time.Second).fault(FBreakFeed, "", "").
			at(52*time.Second).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}).
			at(53*time.Second).call("c1", MListen, "", "", "", "")
		return tr
	}
	r := run(t, publish(base().at(54*time.Second), "c1"), finalAt(2*time.Minute), "events")
	require.Empty(t, r.Violations)
	require.Equal(t, 2, r.Exercised["events"], "the live change and the republication")

	r = run(t, base(), finalAt(2*time.Minute), "events")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "changed while the listener was away")
}

func crashEvent(inst string) history.Event {
	return history.Event{Kind: history.KindCrash, Instance: inst, Method: "crash"}
}

// SPEC 4.6's bound does not wait for the implementation to listen: a
// leader that never listens, or never listens again after its feed broke,
// owes every change committed once it has had its steps to listen in.
func TestEventsAreOwedWhetherOrNotTheLeaderListens(t *testing.T) {
	change := func(tr *trace, at time.Duration, d contracts.DesiredState) *trace {
		return tr.at(at).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(d)})
	}
	deaf := newTrace().call("c1", MTryAcquire, "", "c1", "", "").leader("c1", 1).insert("w", contracts.DesiredRunning)
	r := run(t, change(deaf, 40*time.Second, contracts.DesiredStandby), finalAt(time.Minute), "events")
	require.Len(t, r.Violations, 1, "a leader with no EventListener")
	require.Contains(t, r.Violations[0].Message, "not published")

	// Within its first step's grace nothing is owed yet.
	r = run(t, change(newTrace().call("c1", MTryAcquire, "", "c1", "", "").leader("c1", 1).insert("w", contracts.DesiredRunning),
		time.Second, contracts.DesiredStandby), finalAt(time.Minute), "events")
	require.Empty(t, r.Violations)

	// The feed breaks and the leader never listens again.
	broken := publish(eventsTrace().at(41*time.Second), "c1").at(50*time.Second).fault(FBreakFeed, "", "")
	r = run(t, change(broken, 56*time.Second, contracts.DesiredRunning), finalAt(2*time.Minute), "events")
	require.Len(t, r.Violations, 1, "the listener lost and never back")

	// Its DB session drops and it takes the lock back: owed again.
	back := publish(eventsTrace().at(41*time.Second), "c1").at(50*time.Second).
		add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FKillSession}).
		add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).
		at(51*time.Second).leader("c1", 2)
	r = run(t, change(back, 60*time.Second, contracts.DesiredRunning), finalAt(2*time.Minute), "events")
	require.Len(t, r.Violations, 1, "a session that dropped and came back")
	r = run(t, publish(change(back, 60*time.Second, contracts.DesiredRunning).at(61*time.Second), "c1"), finalAt(2*time.Minute), "events")
	require.Empty(t, r.Violations)
}
