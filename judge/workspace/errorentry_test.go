package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// enterError is the reconciler's ERROR entry for reason, at the trace's now.
func (tr *trace) enterError(id string, reason contracts.Reason) *trace {
	info := &contracts.ErrorInfo{Reason: reason, IsTerminal: true, OccurredAt: tr.now}
	return tr.write(contracts.CompStateReconciler, "c1", 1, id, nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone),
		OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some(info), PreviousStatus: contracts.Some(contracts.ObservedStandby)})
}

func TestErrorEntryNeedsItsCause(t *testing.T) {
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpStarting)
	}
	// Timeout: only past STARTING's 5 minutes.
	r := run(t, starting().at(5*time.Minute+time.Second).enterError("w", contracts.ReasonTimeout), nil, "error-entry")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("error-entry"))
	r = run(t, starting().at(4*time.Minute).enterError("w", contracts.ReasonTimeout), nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "STARTING entered ERROR (Timeout) 4m0s after it started")

	// RetryExceeded: three failures first, counting failed writes and lost answers.
	fails := func(tr *trace, n int) *trace {
		for i := range n {
			tr.at(time.Duration(i+1) * 31 * time.Second)
			switch i % 3 {
			case 0:
				tr.call("c1", MStart, "w", "img", "", "CONTAINER_START_FAILED: boom")
			case 1:
				tr.add(historyLost("c1", "w", MStart))
			default:
				tr.add(failedWrite("c1", "w"))
			}
		}
		return tr
	}
	r = run(t, fails(starting(), 3).enterError("w", contracts.ReasonRetryExceeded), nil, "error-entry")
	require.Empty(t, r.Violations)
	r = run(t, fails(starting(), 1).enterError("w", contracts.ReasonRetryExceeded), nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "after 1 failed call(s) on it since its claim")

	// Failures of an earlier operation do not count for the next one.
	tr := fails(starting(), 3)
	tr.at(2*time.Minute).complete("w").claim("w", contracts.OpStopping).at(3*time.Minute).enterError("w", contracts.ReasonRetryExceeded)
	require.Len(t, run(t, tr, nil, "error-entry").Violations, 1)

	// Terminal at once (DataLost, the administrator's codes): a call that
	// failed with such a code first (SPEC 1.5), not a retryable one.
	lost := starting().at(31*time.Second).call("c1", MRestore, "w", "key", "", "CHECKSUM_MISMATCH: archive damaged")
	r = run(t, lost.enterError("w", contracts.ReasonDataLost), nil, "error-entry")
	require.Empty(t, r.Violations)
	full := starting().at(31*time.Second).call("c1", MStart, "w", "img", "", "DISK_FULL: no space")
	require.Empty(t, run(t, full.enterError("w", contracts.ReasonActionFailed), nil, "error-entry").Violations)
	r = run(t, fails(starting(), 1).enterError("w", contracts.ReasonActionFailed), nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "none with a code that is terminal at once")
	r = run(t, fails(starting(), 3).enterError("w", contracts.ReasonActionFailed), nil, "error-entry")
	require.Empty(t, r.Violations, "the last of three failures, named by its own reason")
	r = run(t, starting().enterError("w", contracts.ReasonDataLost), nil, "error-entry")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "entered ERROR (DataLost) with no failed call on it since its claim")

	// The ERROR entry of a terminal error the HealthMonitor found is not judged.
	tr = starting()
	mismatch := &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, IsTerminal: true, OccurredAt: tr.now}
	tr.write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(mismatch)}).enterError("w", contracts.ReasonMismatch)
	require.Empty(t, run(t, tr, nil, "error-entry").Violations)
}

func TestRestoreMarkerIsTheOneRestoreReturned(t *testing.T) {
	key := contracts.ArchiveKey("w", "op1")
	restoring := func(marker string) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).
			call("c1", MProvision, "w", "", "created", "").call("c1", MRestore, "w", key, key, "")
		return tr.write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: marker})})
	}
	r := run(t, restoring(key), nil, "restore-marker")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("restore-marker"))

	r = run(t, restoring(key+"#v1"), nil, "restore-marker")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "no restore of the workspace since the claim returned it")

	// A marker written before any restore of this operation returned it.
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpRestoring).
		call("c1", MRestore, "w", key, "", "CHECKSUM_MISMATCH: bad").
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: key})})
	require.Len(t, run(t, tr, nil, "restore-marker").Violations, 1)
}

