package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// firstTicks is inst's acquisition of the lock at the trace's instant and
// the first ticks SPEC asks of that step: the EventListener listens, the
// HealthMonitor lists containers and volumes, the Archive GC lists
// archives/.
func (tr *trace) firstTicks(inst string, epoch int64) *trace {
	return tr.leader(inst, epoch).call(inst, MListen, "", "", "", "").
		call(inst, MInstancesList, "", "", "", "").call(inst, "storage.ListVolumes", "", "", "", "").
		call(inst, MObjList, "", "archives/", "0", "")
}

// SPEC 3, "Due times": the step in which an instance acquires the lock
// runs all five components.
func TestFirstStepComponents(t *testing.T) {
	tr := newTrace().firstTicks("c1", 1).at(time.Second).check("c1", 1, "")
	r := run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("first-step-components"))

	// A failed listing is a tick all the same (SPEC 3, "Failures").
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MInstancesList, "", "", "", "docker unavailable").
		call("c1", MObjList, "", "archives/", "", "s3 unavailable").at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)

	// The GC waits for its hour instead of running at the acquisition.
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MInstancesList, "", "", "", "").at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no tick of the Archive GC")

	// No listing and no LISTEN at all: one violation naming all three.
	tr = newTrace().leader("c2", 2).at(time.Second).check("c2", 2, "")
	r = run(t, tr, nil, "first-step-components")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "HealthMonitor")
	require.Contains(t, r.Violations[0].Message, "EventListener")

	// An instance that gives the lead up within the step owes nothing.
	tr = newTrace().leader("c1", 1).call("c1", MListen, "", "", "", "").
		call("c1", MRelease, "", "c1", "", "").at(time.Second)
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)

	// Nor does one whose answer to its lock try was lost: it leads unawares.
	tr = newTrace().leader("c1", 1).add(history.Event{Kind: history.KindFault, Instance: "c1", Method: FLostResp, Args: MTryAcquire}).
		at(time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "first-step-components")
	require.Empty(t, r.Violations)
}

// SPEC 3, "Due times": the GC's next pass runs at the first step at or
// after one hour from the start of its previous pass.
func TestGCHourly(t *testing.T) {
	step := func(tr *trace, d time.Duration) *trace { return tr.at(d).check("c1", 1, "") }
	pass := func(tr *trace, d time.Duration, err string) *trace {
		return step(tr, d).call("c1", MObjList, "", "archives/", "", err)
	}
	// Passes on the hour, steps in between; the second pass failed and the
	// next one comes an hour after its start all the same.
	tr := newTrace().firstTicks("c1", 1)
	for m := 10; m < 180; m += 10 {
		if m%60 == 0 {
			tr = pass(tr, time.Duration(m)*time.Minute, map[bool]string{true: "s3 unavailable"}[m == 60])
		} else {
			tr = step(tr, time.Duration(m)*time.Minute)
		}
	}
	r := run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// No step on the hour: the first step after it passes.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, time.Hour-500*time.Millisecond)
	tr = pass(tr, time.Hour+1500*time.Millisecond, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// A failed pass retried sooner.
	tr = newTrace().leader("c1", 1).call("c1", MObjList, "", "archives/", "", "s3 unavailable")
	tr = pass(tr, 10*time.Minute, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "before its due time")

	// A step at the due time without the pass, which comes a step later.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(step(tr, time.Hour), time.Hour+time.Second)
	tr = pass(tr, time.Hour+2*time.Second, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Len(t, r.Violations, 1, "once per gap")
	require.Contains(t, r.Violations[0].Message, "ran none")

	// A new leadership starts again with a pass at its first step; its next
	// pass is due an hour after that one, not after the old leader's.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, 30*time.Minute).add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1})
	tr = tr.at(31*time.Minute).firstTicks("c2", 2)
	tr = tr.at(time.Hour).check("c2", 2, "")
	tr = tr.at(time.Hour+31*time.Minute).check("c2", 2, "").call("c2", MObjList, "", "archives/", "", "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-hourly"))

	// A step cut short by a crash owes nothing.
	tr = newTrace().firstTicks("c1", 1)
	tr = step(tr, time.Hour).add(history.Event{Kind: history.KindCrash, Instance: "c1"})
	tr = tr.at(time.Hour+time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "gc-hourly")
	require.Empty(t, r.Violations)
}

// rowOf inserts w as it stands: a test's shortcut to a row some earlier
// leadership left in that state.
func (tr *trace) rowOf(w contracts.Workspace) *trace {
	return tr.add(history.Event{Kind: history.KindInsert, Component: contracts.CompAPI, Workspace: w.ID, Row: &w})
}

// ttlAsk is inst's TTL request on id through the API service layer (SPEC
// 1.6: api on behalf of ttl_manager, the leader epoch), applied or refused
// by its condition.
func (tr *trace) ttlAsk(inst string, epoch int64, id string, to contracts.DesiredState, applied bool) *trace {
	return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: inst, Epoch: epoch, Workspace: id,
		Args: onBehalfOf + string(contracts.CompTTLManager), Patch: &contracts.Patch{DesiredState: contracts.Some(to)}, Applied: applied})
}

