package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/judge"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

const gcDueName = "gc-deletes-when-due"

// dueTrace: the archive of a soft-deleted workspace, with its .meta, and
// GC passes of c1 (the lock holder) at each offset given; the pass at
// deleteAt deletes both (zero: none does). between runs after each pass's
// listing (and its deletions).
func dueTrace(t *testing.T, passes []time.Duration, deleteAt time.Duration, between func(tr *trace, at time.Duration)) *trace {
	t.Helper()
	key := contracts.ArchiveKey("w", "op0")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
		call("c1", MObjPut, "w", key, "", "").call("c1", MObjPut, "w", contracts.MetaKey(key), "", "").
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0))
	for _, at := range passes {
		tr.at(at).call("c1", MObjList, "", contracts.ArchivePrefix, "2", "")
		if at == deleteAt {
			tr.call("c1", MObjDelete, "w", key, "", "").call("c1", MObjDelete, "w", contracts.MetaKey(key), "", "")
		}
		if between != nil {
			between(tr, at)
		}
	}
	return tr
}

func hours(hs ...float64) []time.Duration {
	out := make([]time.Duration, len(hs))
	for i, h := range hs {
		out[i] = time.Duration(h * float64(time.Hour))
	}
	return out
}

// SPEC 4.5: the timer records the first pass that saw the object
// orphaned; the first pass at which it is 2 h old deletes the archive and
// its .meta, and no pass before.
func TestGCDeletesWhenDue(t *testing.T) {
	passes := hours(1, 2, 3, 4, 5)
	r := run(t, dueTrace(t, passes, 3*time.Hour, nil), nil, gcDueName)
	require.Empty(t, r.Violations, "the timer started at +1 h is 2 h old at +3 h")
	require.Equal(t, Pass, r.Verdict(gcDueName))

	// One pass late: the pass at +3 h left both.
	r = run(t, dueTrace(t, passes, 4*time.Hour, nil), nil, gcDueName)
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "2h0m0s old")
	require.Contains(t, r.Violations[0].Message, "the pass at "+stamp(t0.Add(time.Hour)))

	// One pass early: the timer is 1 h old at +2 h.
	r = run(t, dueTrace(t, passes, 2*time.Hour, nil), nil, gcDueName)
	require.Len(t, r.Violations, 2, "the archive and its .meta")
	require.Contains(t, r.Violations[0].Message, "only 1h0m0s old")

	// A timer kept in whole seconds may reach 2 h up to 1 s sooner: a
	// deletion 0.5 s early is not judged, one 2 s early is.
	early := func(d time.Duration) *trace {
		return dueTrace(t, []time.Duration{time.Hour, 2 * time.Hour, 3*time.Hour - d}, 3*time.Hour-d, nil)
	}
	require.Empty(t, run(t, early(time.Second/2), nil, gcDueName).Violations)
	require.Len(t, run(t, early(2*time.Second), nil, gcDueName).Violations, 2)

	// At the first pass that saw it orphaned: that pass starts its timer.
	r = run(t, dueTrace(t, passes, time.Hour, nil), nil, gcDueName)
	require.Len(t, r.Violations, 2)
	require.Contains(t, r.Violations[0].Message, "no timer")

	// The due pass is the first at or past 2 h, whatever the spacing:
	// passes at +1 h, +2.5 h, +3.2 h owe the deletion at +3.2 h.
	require.Empty(t, run(t, dueTrace(t, hours(1, 2.5, 3.2, 4), hours(3.2)[0], nil), nil, gcDueName).Violations)
	r = run(t, dueTrace(t, hours(1, 2.5, 3.2, 4), 4*time.Hour, nil), nil, gcDueName)
	require.Len(t, r.Violations, 1, "deleted at +4 h, the pass at +3.2 h was due")

	// A half deletion at the due pass: the .meta stays.
	tr := dueTrace(t, hours(1, 2, 3), 0, func(tr *trace, at time.Duration) {
		if at == 3*time.Hour {
			tr.call("c1", MObjDelete, "w", contracts.ArchiveKey("w", "op0"), "", "")
		}
	})
	r = run(t, tr, &Final{End: t0.Add(4 * time.Hour)}, gcDueName)
	require.Len(t, r.Violations, 1, "the last pass is judged at the end")
	require.Contains(t, r.Violations[0].Message, ".meta in the bucket")

	// No due pass in the run: nothing judged, and not a pass.
	r = run(t, dueTrace(t, hours(1, 2), 0, nil), nil, gcDueName)
	require.Empty(t, r.Violations)
	require.Equal(t, judge.NotExercised, r.Verdict(gcDueName))
}

