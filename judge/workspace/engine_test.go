package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// trace builds a history event by event.
type trace struct {
	events []history.Event
	now    time.Time
}

func newTrace() *trace { return &trace{now: t0} }

func (tr *trace) at(d time.Duration) *trace { tr.now = t0.Add(d); return tr }

func (tr *trace) add(e history.Event) *trace {
	e.Seq = int64(len(tr.events) + 1)
	if e.At.IsZero() {
		e.At = tr.now
	}
	tr.events = append(tr.events, e)
	return tr
}

func (tr *trace) insert(id string, desired contracts.DesiredState) *trace {
	w := contracts.NewWorkspace(id, "u1", "n", "img", tr.now)
	w.DesiredState = desired
	w.LastAccessAt = tr.now // POST stamps it (SPEC 4.3)
	return tr.add(history.Event{Kind: history.KindInsert, Component: contracts.CompAPI, Workspace: id, Row: &w})
}

func (tr *trace) leader(inst string, epoch int64) *trace {
	return tr.add(history.Event{Kind: history.KindLeader, Method: "acquire", Instance: inst, Epoch: epoch})
}

func (tr *trace) write(comp contracts.Component, inst string, epoch int64, id string, cond *contracts.Cond, p contracts.Patch) *trace {
	return tr.add(history.Event{Kind: history.KindWrite, Component: comp, Instance: inst, Epoch: epoch, Workspace: id, Patch: &p, Cond: cond, Applied: true})
}

func (tr *trace) observe(id string, s contracts.ObservedStatus) *trace {
	return tr.write(contracts.CompHealthMonitor, "c1", 1, id, nil, contracts.Patch{ObservedStatus: contracts.Some(s), ObservedAt: contracts.Some(tr.now)})
}

func (tr *trace) claim(id string, op contracts.Operation) *trace {
	c := decide.ClaimCond(op)
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, &c, contracts.Patch{Operation: contracts.Some(op), OpStartedAt: contracts.Some(tr.now)})
}

func (tr *trace) complete(id string) *trace {
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone), OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil), ErrorCount: contracts.Some(0)})
}

func (tr *trace) call(inst, method, id, args, result, err string) *trace {
	return tr.add(history.Event{Kind: history.KindCall, Instance: inst, Method: method, Workspace: id, Args: args, Result: result, Err: err})
}

// trigger is inst's publish of monitor:trigger for id (SPEC 3).
func (tr *trace) trigger(inst, id string) *trace {
	return tr.call(inst, MPublish, "", specMonitorTrigger, id, "")
}

// check is inst's check of its leader lock of epoch (SPEC 3.1), failed
// when err is set.
func (tr *trace) check(inst string, epoch int64, err string) *trace {
	return tr.add(history.Event{Kind: history.KindCall, Instance: inst, Method: MLockCheck, Args: inst, Epoch: epoch, Err: err})
}

func (tr *trace) fault(method, id, args string) *trace {
	return tr.add(history.Event{Kind: history.KindFault, Method: method, Workspace: id, Args: args})
}

func (tr *trace) pass() *trace {
	return tr.add(history.Event{Kind: history.KindNote, Method: NoteHealthPass, Instance: "c1", Epoch: 1})
}

func run(t *testing.T, tr *trace, f *Final, name string) *Report {
	t.Helper()
	var chosen []Checker
	for _, c := range All() {
		if c.Name() == name {
			chosen = append(chosen, c)
		}
	}
	require.Len(t, chosen, 1, "no checker named %s", name)
	r := Check(Input{Events: tr.events, Final: f}, chosen...)
	// The same events handed over one by one are judged the same.
	each := func(yield func(*history.Event) bool) {
		for i := range tr.events {
			if !yield(&tr.events[i]) {
				return
			}
		}
	}
	for _, c := range All() {
		if c.Name() == name {
			require.Equal(t, r, Check(Input{Each: each, Final: f}, c), "Input.Each")
		}
	}
	return r
}

