package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// claimBy is inst's claim of op on id under epoch, with extra columns.
func (tr *trace) claimBy(inst string, epoch int64, id string, op contracts.Operation, p contracts.Patch) *trace {
	c := decide.ClaimCond(op)
	p.Operation, p.OpStartedAt = contracts.Some(op), contracts.Some(tr.now)
	return tr.write(contracts.CompStateReconciler, inst, epoch, id, &c, p)
}

// timeoutEntry is inst's Timeout ERROR entry on id.
func (tr *trace) timeoutEntry(inst string, epoch int64, id string) *trace {
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: tr.now}
	return tr.write(contracts.CompStateReconciler, inst, epoch, id, nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone),
		OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some(info), PreviousStatus: contracts.Some(contracts.ObservedPending)})
}

// SPEC 4.2 step 3 and 4.2.3: a tick that runs enters ERROR on every row
// whose operation went past its timeout; it does not leave one out.
func TestSkipsWorkspaceTimeout(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
			at(6*time.Minute).check("c1", 1, "").claim("x", contracts.OpProvisioning).call("c1", MProvision, "x", "", "", "")
	}
	over := func(tr *trace) *trace { return tr.at(7*time.Minute).check("c1", 1, "") }
	r := run(t, over(base()), nil, "skips-workspace")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "w", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "past its 5m0s timeout")

	r = run(t, over(base().timeoutEntry("c1", 1, "w")), nil, "skips-workspace")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("skips-workspace"))

	// A failure on w in that tick skips w (SPEC 3), and a read that
	// failed may have skipped the whole tick.
	r = run(t, over(base().add(failedWrite("c1", "w"))), nil, "skips-workspace")
	require.Empty(t, r.Violations)
	r = run(t, over(base().call("c1", "store.List", "", "", "", "unavailable")), nil, "skips-workspace")
	require.Empty(t, r.Violations)
}

// SPEC 4.2.2, "Resuming": a leader that sees an operation in progress it
// has not invoked since it became leader invokes its actuator calls.
func TestSkipsWorkspaceResume(t *testing.T) {
	base := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").
			at(10*time.Second).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).leader("c2", 2).
			at(12*time.Second).check("c2", 2, "").claimBy("c2", 2, "x", contracts.OpProvisioning, contracts.Patch{}).call("c2", MProvision, "x", "", "", "")
	}
	r := run(t, base().at(time.Minute).check("c2", 2, ""), nil, "skips-workspace")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "w", r.Violations[0].Subject)
	require.Contains(t, r.Violations[0].Message, "had not invoked since it took the lead")

	r = run(t, base().call("c2", MProvision, "w", "", "", "").at(time.Minute).check("c2", 2, ""), nil, "skips-workspace")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("skips-workspace"))

	// A recorded failure's 30 s spacing still running: the resume waits.
	failed := func() *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
			claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "VOLUME_CREATE_FAILED: no")
		info := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Operation: contracts.OpProvisioning, ErrorCount: 1, OccurredAt: tr.now}
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(1), ErrorInfo: contracts.Some(info)}).
			at(10*time.Second).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).leader("c2", 2)
	}
	r = run(t, failed().at(12*time.Second).claimBy("c2", 2, "x", contracts.OpProvisioning, contracts.Patch{}).call("c2", MProvision, "x", "", "", "").at(time.Minute).check("c2", 2, ""), nil, "skips-workspace")
	require.Empty(t, r.Violations)
	r = run(t, failed().at(31*time.Second).claimBy("c2", 2, "x", contracts.OpProvisioning, contracts.Patch{}).call("c2", MProvision, "x", "", "", "").at(time.Minute).check("c2", 2, ""), nil, "skips-workspace")
	require.Len(t, r.Violations, 1, "the spacing ran out: the resume is owed")

	// STARTING is not resumed while the table shows no volume (C6).
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("w", contracts.OpStarting).
		at(10*time.Second).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).leader("c2", 2).
		at(12*time.Second).claimBy("c2", 2, "x", contracts.OpProvisioning, contracts.Patch{}).call("c2", MProvision, "x", "", "", "").
		at(time.Minute).check("c2", 2, "")
	r = run(t, tr, nil, "skips-workspace")
	require.Empty(t, r.Violations)
}

