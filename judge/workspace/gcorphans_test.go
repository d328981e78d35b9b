package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/judge"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// An orphan (the archive of a soft-deleted workspace) listed by hourly GC
// passes: gcPasses lists at each of hours, then deletes at the hour given
// (-1: never).
func gcOrphanTrace(hours []int, deleteAt int, between func(tr *trace, hour int)) *trace {
	key := contracts.ArchiveKey("w", "op0")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompAPI, "api", 0, "w", nil, decide.DeletePatch(t0))
	for _, h := range hours {
		tr.at(time.Duration(h)*time.Hour+time.Minute).call("c1", MObjList, "", contracts.ArchivePrefix, "1", "")
		if h == deleteAt {
			tr.call("c1", MObjDelete, "w", key, "", "")
		}
		if between != nil {
			between(tr, h)
		}
	}
	return tr
}

func TestGCDeletesOrphans(t *testing.T) {
	// Deleted at the pass whose timer is 2 h old, or the one after (a GC
	// that waits for a timer strictly older than 2 h): both pass.
	for _, at := range []int{2, 3} {
		r := run(t, gcOrphanTrace([]int{0, 1, 2, 3, 4, 5}, at, nil), nil, "gc-deletes-orphans")
		require.Empty(t, r.Violations, "deleted at +%d h", at)
	}
	r := run(t, gcOrphanTrace([]int{0, 1, 2, 3, 4, 5}, 3, nil), nil, "gc-deletes-orphans")
	require.Equal(t, Pass, r.Verdict("gc-deletes-orphans"), "the pass at +3 h owed the deletion")

	// Never deleted: the pass at +3 h owed it, the pass at +4 h shows it.
	r = run(t, gcOrphanTrace([]int{0, 1, 2, 3, 4, 5}, -1, nil), nil, "gc-deletes-orphans")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "should have deleted it")

	// Nothing to judge without passes far enough apart.
	r = run(t, gcOrphanTrace([]int{0, 1, 2}, -1, nil), nil, "gc-deletes-orphans")
	require.Empty(t, r.Violations)
	require.Equal(t, judge.NotExercised, r.Verdict("gc-deletes-orphans"))
}