// provisionAndStart is a correct history of scenario 1. The tick that
// completes PROVISIONING does not claim STARTING: the next one does (SPEC
// 4.2, "the first step that applies decides").
func provisionAndStart(tr *trace) *trace {
	return tr.leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).trigger("c1", "w").check("c1", 1, "").call("c1", MProvision, "w", "", "", "").
		at(2*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedStandby).complete("w").trigger("c1", "w").
		at(3*time.Second).check("c1", 1, "").claim("w", contracts.OpStarting).trigger("c1", "w").check("c1", 1, "").call("c1", MStart, "w", "img", "", "").
		at(4*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedRunning).stamp("w").complete("w").trigger("c1", "w")
}

// stamp is the API service layer's stamp of last_access_at before a
// completion (SPEC 4.2.2).
func (tr *trace) stamp(id string) *trace {
	return tr.write(contracts.CompAPI, "c1", 1, id, nil, contracts.Patch{LastAccessAt: contracts.Some(tr.now)})
}

func TestCleanHistoryPassesEveryChecker(t *testing.T) {
	// provisionAndStart's steps, with the acquisition step running every
	// component (SPEC 3, "Due times") and the listener it starts publishing
	// each change (4.6).
	tr := newTrace().firstTicks("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).trigger("c1", "w").check("c1", 1, "").call("c1", MProvision, "w", "", "", "")
	tr = publish(tr.at(time.Second).check("c1", 1, ""), "c1").
		at(2*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedStandby).complete("w").trigger("c1", "w")
	tr = publish(tr, "c1").
		at(3*time.Second).check("c1", 1, "").claim("w", contracts.OpStarting).trigger("c1", "w").check("c1", 1, "").call("c1", MStart, "w", "img", "", "")
	tr = publish(tr, "c1").
		at(4*time.Second).check("c1", 1, "").call("c1", MInstancesList, "", "", "", "").observe("w", contracts.ObservedRunning).stamp("w").complete("w").trigger("c1", "w")
	tr = publish(tr, "c1").pass()
	r := Check(Input{Events: tr.events})
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c1-completion-observed"))
	require.Equal(t, Pass, r.Verdict("c4-non-preemptive"))
	require.Equal(t, Pass, r.Verdict("c5-one-level"))
	require.Equal(t, NotExercise, r.Verdict("c9-gc-protection"), "no GC happened: must say so rather than pass")
}

func TestC1CompletionWithoutObservation(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).call("c1", MProvision, "w", "", "", "").complete("w")
	r := run(t, tr, nil, "c1-completion-observed")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "PROVISIONING completed")
	require.Equal(t, "w", r.Violations[0].Subject)
}

func TestC3NonOwnerWrites(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompTTLManager, "c1", 1, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	r := run(t, tr, nil, "c3-single-writer")
	require.Len(t, r.Violations, 2)
	require.Contains(t, r.Violations[0].Message, "desired_state")
	require.Contains(t, r.Violations[1].Message, "observed_status")
}

func TestC3HealthMonitorExceptionOnlyOnce(t *testing.T) {
	info := &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, IsTerminal: true, Context: map[string]any{"violation": contracts.ViolationContainerWithoutVolume}}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
		write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)})
	r := run(t, tr, nil, "c3-single-writer")
	require.Len(t, r.Violations, 1, "the first write is the allowed exception, the second is not")
}

func TestC4ClaimWithoutCASAndPreemption(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).
		write(contracts.CompStateReconciler, "c1", 1, "w", &contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)}).
		write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredPending)})
	r := run(t, tr, nil, "c4-non-preemptive")
	msgs := messages(r)
	require.Len(t, msgs, 3)
	require.Contains(t, msgs[0], "without compare-and-set")
	require.Contains(t, msgs[1], "while PROVISIONING was in progress")
	require.Contains(t, msgs[2], "desired_state changed to PENDING while STARTING")
}

func TestC5RunningToPendingInOneStep(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		observe("w", contracts.ObservedRunning).claim("w", contracts.OpArchiving)
	r := run(t, tr, nil, "c5-one-level")
	require.NotEmpty(t, r.Violations)
	require.Contains(t, messages(r)[0], "ARCHIVING claimed from observed RUNNING")
}

func TestC6ContainerWithoutVolumeUnflagged(t *testing.T) {
	base := func() *trace {
		return provisionAndStart(newTrace()).fault(FLoseVolume, "w", "")
	}
	r := run(t, base().pass().pass().pass(), nil, "c6-container-volume")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "container without volume")

	flagged := base().pass().write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}).pass().pass().pass()
	r = run(t, flagged, nil, "c6-container-volume")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c6-container-volume"))
}