// A protected object has no timer: the 2 h count from the first pass that
// sees it unprotected.
func TestGCDueCountsFromFirstOrphanedPass(t *testing.T) {
	key := contracts.ArchiveKey("w", "op0")
	build := func(deleteAt time.Duration) *trace {
		tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
			call("c1", MObjPut, "w", key, "", "").
			write(contracts.CompStateReconciler, "c1", 1, "w", nil, decide.ArchiveCommitPatch(key))
		for _, at := range hours(0, 1, 2, 3, 4, 5) {
			tr.at(at).call("c1", MObjList, "", contracts.ArchivePrefix, "1", "")
			if at == deleteAt {
				tr.call("c1", MObjDelete, "w", key, "", "")
			}
			if at == time.Hour {
				tr.at(at+time.Minute).write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(tr.now))
			}
		}
		return tr
	}
	// Protected at 0 and +1 h, soft-deleted at +1 h 1 min: first seen
	// orphaned at +2 h, due at +4 h.
	require.Empty(t, run(t, build(4*time.Hour), nil, gcDueName).Violations)
	require.Len(t, run(t, build(3*time.Hour), nil, gcDueName).Violations, 1, "+3 h is 1 h after the timer started")
	require.Len(t, run(t, build(5*time.Hour), nil, gcDueName).Violations, 1, "+4 h was due")
}

// What the history cannot vouch for excuses the object: it only delays
// deletion. A timer a clean pass started is known across leaderships.
func TestGCDueExcuses(t *testing.T) {
	key := contracts.ArchiveKey("w", "op0")
	passes := hours(1, 2, 3, 4, 5)
	for name, disturb := range map[string]func(tr *trace){
		"bus flushed":           func(tr *trace) { tr.fault(FFlushBus, "", "") },
		"bus call failed":       func(tr *trace) { tr.call("c1", "bus.Del", "", "t", "", "unavailable") },
		"row query failed":      func(tr *trace) { tr.call("c1", "store.List", "", "", "", "unavailable") },
		"lost answer":           func(tr *trace) { tr.fault(FLostResp, "", "store.List") },
		"leader crashed":        func(tr *trace) { tr.add(crashEvent("c1")) },
		"lock check failed":     func(tr *trace) { tr.call("c1", MLockCheck, "", "", "", "lost") },
		"bus outage window":     func(tr *trace) { tr.fault(FOutage, "", "outage bus 100% for 1m0s") },
		"object deleted by far": func(tr *trace) { tr.call("c2", MObjDelete, "w", contracts.MetaKey(key), "", "") },
	} {
		// Disturbed at the pass that first saw it orphaned: its timer
		// may not have started; a deletion at +4 h (2 h after the next
		// pass) is not judged late.
		tr := dueTrace(t, passes, 4*time.Hour, func(tr *trace, at time.Duration) {
			if at == time.Hour {
				disturb(tr)
			}
		})
		r := run(t, tr, nil, gcDueName)
		require.Empty(t, r.Violations, name)
	}

	// A timer started at +1 h is still known after a disturbed pass at
	// +2 h that found it unprotected and not due: +3 h owes the deletion.
	tr := dueTrace(t, passes, 0, func(tr *trace, at time.Duration) {
		if at == 2*time.Hour {
			tr.call("c1", "store.List", "", "", "", "unavailable")
		}
	})
	require.Len(t, run(t, tr, nil, gcDueName).Violations, 1)

	// A failed delete at the due pass skips the object; the next pass,
	// the timer still 2 h old, owes it.
	failAt3 := func(tr *trace, at time.Duration) {
		if at == 3*time.Hour {
			tr.call("c1", MObjDelete, "w", key, "", "S3_ACCESS_ERROR: down")
		}
	}
	require.Empty(t, run(t, dueTrace(t, passes, 4*time.Hour, failAt3), nil, gcDueName).Violations)
	r := run(t, dueTrace(t, passes, 5*time.Hour, failAt3), nil, gcDueName)
	require.Len(t, r.Violations, 1, "the pass at +4 h owed it")

	// A new leader reads the timer its predecessor started: its first
	// pass, 2 h after, deletes.
	tr = dueTrace(t, hours(1), 0, nil)
	tr.at(90*time.Minute).add(crashEvent("c1")).leader("c2", 2)
	for _, at := range hours(2, 3) {
		tr.at(at).call("c2", MObjList, "", contracts.ArchivePrefix, "2", "")
	}
	r = run(t, tr, &Final{End: t0.Add(4 * time.Hour)}, gcDueName)
	require.Len(t, r.Violations, 1, "c2's pass at +3 h was due")
	require.Contains(t, r.Violations[0].Message, "the pass at "+stamp(t0.Add(time.Hour)))

	// A listing by an instance that does not hold the lock is no clean
	// pass: its keeping the object at +3 h is not judged late.
	tr = dueTrace(t, hours(1, 2), 0, nil)
	tr.at(150*time.Minute).leader("c2", 2).at(3*time.Hour).call("c1", MObjList, "", contracts.ArchivePrefix, "2", "")
	require.Empty(t, run(t, tr, nil, gcDueName).Violations)
}