// historyLost is a lost-answer fault: inst's call of method on id
// succeeded, and inst was told it failed.
func historyLost(inst, id, method string) history.Event {
	return history.Event{Kind: history.KindFault, Instance: inst, Workspace: id, Method: FLostResp, Args: method, Err: "injected"}
}

// failedWrite is a reconciler write of inst on id that the DB failed.
func failedWrite(inst, id string) history.Event {
	return history.Event{Kind: history.KindWrite, Component: contracts.CompStateReconciler, Instance: inst, Epoch: 1, Workspace: id,
		Patch: &contracts.Patch{ErrorCount: contracts.Some(1)}, Err: "store.Update: unavailable"}
}

// The GC's orphan clock restarts only at a sighting it completed: a
// failed listing, or a listing whose protection query then failed, saw
// nothing (SPEC 4.5; seed 2000382: a workspace in ERROR between two
// failed GC passes, its old archive deleted 2 h after the first sighting).
func TestC9SightingsOnlyFromCompletedPasses(t *testing.T) {
	old := contracts.ArchiveKey("w", "op0")
	build := func(pass func(tr *trace)) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
			call("c1", MObjPut, "w", old, "", "").
			at(time.Minute).call("c1", "objects.List", "", "archives/", "", "")
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: tr.now}
		tr.at(30*time.Minute).write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
			write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
		tr.at(61 * time.Minute)
		pass(tr)
		tr.at(70*time.Minute).write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
			write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthOK)})
		return tr.at(121*time.Minute).call("c1", MObjDelete, "w", old, "", "")
	}
	seen := func(tr *trace) { tr.call("c1", "objects.List", "", "archives/", "", "") }
	r := run(t, build(seen), nil, "c9-gc-protection")
	require.Len(t, r.Violations, 1, "the pass at 61 min saw it protected: 2 h count from there")

	failedList := func(tr *trace) { tr.call("c1", "objects.List", "", "archives/", "", "S3_ACCESS_ERROR: down") }
	require.Empty(t, run(t, build(failedList), nil, "c9-gc-protection").Violations)

	failedQuery := func(tr *trace) {
		seen(tr)
		tr.call("c1", "store.List", "", "", "", "unavailable")
	}
	require.Empty(t, run(t, build(failedQuery), nil, "c9-gc-protection").Violations)

	// The pass could not read the archive's timer (seed 7000587): it
	// skipped the archive, and the timer from before ran on.
	failedTimer := func(tr *trace) {
		seen(tr)
		tr.call("c1", "bus.Get", "", contracts.OrphanTimerKey(old), "", "unavailable")
	}
	require.Empty(t, run(t, build(failedTimer), nil, "c9-gc-protection").Violations)
}