func TestC8VolumeDeletedBeforeArchiveKey(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).observe("w", contracts.ObservedStandby).
		write(contracts.CompStateReconciler, "c1", 1, "w", &contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, contracts.Patch{Operation: contracts.Some(contracts.OpArchiving), OpID: contracts.Some("op1")}).
		call("c1", MArchive, "w", "op1", ArchiveUploaded+contracts.ArchiveKey("w", "op1"), "").
		call("c1", MDeleteVolume, "w", "", "", "")
	r := run(t, tr, nil, "c8-ordering")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "before archive_key was committed")
}

func TestC9ProtectedAndEarlyDeletes(t *testing.T) {
	key := contracts.ArchiveKey("w", "op1")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).observe("w", contracts.ObservedStandby).
		write(contracts.CompStateReconciler, "c1", 1, "w", &contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, contracts.Patch{Operation: contracts.Some(contracts.OpArchiving), OpID: contracts.Some("op1")}).
		call("c1", MArchive, "w", "op1", ArchiveUploaded+key, "").
		call("c1", MObjDelete, "w", key, "", "")
	r := run(t, tr, nil, "c9-gc-protection")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "op_id op1 is set")

	// Unprotected by soft delete, but deleted after one hour only.
	early := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0)).
		at(time.Hour).call("c1", MObjDelete, "w", key, "", "")
	r = run(t, early, nil, "c9-gc-protection")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "after only 1h0m0s orphaned")

	late := newTrace().leader("c1", 1).insert("w", contracts.DesiredPending).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0)).
		at(3*time.Hour).call("c1", MObjDelete, "w", key, "", "")
	r = run(t, late, nil, "c9-gc-protection")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c9-gc-protection"))
}

func TestC10DeposedLeaderActsAfterSuccessor(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		add(history.Event{Kind: history.KindLeader, Method: "lost", Instance: "c1", Epoch: 1}).
		leader("c2", 2).
		claim("w", contracts.OpProvisioning) // claim() writes as c1 epoch 1: fenced write landed
	tr.events[len(tr.events)-1].Instance = "c2"
	tr.events[len(tr.events)-1].Epoch = 2
	tr.call("c1", MProvision, "w", "", "", "")
	r := run(t, tr, nil, "c10-fencing")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "deposed leader c1 (epoch 1) called storage.Provision after its successor (epoch 2) acted")
	require.Empty(t, run(t, tr, nil, "c10-single-leader").Violations, "a call is no write: c10-fencing judges it")
	tr.write(contracts.CompStateReconciler, "c1", 0, "w", nil, contracts.Patch{ErrorCount: contracts.Some(1)})
	r = run(t, tr, nil, "c10-single-leader")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "deposed leader c1 (epoch 1) made a write after its successor (epoch 2) acted")

	stale := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).leader("c2", 2)
	stale.claim("w", contracts.OpProvisioning)
	r = run(t, stale, nil, "c10-single-leader")
	msgs := messages(r)
	require.Len(t, msgs, 2)
	require.Contains(t, msgs[0], "while c1 still held it")
	require.Contains(t, msgs[1], "stale epoch 1")
}

func TestC11ClaimOnErrorWorkspace(t *testing.T) {
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
		claim("w", contracts.OpProvisioning)
	r := run(t, tr, nil, "c11-error-skip")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "PROVISIONING claimed on a workspace in ERROR")
}

func TestRetriesTooManyAndTooSoon(t *testing.T) {
	fail := func(tr *trace, n int, terminal bool) *trace {
		info := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, IsTerminal: terminal, ErrorCount: n, OccurredAt: tr.now}
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(n), ErrorInfo: contracts.Some(info)})
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning)
	fail(tr, 1, false)
	tr.at(10 * time.Second)
	fail(tr, 2, false)
	tr.at(60 * time.Second)
	fail(tr, 3, false)
	r := run(t, tr, nil, "retry-policy")
	msgs := messages(r)
	require.Len(t, msgs, 2)
	require.Contains(t, msgs[0], "only 10s apart")
	require.Contains(t, msgs[1], "more than 3 attempts")
}