// SPEC 3: a failure skips one tick, not the component's next ones; the
// HealthMonitor's period is at most 30 s, whatever the fleet.
func TestSkipsTick(t *testing.T) {
	steps := func(tr *trace, inst string, epoch int64, from, to time.Duration, list bool) *trace {
		for d := from; d <= to; d += 2 * time.Second {
			tr.at(d).check(inst, epoch, "")
			if list {
				tr.call(inst, MInstancesList, "", "", "", "")
			}
		}
		return tr
	}
	tr := steps(newTrace().leader("c1", 1).call("c1", MInstancesList, "", "", "", ""), "c1", 1, 2*time.Second, 10*time.Second, true)
	r := run(t, steps(tr, "c1", 1, 12*time.Second, 70*time.Second, true), nil, "skips-tick")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("skips-tick"))

	// Its reads failing, the leader makes no pass for a minute.
	tr = steps(newTrace().leader("c1", 1).call("c1", MInstancesList, "", "", "", ""), "c1", 1, 2*time.Second, 10*time.Second, true)
	tr.at(11*time.Second).call("c1", "store.List", "", "", "", "unavailable")
	r = run(t, steps(tr, "c1", 1, 12*time.Second, 70*time.Second, false), nil, "skips-tick")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no HealthMonitor tick since")

	// A failed listing is a tick all the same.
	tr = newTrace().leader("c1", 1)
	for d := time.Duration(0); d <= 70*time.Second; d += 2 * time.Second {
		tr.at(d).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "unavailable")
	}
	r = run(t, tr, nil, "skips-tick")
	require.Empty(t, r.Violations)

	// Nothing is owed while no one leads: the count starts at the next
	// acquisition.
	tr = newTrace().leader("c1", 1).call("c1", MInstancesList, "", "", "", "").
		at(20*time.Second).check("c1", 1, "db unavailable").call("c1", MRelease, "", "c1", "", "").
		add(history.Event{Kind: history.KindLeader, Method: "release", Instance: "c1", Epoch: 1}).
		at(40*time.Second).leader("c2", 2)
	r = run(t, steps(tr, "c2", 2, 50*time.Second, 84*time.Second, false), nil, "skips-tick")
	require.Empty(t, r.Violations)
	r = run(t, steps(tr, "c2", 2, 86*time.Second, 90*time.Second, false), nil, "skips-tick")
	require.Len(t, r.Violations, 1)
}

// mismatch is SPEC 4.1's container-without-volume error_info for a row
// at rest.
func mismatch(at time.Time) *contracts.ErrorInfo {
	return &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "container without volume", IsTerminal: true,
		Operation: contracts.OpNone, ErrorCount: 0, OccurredAt: at,
		Context: map[string]any{"violation": contracts.ViolationContainerWithoutVolume, "expected": "volume_exists=true", "actual": "false"}}
}

// SPEC 4.1, health rule 2: the error_info the HealthMonitor writes once.
func TestHealthMismatchInfo(t *testing.T) {
	hm := func(info *contracts.ErrorInfo, cond *contracts.Cond) *trace {
		p := contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError), ObservedAt: contracts.Some(t0)}
		if info != nil {
			p.ErrorInfo = contracts.Some(info)
		}
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).write(contracts.CompHealthMonitor, "c1", 1, "w", cond, p)
	}
	null := &contracts.Cond{ErrorInfoNull: true}
	r := run(t, hm(mismatch(t0), null), nil, "health-mismatch-info")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("health-mismatch-info"))

	// Without the row's operation, or another reason.
	bad := mismatch(t0)
	bad.Operation = ""
	r = run(t, hm(bad, null), nil, "health-mismatch-info")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, `operation "", want the row's "NONE"`)
	bad = mismatch(t0)
	bad.Context = map[string]any{"violation": contracts.ViolationContainerWithoutVolume}
	r = run(t, hm(bad, null), nil, "health-mismatch-info")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, `context "expected"`)

	// Not conditioned on error_info being null.
	r = run(t, hm(mismatch(t0), nil), nil, "health-mismatch-info")
	require.Len(t, r.Violations, 1)

	// Health ERROR on a row without error_info, and no error_info set.
	r = run(t, hm(nil, nil), nil, "health-mismatch-info")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without setting error_info")
	// Unless a write changed error_info just before: the pass may have
	// read a retry's error_info, which rule 2 leaves alone.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil)}).
		write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	r = run(t, tr, nil, "health-mismatch-info")
	require.Empty(t, r.Violations)
}