func TestAPIRules(t *testing.T) {
	// Created without its stamp.
	tr := newTrace().insert("w", contracts.DesiredRunning)
	r := run(t, tr, nil, "api-rules")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("api-rules"))
	tr.events[0].Row.LastAccessAt = time.Time{}
	r = run(t, tr, nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "created with last_access_at never")

	stamped := func() *trace { return newTrace().insert("w", contracts.DesiredRunning) }
	// inErrorWith: the reconciler's ERROR entry, with message unless "".
	inErrorWith := func(message string) *trace {
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0}
		p := contracts.Patch{ErrorInfo: contracts.Some(info)}
		if message != "" {
			p.ErrorMessage = contracts.Some(message)
		}
		return stamped().write(contracts.CompStateReconciler, "c1", 1, "w", nil, p)
	}
	inError := func() *trace { return inErrorWith("") }
	// Recovery resets error_info and error_count together, and
	// error_message (4.3's rules: "in one write"; the table names the
	// first two).
	r = run(t, inError().write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()), nil, "api-rules")
	require.Empty(t, r.Violations)
	partial := contracts.RecoverPatch()
	partial.ErrorCount = contracts.Opt[int]{}
	r = run(t, inError().write(contracts.CompAdmin, "api", 0, "w", nil, partial), nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "error_info = null and error_count = 0 are reset together")
	withMessage := func() *trace { return inErrorWith("STARTING timed out") }
	r = run(t, withMessage().write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()), nil, "api-rules")
	require.Empty(t, r.Violations)
	keepsMessage := contracts.RecoverPatch()
	keepsMessage.ErrorMessage = contracts.Opt[string]{}
	r = run(t, withMessage().write(contracts.CompAdmin, "api", 0, "w", nil, keepsMessage), nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "left error_message \"STARTING timed out\"")

	// No desired-state change in ERROR; DELETE is allowed, and so is a
	// change once recovered.
	toStandby := contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}
	r = run(t, inError().write(contracts.CompAPI, "api", 0, "w", nil, toStandby), nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "desired_state changed from RUNNING to STANDBY while the workspace is in ERROR")
	r = run(t, inError().write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0)), nil, "api-rules")
	require.Empty(t, r.Violations)
	r = run(t, inError().write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
		write(contracts.CompAPI, "api", 0, "w", nil, toStandby), nil, "api-rules")
	require.Empty(t, r.Violations)
}

func TestSoftDeleteIsOneWrite(t *testing.T) {
	tr := newTrace().insert("w", contracts.DesiredRunning).write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0))
	r := run(t, tr, nil, "api-rules")
	require.Empty(t, r.Violations)
	tr = newTrace().insert("w", contracts.DesiredRunning).write(contracts.CompAPI, "api", 0, "w", nil, contracts.Patch{DeletedAt: contracts.Some(t0)})
	r = run(t, tr, nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "a soft delete sets deleted_at = now and desired_state = PENDING in one write")
}

func TestGCDeletesTheMetaWithItsArchive(t *testing.T) {
	key := contracts.ArchiveKey("w", "op0")
	meta := contracts.MetaKey(key)
	build := func(cycle func(tr *trace)) (*trace, *Final) {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
			call("c1", MObjPut, "w", key, "", "").call("c1", MObjPut, "w", meta, "", "").
			at(3*time.Hour).call("c1", "objects.List", "", "archives/", "", "").
			call("c1", MObjDelete, "w", key, "", "")
		cycle(tr)
		tr.at(4*time.Hour).call("c1", "objects.List", "", "archives/", "", "")
		return tr, &Final{End: tr.now}
	}
	tr, f := build(func(tr *trace) { tr.call("c1", MObjDelete, "w", meta, "", "") })
	r := run(t, tr, f, "gc-meta-with-archive")
	require.Empty(t, r.Violations)
	require.Equal(t, Pass, r.Verdict("gc-meta-with-archive"))

	tr, f = build(func(tr *trace) { tr.call("c1", MObjDelete, "w", meta, "", "S3_ACCESS_ERROR: down") })
	require.Empty(t, run(t, tr, f, "gc-meta-with-archive").Violations, "a failed delete is an attempt")

	tr, f = build(func(tr *trace) { tr.add(history.Event{Kind: history.KindCrash, Instance: "c1"}) })
	require.Empty(t, run(t, tr, f, "gc-meta-with-archive").Violations, "a GC that crashed mid-cycle owes nothing")

	tr, f = build(func(tr *trace) { tr.call("c1", MLockCheck, "", "", "", "DB_ERROR: down") })
	require.Empty(t, run(t, tr, f, "gc-meta-with-archive").Violations, "a GC whose lock check failed mid-cycle stops, and owes nothing (SPEC 3.1)")

	tr, f = build(func(*trace) {})
	r = run(t, tr, f, "gc-meta-with-archive")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "but not "+meta+" in the same GC cycle")
}