// The third recorded failure is terminal whatever error_count says: a
// coordinator that never increments it is counted by the checker, and a
// failure written again after a lost answer counts once.
func TestRetriesCountTheFailuresThemselves(t *testing.T) {
	failure := func(tr *trace, count int, call bool) *trace {
		if call {
			tr.call("c1", MProvision, "w", "", "", "VOLUME_CREATE_FAILED: boom")
		}
		info := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, ErrorCount: count, OccurredAt: tr.now}
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorCount: contracts.Some(count), ErrorInfo: contracts.Some(info)})
	}
	build := func(counts []int, calls []bool) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning)
		for i, n := range counts {
			tr.at(time.Duration(i+1) * 40 * time.Second)
			failure(tr, n, calls[i])
		}
		return tr
	}
	r := run(t, build([]int{1, 1, 1}, []bool{true, true, true}), nil, "retry-policy")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "failure 3 of PROVISIONING since its claim recorded as retryable (error_count 1)")

	r = run(t, build([]int{1, 1, 2}, []bool{true, false, true}), nil, "retry-policy")
	require.Empty(t, r.Violations, "the second write records no new failed call")
}

// A failed actuator call whose failure record was lost: the same instance
// may not call again within 30 s in the same leadership. A failed lock
// check ends that leadership (SPEC 3.1: every component stops), even when
// the instance's session still held the lock and its next acquisition
// keeps the epoch (seed 501493, --faults all@2: the release failed too).
func TestRetriesAfterAFailedCallWithinOneLeadership(t *testing.T) {
	build := func(between func(tr *trace)) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
			call("c1", MProvision, "w", "", "", "PROVIDER_ERROR: boom")
		between(tr)
		return tr.at(7*time.Second).call("c1", MProvision, "w", "", "", "")
	}
	r := run(t, build(func(*trace) {}), nil, "retry-policy")
	msgs := messages(r)
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "attempted 7s after the failed call")

	r = run(t, build(func(tr *trace) {
		tr.at(time.Second).call("c1", MLockCheck, "", "c1", "", "unavailable").call("c1", MRelease, "", "c1", "", "unavailable")
	}), nil, "retry-policy")
	require.Empty(t, r.Violations, "a failed lock check ends the leadership: the next one resumes afresh")

	r = run(t, build(func(tr *trace) { tr.at(time.Second).call("c1", MLockCheck, "", "c1", "", "") }), nil, "retry-policy")
	require.Len(t, messages(r), 1, "a lock check that succeeds ends nothing")
}

func TestTimeoutsNotEnforced(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).
		at(10*time.Minute).claim("x", contracts.OpProvisioning).
		at(10*time.Minute+time.Second).check("c1", 1, "") // the tick's instant is over
	r := run(t, tr, nil, "timeouts")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "PROVISIONING started")
}

// FP-2 (examples/acme): nobody reconciled while two operations went
// overdue; the leader that comes back ends both in its first pass, one
// write each. The second is not late at the first one's write.
func TestTimeoutsCountFromTheReturningLeader(t *testing.T) {
	timeout := func(tr *trace, id string) *trace {
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: tr.now}
		return tr.write(contracts.CompStateReconciler, "c1", 2, id, nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone), OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some(info), PreviousStatus: contracts.Some(contracts.ObservedStandby)})
	}
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).claim("x", contracts.OpProvisioning).
		at(20*time.Minute).leader("c1", 2)
	timeout(tr, "w")
	timeout(tr, "x")
	r := run(t, tr, nil, "timeouts")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("timeouts"))

	// The same leader still holding x overdue two slow periods later is late.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("w", contracts.OpProvisioning).claim("x", contracts.OpProvisioning).
		at(20*time.Minute).leader("c1", 2)
	tr.at(20*time.Minute + 2*TimeoutSlack)
	timeout(tr, "w")
	tr.at(20*time.Minute+3*TimeoutSlack).check("c1", 2, "") // the tick's instant is over
	r = run(t, tr, nil, "timeouts")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "x", r.Violations[0].Subject)

	// The 2 s period and its tolerance, not two idle periods: a tick
	// 10 s past x's deadline that leaves it running is late.
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("x", contracts.OpProvisioning).
		at(5*time.Minute+10*time.Second).claim("w", contracts.OpProvisioning).
		at(5*time.Minute+12*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "timeouts")
	require.Len(t, r.Violations, 1)
	require.Equal(t, "x", r.Violations[0].Subject)
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
		claim("x", contracts.OpProvisioning).
		at(5*time.Minute+TimeoutSlack).claim("w", contracts.OpProvisioning).
		at(5*time.Minute+12*time.Second).check("c1", 1, "")
	r = run(t, tr, nil, "timeouts")
	require.Empty(t, r.Violations, "within the slack")
}