// wsAt is a row of id at t0 as the HealthMonitor last saw it: observed
// o, desired d, last accessed at t0.
func wsAt(id string, o contracts.ObservedStatus, d contracts.DesiredState) contracts.Workspace {
	w := contracts.NewWorkspace(id, "u1", "n", "img", t0)
	w.ObservedStatus, w.DesiredState, w.LastAccessAt = o, d, t0
	return w
}

// firstStepCase is a history in which c2 acquires the lock at t0+10min
// (past the standby TTL of rows accessed at t0), its first ticks made,
// then whatever step adds, then its next step.
func firstStepCase(rows []contracts.Workspace, step func(*trace) *trace) *trace {
	tr := newTrace()
	for _, w := range rows {
		tr.rowOf(w)
	}
	return step(tr.at(10*time.Minute).firstTicks("c2", 2)).at(10*time.Minute+time.Second).check("c2", 2, "")
}

// firstStepExcuses are the things that excuse a row, or the whole
// acquisition step, from what the first step owes it: DR562's (the step
// ends the lead or is cut short) and the failed reads and concurrent
// writers of DR600.
var firstStepExcuses = map[string]func(*trace) *trace{
	"crash":        func(tr *trace) *trace { return tr.add(history.Event{Kind: history.KindCrash, Instance: "c2"}) },
	"release":      func(tr *trace) *trace { return tr.call("c2", MRelease, "", "c2", "", "") },
	"failed check": func(tr *trace) *trace { return tr.check("c2", 2, "connection reset") },
	"fenced write": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompHealthMonitor, Instance: "c2", Epoch: 2, Workspace: "other",
			Patch: &contracts.Patch{HealthStatus: contracts.Some(contracts.HealthOK)}, Err: contracts.ErrFenced.Error()})
	},
	"lost lock": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c2", Epoch: 2})
	},
	"fault naming the instance": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindFault, Instance: "c2", Method: FKillSession})
	},
	"deposition": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindFault, Instance: "c9", Method: FDepose})
	},
	"lost answer on the row": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindFault, Instance: "c2", Workspace: "w", Method: FLostResp, Args: "store.Update"})
	},
	"failed selection read": func(tr *trace) *trace { return tr.call("c2", "store.List", "", "", "", "db: connection refused") },
	"failed row read":       func(tr *trace) *trace { return tr.call("c2", "store.Get", "w", "", "", "db: connection refused") },
	"failed bus read":       func(tr *trace) *trace { return tr.call("c2", MBusGet, "", "", "", "redis: connection refused") },
	"another write to the row": func(tr *trace) *trace {
		return tr.write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{Memo: contracts.Some("edited")})
	},
	"another write to the row, failed": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "api", Workspace: "w",
			Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredPending)}, Err: "db: connection reset"})
	},
	"a user's request": func(tr *trace) *trace {
		return tr.add(history.Event{Kind: history.KindAPI, Instance: "api", Workspace: "w", Method: "api.Patch", Err: "409 INVALID_STATE"})
	},
}