func TestProxyWakesOnlyStandby(t *testing.T) {
	wake := history.Event{Kind: history.KindWrite, Component: contracts.CompAPI, Args: onBehalfOf + string(contracts.CompProxy), Workspace: "w",
		Patch: &contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}, Applied: true}
	standby := newTrace().insert("w", contracts.DesiredStandby).observe("w", contracts.ObservedStandby)
	r := run(t, standby.at(time.Minute).add(wake), nil, "api-rules")
	require.Empty(t, r.Violations)

	archived := newTrace().insert("w", contracts.DesiredPending)
	r = run(t, archived.at(time.Minute).add(wake), nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "auto-wake set desired RUNNING on a workspace observed PENDING")

	// Read STANDBY a moment before its volume was found gone.
	tr := newTrace().insert("w", contracts.DesiredStandby).observe("w", contracts.ObservedStandby).
		at(time.Minute).observe("w", contracts.ObservedPending).at(time.Minute + time.Second).add(wake)
	require.Empty(t, run(t, tr, nil, "api-rules").Violations)
}

// SPEC 4.2.2, "Resuming": a leader invokes the actuator calls of an
// operation in progress it has not itself invoked since it became leader,
// rather than waiting for it to time out.
func TestTimeoutsAskThatALeaderResumes(t *testing.T) {
	build := func(resume bool) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).claim("w", contracts.OpProvisioning).
			at(time.Minute).leader("c2", 2)
		if resume {
			tr.at(61*time.Second).call("c2", MProvision, "w", "", "", "")
		}
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0.Add(6 * time.Minute)}
		return tr.at(6*time.Minute).write(contracts.CompStateReconciler, "c2", 2, "w", nil, contracts.Patch{Operation: contracts.Some(contracts.OpNone),
			OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some(info), PreviousStatus: contracts.Some(contracts.ObservedPending)})
	}
	require.Empty(t, run(t, build(true), nil, "timeouts").Violations)
	r := run(t, build(false), nil, "timeouts")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "timed out under c2, which led from")
	require.Contains(t, r.Violations[0].Message, "never invoked its actuator calls")
}

// SPEC 4.3: POST creates what it was asked for, desired RUNNING and the
// column defaults for what it left out.
func TestAPIRulesCreateAsAsked(t *testing.T) {
	post := func(desired contracts.DesiredState, args string) *trace {
		tr := newTrace().insert("w", desired)
		return tr.add(history.Event{Kind: history.KindAPI, Method: MAPICreate, Workspace: "w", Args: "user=u1 name=n image=img" + args})
	}
	require.Empty(t, run(t, post(contracts.DesiredRunning, ""), nil, "api-rules").Violations)
	require.Empty(t, run(t, post(contracts.DesiredStandby, " desired=STANDBY"), nil, "api-rules").Violations)

	r := run(t, post(contracts.DesiredStandby, ""), nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "created desired STANDBY, standby_ttl 300, archive_ttl 86400: it asked for (or left to the defaults) desired RUNNING")

	r = run(t, post(contracts.DesiredRunning, " standby_ttl=600"), nil, "api-rules")
	require.Len(t, r.Violations, 1, "the TTL asked for is not the one stored")

	// A POST that failed created nothing to judge.
	tr := newTrace().add(history.Event{Kind: history.KindAPI, Method: MAPICreate, Args: "user=u1", Err: "429 LIMIT_EXCEEDED"})
	require.Empty(t, run(t, tr, nil, "api-rules").Violations)
}