// A leader whose lock check fails stops (SPEC 3.1); when its own session
// still held the lock, it takes it again later under the same epoch, and
// nothing records that. Its operations went overdue while it was away:
// its first pass back may end them (seed 600054, --faults all@2).
func TestTimeoutsCountFromALeaderResumingItsEpoch(t *testing.T) {
	build := func(away func(tr *trace)) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).insert("x", contracts.DesiredRunning).
			claim("w", contracts.OpStarting)
		away(tr)
		return tr.at(7*time.Minute).call("c1", "bus.Subscribe", "", "monitor:trigger", "", "").claim("x", contracts.OpProvisioning).
			at(7*time.Minute+time.Second).check("c1", 1, "") // the tick's instant is over
	}
	r := run(t, build(func(tr *trace) {
		tr.at(time.Minute).call("c1", MLockCheck, "", "c1", "", "unavailable").call("c1", MRelease, "", "c1", "", "unavailable").
			at(2*time.Minute).call("c1", MTryAcquire, "", "c1", "", "unavailable")
	}), nil, "timeouts")
	require.Empty(t, r.Violations, "c1 was away from its failed lock check until its next action")

	r = run(t, build(func(*trace) {}), nil, "timeouts")
	require.Len(t, messages(r), 1, "without the failed lock check c1 led all along: w is overdue")

	// The lock taken with its answer lost (seed 1000065): c1 leads
	// without knowing it until its next action.
	r = run(t, build(func(tr *trace) {
		tr.at(time.Minute).add(historyLost("c1", "", MTryAcquire))
	}), nil, "timeouts")
	require.Empty(t, r.Violations)

	// A DB answer lost on its way to c1 (seed 4000573: its reads of the
	// rows to reconcile) is a failure too.
	r = run(t, build(func(tr *trace) {
		tr.at(6*time.Minute + 58*time.Second).add(historyLost("c1", "", "store.List"))
	}), nil, "timeouts")
	require.Empty(t, r.Violations)

	// The DB failing c1's writes (seed 1000250): the grace starts again
	// at its last failure.
	r = run(t, build(func(tr *trace) {
		tr.at(6*time.Minute + 58*time.Second).add(failedWrite("c1", "w"))
	}), nil, "timeouts")
	require.Empty(t, r.Violations)
	// But the next tick comes at the 2 s period after the failure: one
	// 30 s later that leaves w overdue is late.
	r = run(t, build(func(tr *trace) {
		tr.at(6*time.Minute + 30*time.Second).add(failedWrite("c1", "w"))
	}), nil, "timeouts")
	require.Len(t, messages(r), 1)
}

func TestDurabilityFinalState(t *testing.T) {
	tr := provisionAndStart(newTrace())
	f := &Final{End: t0.Add(time.Hour), Volumes: map[string]map[string][]byte{"w": {"a": []byte("old")}}, Expected: map[string]map[string][]byte{"w": {"a": []byte("new")}}}
	r := run(t, tr, f, "c12-durability")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "a differs")

	f.Volumes["w"]["a"] = []byte("new")
	r = run(t, tr, f, "c12-durability")
	require.Empty(t, r.Violations)
}

func TestConvergenceAfterQuiet(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).fault(FQuiet, "", "")
	f := &Final{End: t0.Add(ConvergeBound + time.Minute)}
	r := run(t, tr, f, "c12-convergence")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "observed PENDING, desired RUNNING")

	r = run(t, provisionAndStart(newTrace()).fault(FQuiet, "", ""), f, "c12-convergence")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("c12-convergence"))
}