// What may make a correct GC lose or misread its timers starts the
// orphan's time again.
func TestGCOrphanTimeRestarts(t *testing.T) {
	key := contracts.ArchiveKey("w", "op0")
	for name, disturb := range map[string]func(tr *trace){
		"bus flushed":       func(tr *trace) { tr.fault(FFlushBus, "", "") },
		"timer not written": func(tr *trace) { tr.call("c1", "bus.SetNX", "", "gc:"+key, "", "unavailable") },
		"lost answer":       func(tr *trace) { tr.fault(FLostResp, "", "bus.Get") },
		"leader crashed":    func(tr *trace) { tr.add(crashEvent("c1")) },
		"lock check failed": func(tr *trace) { tr.call("c1", MLockCheck, "", "", "", "lost") },
	} {
		tr := gcOrphanTrace([]int{0, 1, 2, 3, 4, 5}, -1, func(tr *trace, hour int) {
			if hour == 2 {
				disturb(tr)
			}
		})
		r := run(t, tr, nil, "gc-deletes-orphans")
		require.Empty(t, r.Violations, name)
	}
	// A pass whose protection query failed skipped its cycle: it owes
	// nothing.
	failedQuery := func(tr *trace, hour int) {
		if hour == 3 {
			tr.call("c1", "store.List", "", "", "", "unavailable")
		}
	}
	end := &Final{End: t0.Add(5 * time.Hour)}
	require.Empty(t, run(t, gcOrphanTrace([]int{0, 3, 4}, -1, failedQuery), end, "gc-deletes-orphans").Violations)
	require.Len(t, run(t, gcOrphanTrace([]int{0, 3, 4}, -1, nil), end, "gc-deletes-orphans").Violations, 1, "the last pass is judged at the end")

	// A failed delete skips the object: the pass that tried owes it no
	// longer, the next pass owes it again. Here the pass at +3 h is the
	// first to owe it and its delete fails: the pass at +4 h deletes it,
	// or, if it does not, the pass at +5 h shows that.
	failAt3 := func(tr *trace, hour int) {
		if hour == 3 {
			tr.call("c1", MObjDelete, "w", key, "", "S3_ACCESS_ERROR: down")
		}
	}
	r := run(t, gcOrphanTrace([]int{0, 1, 2, 3, 4, 5, 6}, 4, failAt3), nil, "gc-deletes-orphans")
	require.Empty(t, r.Violations, "the pass after the failed delete deleted it")
	r = run(t, gcOrphanTrace([]int{0, 1, 2, 3, 4, 5, 6}, -1, failAt3), nil, "gc-deletes-orphans")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, "still there at the pass at "+stamp(t0.Add(5*time.Hour+time.Minute))+
		": the pass at "+stamp(t0.Add(4*time.Hour+time.Minute)))

	// An archive and its .meta go together: a GC whose archive delete
	// failed may skip the .meta too, and the next pass owes both.
	meta := contracts.MetaKey(key)
	pair := func(tr *trace, deleteAt int) *trace {
		tr = tr.call("c1", MObjPut, "w", meta, "", "")
		for h := 1; h <= 6; h++ {
			tr.at(time.Duration(h)*time.Hour+time.Minute).call("c1", MObjList, "", contracts.ArchivePrefix, "1", "")
			switch h {
			case 3:
				tr.call("c1", MObjDelete, "w", key, "", "S3_ACCESS_ERROR: down")
			case deleteAt:
				tr.call("c1", MObjDelete, "w", key, "", "").call("c1", MObjDelete, "w", meta, "", "")
			}
		}
		return tr
	}
	r = run(t, pair(gcOrphanTrace([]int{0}, -1, nil), 4), nil, "gc-deletes-orphans")
	require.Empty(t, r.Violations, "archive and .meta deleted by the pass after the failed delete")
	r = run(t, pair(gcOrphanTrace([]int{0}, -1, nil), -1), nil, "gc-deletes-orphans")
	require.Len(t, r.Violations, 2, "never deleted: the pass at +5 h still lists both")

	// A row written between a pass's listing and its protection query
	// may have protected the archive for that pass.
	tr := gcOrphanTrace([]int{0, 1, 2, 3, 4}, -1, func(tr *trace, hour int) {
		if hour == 1 {
			tr.write(contracts.CompHealthMonitor, "c1", 1, "w", nil, contracts.Patch{ObservedAt: contracts.Some(tr.now)})
		}
	})
	require.Empty(t, run(t, tr, nil, "gc-deletes-orphans").Violations)
}

// A protected archive has no orphan time; a .meta left without its
// archive is an orphan of its own.
func TestGCOrphansProtectionAndLoneMeta(t *testing.T) {
	key := contracts.ArchiveKey("w", "op0")
	tr := newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).
		call("c1", MObjPut, "w", key, "", "").
		write(contracts.CompStateReconciler, "c1", 1, "w", nil, decide.ArchiveCommitPatch(key))
	for h := 0; h < 6; h++ {
		tr.at(time.Duration(h)*time.Hour+time.Minute).call("c1", MObjList, "", contracts.ArchivePrefix, "1", "")
	}
	r := run(t, tr, nil, "gc-deletes-orphans")
	require.Empty(t, r.Violations)

	meta := contracts.MetaKey(contracts.ArchiveKey("w", "op1"))
	tr = newTrace().leader("c1", 1).insert("w", contracts.DesiredStandby).call("c1", MObjPut, "w", meta, "", "")
	for h := 0; h < 6; h++ {
		tr.at(time.Duration(h)*time.Hour+time.Minute).call("c1", MObjList, "", contracts.ArchivePrefix, "1", "")
	}
	r = run(t, tr, nil, "gc-deletes-orphans")
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0].Message, meta)
}