// SPEC 3, "Due times", for the TTL Manager (4.4): a row past its TTL at
// the acquisition instant gets its request in the acquisition step.
func TestFirstStepTTL(t *testing.T) {
	idle := []contracts.Workspace{wsAt("w", contracts.ObservedRunning, contracts.DesiredRunning)}
	const name = "first-step-ttl"

	// The request made, applied or refused by its condition: a pass.
	for _, applied := range []bool{true, false} {
		r := run(t, firstStepCase(idle, func(tr *trace) *trace {
			return tr.ttlAsk("c2", 2, "w", contracts.DesiredStandby, applied)
		}), nil, name)
		require.Empty(t, r.Violations)
		require.Equal(t, Pass, r.Verdict(name))
		require.Equal(t, 1, r.Exercised[name])
	}

	// None made: flagged, naming the rule.
	r := run(t, firstStepCase(idle, func(tr *trace) *trace { return tr }), nil, name)
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "TTL Manager")
	require.Contains(t, r.Violations[0].Message, "desired STANDBY")
	require.Equal(t, "w", r.Violations[0].Subject)

	// A write at that instant that changes nothing the TTL Manager reads (a
	// HealthMonitor pass finding nothing new), or a user's read, excuses
	// nothing.
	for what, same := range map[string]func(*trace) *trace{
		"same values": func(tr *trace) *trace {
			return tr.write(contracts.CompHealthMonitor, "c2", 2, "w", nil, contracts.Patch{ObservedAt: contracts.Some(tr.now),
				ObservedStatus: contracts.Some(contracts.ObservedRunning), HealthStatus: contracts.Some(contracts.HealthOK)})
		},
		"refused write": func(tr *trace) *trace {
			return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "api", Workspace: "w",
				Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredPending)}})
		},
		"a user's read": func(tr *trace) *trace {
			return tr.add(history.Event{Kind: history.KindAPI, Instance: "api", Workspace: "w", Method: "api.Get"})
		},
	} {
		r := run(t, firstStepCase(idle, same), nil, name)
		require.Len(t, r.Violations, 1, what)
	}

	// The archive rule too: a STANDBY row past its archive TTL.
	standby := wsAt("w", contracts.ObservedStandby, contracts.DesiredStandby)
	standby.ArchiveTTLSeconds = 60
	r = run(t, firstStepCase([]contracts.Workspace{standby}, func(tr *trace) *trace { return tr }), nil, name)
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "desired PENDING")

	// Each excuse: nothing flagged.
	for what, excuse := range firstStepExcuses {
		r := run(t, firstStepCase(idle, excuse), nil, name)
		require.Empty(t, r.Violations, what)
	}

	// The activity keys not known exactly, or saying the workspace is in
	// use: the standby rule owes nothing.
	notOwed := map[string]func(*trace) *trace{
		"connected": func(tr *trace) *trace {
			return tr.at(time.Minute).call("proxy", MBusIncr, "", "ws_conn:w", "1", "").at(10 * time.Minute)
		},
		"idle timer running": func(tr *trace) *trace {
			return tr.at(time.Minute).call("proxy", MBusSet, "", "idle_timer:w=1 ttl=10m0s", "", "").at(10 * time.Minute)
		},
		"idle timer expiring then": func(tr *trace) *trace {
			return tr.at(time.Minute).call("proxy", MBusSet, "", "idle_timer:w=1 ttl=9m0s", "", "").at(10 * time.Minute)
		},
		"keys changed then": func(tr *trace) *trace {
			return tr.at(10*time.Minute).call("proxy", MBusDecr, "", "ws_conn:w", "0", "")
		},
		"bus flushed then":    func(tr *trace) *trace { return tr.at(10*time.Minute).fault(FFlushBus, "", "") },
		"operation running":   nil,
		"terminal error":      nil,
		"within its TTL":      nil,
		"desired STANDBY yet": nil,
	}
	for what, before := range notOwed {
		rows := []contracts.Workspace{wsAt("w", contracts.ObservedRunning, contracts.DesiredRunning)}
		switch what {
		case "operation running":
			rows[0].Operation, rows[0].OpStartedAt = contracts.OpStopping, t0
		case "terminal error":
			rows[0].ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0}
		case "within its TTL":
			rows[0].StandbyTTLSeconds = 3600
		case "desired STANDBY yet":
			rows[0].DesiredState = contracts.DesiredStandby
		}
		tr := newTrace()
		for _, w := range rows {
			tr.rowOf(w)
		}
		if before != nil {
			tr = before(tr)
		}
		tr = tr.at(10*time.Minute).firstTicks("c2", 2).at(10*time.Minute+time.Second).check("c2", 2, "")
		r := run(t, tr, nil, name)
		require.Empty(t, r.Violations, what)
		require.Zero(t, r.Exercised[name], what)
	}
	// Its keys could not be read: never stop a workspace on a guess (4.4).
	r = run(t, firstStepCase(idle, func(tr *trace) *trace {
		return tr.call("c2", MBusGet, "", "ws_conn:w", "", "redis: timeout")
	}), nil, name)
	require.Empty(t, r.Violations)
	require.Zero(t, r.Exercised[name])
	// A flush does not excuse the archive rule, which reads no key.
	r = run(t, firstStepCase([]contracts.Workspace{standby}, func(tr *trace) *trace { return tr.fault(FFlushBus, "", "") }), nil, name)
	require.Len(t, r.Violations, 1)
}