// SPEC 4.5: an orphan timer must not expire by itself.
func TestGCTimerNoExpiry(t *testing.T) {
	orphan := func() *trace {
		return newTrace().leader("c1", 1).
			call("c1", MArchive, "gone", "op1", ArchiveUploaded+"archives/gone/op1/home.tar.zst", "").
			call("c1", MObjList, "", "archives/", "2", "")
	}
	r := run(t, orphan().call("c1", MSetNX, "", "gc_orphan:archives/gone/op1/home.tar.zst=1 ttl=24h0m0s", "true", ""), nil, "gc-timer-no-expiry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "with an expiry (24h0m0s)")

	// Without an expiry, or a key of the proxy's, or set by a process
	// outside the election: nothing to say.
	tr := orphan().call("c1", "bus.Set", "", "gc_orphan:archives/gone/op1/home.tar.zst=1", "", "").
		call("c1", "bus.Set", "", "idle_timer:w=1 ttl=5m0s", "", "").
		call("api", "bus.Set", "", "other=1 ttl=5m0s", "", "")
	r = run(t, tr, nil, "gc-timer-no-expiry")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-timer-no-expiry"))

	// A listing with nothing orphaned is not the situation.
	tr = newTrace().leader("c1", 1).call("c1", MObjList, "", "archives/", "0", "")
	r = run(t, tr, nil, "gc-timer-no-expiry")
	require.Equal(t, NotExercise, r.Verdict("gc-timer-no-expiry"))
}

// SPEC 4.2.2: ARCHIVING's op_id at its claim; other claims clear a kept
// one.
func TestArchivingOpID(t *testing.T) {
	standby := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).observe("w", contracts.ObservedStandby)
	}
	// An ERROR entry kept op_id o1 (the workspace since recovered).
	kept := func() *trace {
		tr := standby().claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{OpID: contracts.Some("o1")})
		return tr.timeoutEntry("c1", 1, "w").recovered("w")
	}
	r := run(t, kept().claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{OpID: contracts.Some("o1")}), nil, "archiving-op-id")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("archiving-op-id"))
	r = run(t, kept().claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{OpID: contracts.Some("o2")}), nil, "archiving-op-id")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "ERROR entry kept op_id o1")

	// A claim without an op_id.
	r = run(t, standby().claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{}), nil, "archiving-op-id")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "without an op_id")

	// An op_id used before is not new.
	tr := standby().claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{OpID: contracts.Some("o1")}).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone), OpStartedAt: contracts.Some(time.Time{}), OpID: contracts.Some("")}).
		claimBy("c1", 1, "w", contracts.OpArchiving, contracts.Patch{OpID: contracts.Some("o1")})
	r = run(t, tr, nil, "archiving-op-id")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "already used")

	// Another operation clears a kept op_id; DELETING may keep it.
	r = run(t, kept().claimBy("c1", 1, "w", contracts.OpStarting, contracts.Patch{}), nil, "archiving-op-id")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "STARTING claimed leaving op_id o1")
	r = run(t, kept().claimBy("c1", 1, "w", contracts.OpStarting, contracts.Patch{OpID: contracts.Some("")}), nil, "archiving-op-id")
	require.Empty(t, r.Violations)
	r = run(t, kept().claimBy("c1", 1, "w", contracts.OpDeleting, contracts.Patch{}), nil, "archiving-op-id")
	require.Empty(t, r.Violations)
}

// SPEC 4.1's health rules, on every HealthMonitor write, against its
// instance's latest listings.
func TestHealthRules(t *testing.T) {
	hmWrite := func(tr *trace, p contracts.Patch) *trace {
		p.ObservedAt = contracts.Some(tr.now)
		return tr.write(contracts.CompHealthMonitor, "c1", 1, "w", &contracts.Cond{ErrorInfoNull: p.ErrorInfo.Set}, p)
	}
	listed := func(containers, volumes string) *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
			listInstances("c1", containers, "").listVolumes("c1", volumes, "")
	}
	// Rule 3: container and volume, health OK.
	r := run(t, hmWrite(listed("1 = w+", "1 = w"), contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}), nil, "health-rules")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("health-rules"))
	// ERROR without cause.
	r = run(t, hmWrite(listed("1 = w+", "1 = w"), contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning), HealthStatus: contracts.Some(contracts.HealthError)}), nil, "health-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "rule 3 (otherwise OK) gives OK")

	// Rule 2: a container without its volume, the Mismatch set.
	tr := hmWrite(listed("1 = w-", "0 ="), contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError), ErrorInfo: contracts.Some(mismatch(t0))})
	r = run(t, tr, nil, "health-rules")
	require.Empty(t, r.Violations)
	tr = hmWrite(listed("1 = w-", "0 ="), contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedPending)})
	r = run(t, tr, nil, "health-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "rule 2")

	// Rule 1: a terminal error_info keeps health ERROR whatever the world.
	terminal := func() *trace {
		tr := listed("1 = w+", "1 = w")
		info := &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, IsTerminal: true, OccurredAt: t0}
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
			at(5*time.Second).listInstances("c1", "1 same", "").listVolumes("c1", "1 same", "")
	}
	r = run(t, hmWrite(terminal(), contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}), nil, "health-rules")
	require.Empty(t, r.Violations)
	r = run(t, hmWrite(terminal(), contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}), nil, "health-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "rule 1")

	// After a failed listing nothing is judged here.
	tr = listed("1 = w+", "1 = w").listVolumes("c1", "", "unavailable")
	r = run(t, hmWrite(tr, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}), nil, "health-rules")
	require.Empty(t, r.Violations)
}
