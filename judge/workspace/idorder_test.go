package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// claimAndProvision is the leader's claim of PROVISIONING on id and its
// first actuator call (SPEC 4.2 step 5, 4.2.2).
func (tr *trace) claimAndProvision(id string) *trace {
	return tr.claim(id, contracts.OpProvisioning).check("c1", 1, "").call("c1", MProvision, id, "", "", "")
}

// SPEC 4.2: "Each tick reads the reconcile selection (1.1) and handles
// each row on its own, in id order".
func TestReconcileIDOrder(t *testing.T) {
	rows := func() *trace {
		return newTrace().leader("c1", 1).insert("a", contracts.DesiredRunning).insert("b", contracts.DesiredRunning).
			insert("c", contracts.DesiredRunning).at(time.Second).check("c1", 1, "")
	}
	next := func(tr *trace) *trace { return tr.at(3*time.Second).check("c1", 1, "") }

	// In id order, each row's acts together: fine, and the tick counts.
	r := run(t, next(rows().claimAndProvision("a").trigger("c1", "a").claimAndProvision("c").trigger("c1", "c")), nil, "reconcile-id-order")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("reconcile-id-order"))

	// A tick that acts on one row only is not the situation.
	r = run(t, next(rows().claimAndProvision("b")), nil, "reconcile-id-order")
	require.Empty(t, r.Violations)
	require.Equal(t, NotExercise, r.Verdict("reconcile-id-order"))

	// b before a: flagged, on a, with both events as evidence.
	tr := next(rows().claimAndProvision("b").claimAndProvision("a"))
	r = run(t, tr, nil, "reconcile-id-order")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "a", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "after acting on b in the same tick")
	require.Len(t, r.Violations[0].Evidence, 2)

	// A row's acts split by another row's (a, c, a): a's second act comes
	// after c's.
	r = run(t, next(rows().claim("a", contracts.OpProvisioning).claimAndProvision("c").check("c1", 1, "").call("c1", MProvision, "a", "", "", "")), nil, "reconcile-id-order")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "a", r.Violations[0].Subject)

	// The last-access stamp, made on behalf of the reconciler, is its own
	// act on the row (SPEC 1.6, 4.2.2).
	onBehalf := history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Epoch: 1, Workspace: "a",
		Args: history.OnBehalfPrefix + string(contracts.CompStateReconciler), Patch: &contracts.Patch{LastAccessAt: contracts.Some(t0.Add(time.Second))}, Applied: true}
	r = run(t, next(rows().claimAndProvision("b").add(onBehalf)), nil, "reconcile-id-order")
	require.Len(t, r.Violations, 1)

	// Steps at different instants are different ticks.
	r = run(t, next(rows().claimAndProvision("b")).claimAndProvision("a").at(5*time.Second).check("c1", 1, ""), nil, "reconcile-id-order")
	require.Empty(t, r.Violations)
}

// What other components, other processes and failures do at the tick's
// instant is no act of the tick on a row; and a second tick at the same
// instant, were there one, would start again from the lowest id, acting
// only on a row that changed or failed since the first read it.
func TestReconcileIDOrderHazards(t *testing.T) {
	rows := func() *trace {
		return newTrace().leader("c1", 1).insert("a", contracts.DesiredRunning).insert("b", contracts.DesiredRunning).
			insert("c", contracts.DesiredRunning).at(time.Second).check("c1", 1, "")
	}
	next := func(tr *trace) *trace { return tr.at(3*time.Second).check("c1", 1, "") }
	clean := func(tr *trace) {
		t.Helper()
		r := run(t, next(tr), nil, "reconcile-id-order")
		require.Empty(t, r.Violations)
	}

	// Other components' events on a lower id after the reconciler's: the
	// GC's deletion, the TTL Manager's request through the API, a
	// publish on workspace:{id}, monitor:trigger published late.
	ttl := history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Epoch: 1, Workspace: "a",
		Args: history.OnBehalfPrefix + string(contracts.CompTTLManager), Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}, Applied: true}
	clean(rows().claimAndProvision("b").claimAndProvision("c").add(ttl).
		call("c1", MObjDelete, "a", contracts.ArchiveKey("a", "op1"), "", "").
		call("c1", MPublish, "a", "workspace:a", "{}", "").trigger("c1", "a"))

	// A standby's (or a deposed leader's) acts are not the leader's.
	clean(rows().claimAndProvision("b").call("c2", MProvision, "a", "", "", ""))

	// A failure on a row skips it (SPEC 3); its record may come after the
	// tick's other rows, and a second tick could try it again.
	clean(rows().claim("a", contracts.OpProvisioning).check("c1", 1, "").call("c1", MProvision, "a", "", "", "VOLUME_CREATE_FAILED: no").
		claimAndProvision("b").write(contracts.CompStateReconciler, "c1", 1, "a", nil, contracts.Patch{ErrorCount: contracts.Some(1)}))
	clean(rows().add(failedWrite("c1", "a")).claimAndProvision("b").claimAndProvision("a"))
	clean(rows().claim("a", contracts.OpProvisioning).add(historyLost("c1", "a", "store.Update")).claimAndProvision("b").claimAndProvision("a"))

	// Another process wrote the row at that instant (an API request): a
	// second tick could see what the first did not.
	clean(rows().claimAndProvision("b").write(contracts.CompAPI, "api1", 0, "a", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}).
		claimAndProvision("a"))
	// Another component of the leader wrote it after the reconciler
	// began (component-order's to judge).
	clean(rows().claimAndProvision("b").observe("a", contracts.ObservedStandby).claim("a", contracts.OpStarting))
	// But not one that wrote it before the reconciler began: the tick
	// read the row after that write.
	r := run(t, next(rows().observe("a", contracts.ObservedStandby).claimAndProvision("b").claim("a", contracts.OpStarting)), nil, "reconcile-id-order")
	require.Len(t, r.Violations, 1)

	// A disturbed step is not judged: a failed read may have skipped the
	// tick, a fault or a crash may have begun another at the same instant.
	clean(rows().claimAndProvision("b").call("c1", "store.List", "", "", "", "unavailable").claimAndProvision("a"))
	clean(rows().claimAndProvision("b").add(history.Event{Kind: history.KindCrash, Instance: "c1"}).leader("c1", 2).claimAndProvision("a"))
}

// Ids are SPEC 1.1's uuids, ordered as the column orders them.
func TestReconcileIDOrderUUIDs(t *testing.T) {
	lo, hi := "0f8e2a3c-1b2d-4e5f-8a9b-0c1d2e3f4a5b", "A0e2a3c1-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
	require.True(t, idLess(lo, hi))
	require.True(t, idLess("a0e2a3c1-1b2d-4e5f-8a9b-0c1d2e3f4a5b", "B0e2a3c1-1b2d-4e5f-8a9b-0c1d2e3f4a5b"), "case does not order uuids")
	require.False(t, idLess("b0e2a3c1-1b2d-4e5f-8a9b-0c1d2e3f4a5b", "A0e2a3c1-1b2d-4e5f-8a9b-0c1d2e3f4a5b"))
	require.True(t, idLess("B", "a"), "other ids compare as strings")

	tr := newTrace().leader("c1", 1).insert(lo, contracts.DesiredRunning).insert(hi, contracts.DesiredRunning).
		at(time.Second).check("c1", 1, "").claimAndProvision(hi).claimAndProvision(lo).at(3*time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "reconcile-id-order")
	require.Len(t, r.Violations, 1)
	require.Equal(t, lo, r.Violations[0].Subject)
}