// SPEC 4.3: recovery only of a workspace in ERROR ("409 if health is not
// ERROR", judged by error_info): the row at the write holds a terminal
// error_info. A recovery that checked a row read a moment earlier and
// wrote without that condition is a violation (issue 23): a second
// concurrent recovery, one landing after the HealthMonitor cleared the
// health, or one wiping a retryable error recorded since.
func TestAPIRulesRecoverOnlyInError(t *testing.T) {
	recovered := func(between func(tr *trace)) *trace {
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0}
		tr := newTrace().insert("w", contracts.DesiredRunning).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(info)}).
			write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
		between(tr)
		return tr.write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch())
	}
	require.Empty(t, run(t, recovered(func(*trace) {}), nil, "api-rules").Violations)
	cleared := func(d time.Duration) func(tr *trace) {
		return func(tr *trace) {
			tr.at(time.Minute).write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
				at(2*time.Minute).write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthOK)}).
				at(2*time.Minute + d)
		}
	}
	for _, d := range []time.Duration{time.Millisecond, 10 * time.Minute} {
		r := run(t, recovered(cleared(d)), nil, "api-rules")
		require.Len(t, r.Violations, 1, "a recovery %s after the HealthMonitor cleared the health", d)
		require.Contains(t, r.Violations[0].Message, "recovery applied to a workspace not in ERROR (health OK, error_info null; the write's condition: none)")
	}

	// Two recoveries at the same instant, before the HealthMonitor looks
	// again: health is still ERROR, but the second resets a row the first
	// already recovered.
	twice := recovered(func(tr *trace) {
		tr.write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch())
	})
	r := run(t, twice, nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "(health ERROR, error_info null; the write's condition: none)")

	// A late recovery wipes the retryable error the reconciler recorded
	// after the first one (health still ERROR).
	retry := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, ErrorCount: 1, OccurredAt: t0}
	late := recovered(func(tr *trace) {
		tr.write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch()).
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, contracts.Patch{ErrorInfo: contracts.Some(retry), ErrorCount: contracts.Some(1)})
	})
	r = run(t, late, nil, "api-rules")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "error_info ActionFailed")

	never := newTrace().insert("w", contracts.DesiredRunning).write(contracts.CompAdmin, "api", 0, "w", nil, contracts.RecoverPatch())
	require.Len(t, run(t, never, nil, "api-rules").Violations, 1)
}

// SPEC 4.2 step 2: a workspace whose health the HealthMonitor set to
// ERROR enters ERROR with its operation, after no failed call at all, or
// after a retryable one whose error_info kept the HealthMonitor from
// writing its Mismatch (seed 15000364, --faults all@2).
func TestErrorEntryOfAnUnhealthyWorkspace(t *testing.T) {
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).claim("w", contracts.OpStopping).
		at(31*time.Second).call("c1", MDelete, "w", "", "", "DOCKER_UNREACHABLE: down").
		write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}).
		enterError("w", contracts.ReasonMismatch)
	require.Empty(t, run(t, tr, nil, "error-entry").Violations)
}

// 4.2.5: the ERROR entry records previous_status = observed_status (any
// status observed since the claim: the reconciler may have read an older
// row than the one it writes), never, say, the desired state.
func TestErrorEntryRecordsTheObservedStatus(t *testing.T) {
	entry := func(prev contracts.ObservedStatus) contracts.Patch {
		info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true, OccurredAt: t0.Add(6 * time.Minute)}
		return contracts.Patch{Operation: contracts.Some(contracts.OpNone), OpStartedAt: contracts.Some(time.Time{}), ErrorInfo: contracts.Some(info), PreviousStatus: contracts.Some(prev)}
	}
	starting := func() *trace {
		return newTrace().leader("c1", 1).insert("w", contracts.DesiredRunning).observe("w", contracts.ObservedStandby).
			claim("w", contracts.OpStarting).at(6 * time.Minute)
	}
	r := run(t, starting().write(contracts.CompStateReconciler, "c1", 1, "w", nil, entry(contracts.ObservedStandby)), nil, "c11-error-skip")
	require.Empty(t, r.Violations)
	// Observed RUNNING a moment before the entry, read STANDBY: fine.
	r = run(t, starting().observe("w", contracts.ObservedRunning).write(contracts.CompStateReconciler, "c1", 1, "w", nil, entry(contracts.ObservedStandby)), nil, "c11-error-skip")
	require.Empty(t, r.Violations)
	// The desired state recorded instead.
	r = run(t, starting().write(contracts.CompStateReconciler, "c1", 1, "w", nil, entry(contracts.ObservedRunning)), nil, "c11-error-skip")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "recorded previous_status RUNNING")
}