func messages(r *Report) []string {
	out := make([]string, len(r.Violations))
	for i, v := range r.Violations {
		out[i] = v.Message
	}
	return out
}

func TestTTLRuleMustHold(t *testing.T) {
	ttlWrite := func(tr *trace, to contracts.DesiredState) *trace {
		return tr.add(history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Instance: "c1", Epoch: 1, Workspace: "w",
			Args: "on behalf of ttl_manager", Patch: &contracts.Patch{DesiredState: contracts.Some(to)}, Applied: true})
	}
	idle := func() *trace {
		// RUNNING since t0+4s with last_access_at stamped then (standby TTL 300 s).
		tr := provisionAndStart(newTrace())
		return tr.write(contracts.CompAPI, "c1", 1, "w", nil, contracts.Patch{LastAccessAt: contracts.Some(t0.Add(4 * time.Second))})
	}
	// Idle past the TTL, nobody connected: allowed.
	r := run(t, ttlWrite(idle().at(10*time.Minute), contracts.DesiredStandby), nil, "ttl")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("ttl"))

	// A user is connected: the TTL must not stop it.
	tr := idle().call("proxy", MBusIncr, "", "ws_conn:w", "1", "").at(10 * time.Minute)
	r = run(t, ttlWrite(tr, contracts.DesiredStandby), nil, "ttl")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "1 connection(s)")

	// The idle timer still runs.
	tr = idle().at(9*time.Minute).call("proxy", MBusSet, "", "idle_timer:w=1 ttl=5m0s", "true", "").at(10 * time.Minute)
	r = run(t, ttlWrite(tr, contracts.DesiredStandby), nil, "ttl")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "idle timer true")

	// Before the standby TTL.
	r = run(t, ttlWrite(idle().at(2*time.Minute), contracts.DesiredStandby), nil, "ttl")
	require.Len(t, r.Violations, 1)
}

// 4.2.4: "DataLost and the administrator-only codes of 1.5 are terminal at
// once": the failure a restore's CHECKSUM_MISMATCH leaves is not retried.
func TestRetriesTerminalAtOnceCodes(t *testing.T) {
	build := func(err string, terminal bool) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).at(10*time.Second).
			call("c1", MProvision, "w", "", "", "").call("c1", MRestore, "w", "archives/w/o/home.tar.zst", "", err)
		info := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, ErrorCount: 1, IsTerminal: terminal, OccurredAt: tr.now}
		p := contracts.Patch{ErrorCount: contracts.Some(1), ErrorInfo: contracts.Some(info)}
		if terminal {
			info.Reason = contracts.ReasonDataLost
			p.Operation, p.OpStartedAt, p.PreviousStatus = contracts.Some(contracts.OpNone), contracts.Some(time.Time{}), contracts.Some(contracts.ObservedPending)
		}
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, p)
	}
	r := run(t, build("CHECKSUM_MISMATCH: sha256 differs", true), nil, "retry-policy")
	require.Empty(t, r.Violations)
	r = run(t, build("TAR_EXTRACT_FAILED: bad header", false), nil, "retry-policy")
	require.Empty(t, r.Violations)
	r = run(t, build("CHECKSUM_MISMATCH: sha256 differs", false), nil, "retry-policy")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "terminal at once")
}

// 4.2.2 "Resuming": after invoking an operation's calls a leader only
// checks completion and timeout, except for retries.
func TestInvokeOnceAllowsRetriesAndNewLeaders(t *testing.T) {
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting).
			call("c1", MStart, "w", "img", "", "")
	}
	// A retry after a failure, and a new leader's resume: fine.
	tr := starting().at(10*time.Second).call("c1", MStart, "w", "img", "", "CONTAINER_START_FAILED: boom").
		at(45*time.Second).call("c1", MStart, "w", "img", "", "").
		leader("c2", 2).call("c2", MStart, "w", "img", "", "")
	r := run(t, tr, nil, "invoke-once")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("invoke-once"))

	// start called again at the next tick with nothing failed.
	tr = starting().at(2*time.Second).call("c1", MStart, "w", "img", "", "")
	r = run(t, tr, nil, "invoke-once")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "invoked again by c1")
}