// SPEC 3, "Due times", for the StateReconciler (4.2): a row that owes its
// first tick a claim, a completion, an ERROR or Timeout entry or a resume
// sees it attempted in the acquisition step.
func TestFirstStepReconciler(t *testing.T) {
	const name = "first-step-reconciler"
	pending := wsAt("w", contracts.ObservedPending, contracts.DesiredRunning)
	provisioned := wsAt("w", contracts.ObservedStandby, contracts.DesiredRunning)
	provisioned.Operation, provisioned.OpStartedAt = contracts.OpProvisioning, t0.Add(8*time.Minute)
	stuck := wsAt("w", contracts.ObservedStandby, contracts.DesiredRunning)
	stuck.Operation, stuck.OpStartedAt = contracts.OpStarting, t0
	resumed := wsAt("w", contracts.ObservedPending, contracts.DesiredRunning)
	resumed.Operation, resumed.OpStartedAt = contracts.OpProvisioning, t0.Add(9*time.Minute)

	claim := func(applied bool) func(*trace) *trace {
		return func(tr *trace) *trace {
			return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: "c2", Epoch: 2, Workspace: "w",
				Patch: &contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(tr.now)}, Applied: applied})
		}
	}
	end := func(tr *trace) *trace {
		return tr.write(contracts.CompStateReconciler, "c2", 2, "w", nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone), OpStartedAt: contracts.Some(time.Time{})})
	}
	provision := func(tr *trace) *trace {
		return tr.check("c2", 2, "").call("c2", MProvision, "w", "", "", "")
	}
	nothing := func(tr *trace) *trace { return tr }
	for _, c := range []struct {
		what  string
		row   contracts.Workspace
		act   func(*trace) *trace
		owing string
	}{
		{"claim applied", pending, claim(true), ""},
		{"claim refused", pending, claim(false), ""},
		{"no claim", pending, nothing, "claim of PROVISIONING"},
		{"a write that is no claim", pending, end, "claim of PROVISIONING"},
		{"completion", provisioned, end, ""},
		{"no completion", provisioned, nothing, "complete its PROVISIONING"},
		{"timeout entry", stuck, end, ""},
		{"no timeout entry", stuck, nothing, "Timeout ERROR"},
		{"resume", resumed, provision, ""},
		{"no resume", resumed, nothing, "resume"},
	} {
		r := run(t, firstStepCase([]contracts.Workspace{c.row}, c.act), nil, name)
		require.Equal(t, 1, r.Exercised[name], c.what)
		if c.owing == "" {
			require.Empty(t, r.Violations, c.what)
			continue
		}
		require.Len(t, r.Violations, 1, c.what)
		require.Contains(t, r.Violations[0].Message, "StateReconciler", c.what)
		require.Contains(t, r.Violations[0].Message, c.owing, c.what)
	}

	// Each excuse: nothing flagged.
	for _, row := range []contracts.Workspace{pending, provisioned, stuck, resumed} {
		for what, excuse := range firstStepExcuses {
			r := run(t, firstStepCase([]contracts.Workspace{row}, excuse), nil, name)
			require.Empty(t, r.Violations, what)
		}
	}

	// Nothing owed whatever the tick does: a row at rest, a claim SPEC
	// leaves optional, a resume within a recorded failure's spacing or
	// after the leader's own failed call, a STARTING with no volume.
	atRest := wsAt("w", contracts.ObservedRunning, contracts.DesiredRunning)
	atRest.StandbyTTLSeconds = 3600
	inError := wsAt("w", contracts.ObservedStandby, contracts.DesiredPending)
	inError.DeletedAt, inError.HealthStatus = t0, contracts.HealthError
	spaced := resumed
	spaced.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, OccurredAt: t0.Add(9*time.Minute + 50*time.Second)}
	noVolume := wsAt("w", contracts.ObservedPending, contracts.DesiredRunning)
	noVolume.Operation, noVolume.OpStartedAt = contracts.OpStarting, t0.Add(9*time.Minute)
	for what, row := range map[string]contracts.Workspace{"at rest": atRest, "optional claim": inError, "spaced": spaced, "no volume": noVolume} {
		r := run(t, firstStepCase([]contracts.Workspace{row}, nothing), nil, name)
		require.Empty(t, r.Violations, what)
		require.Zero(t, r.Exercised[name], what)
	}
	ownFailure := newTrace().rowOf(resumed).at(9*time.Minute+45*time.Second).call("c2", MProvision, "w", "", "", "DOCKER_UNREACHABLE: down")
	ownFailure = ownFailure.at(10*time.Minute).firstTicks("c2", 2).at(10*time.Minute+time.Second).check("c2", 2, "")
	r := run(t, ownFailure, nil, name)
	require.Empty(t, r.Violations)
}
