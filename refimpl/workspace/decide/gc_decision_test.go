package decide

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// TestGCObjectsPairsArchivesWithTheirMeta: the listing becomes one object
// per archive key, in key order, saying which of the archive and its .meta
// the bucket holds; a .meta alone is an object of its own.
func TestGCObjectsPairsArchivesWithTheirMeta(t *testing.T) {
	a, b, c := contracts.ArchiveKey("w2", "op1"), contracts.ArchiveKey("w1", "op1"), contracts.ArchiveKey("w3", "op1")
	objs := []ports.ObjectInfo{{Key: contracts.MetaKey(a)}, {Key: a}, {Key: contracts.MetaKey(c)}, {Key: b}}
	require.Equal(t, []GCObject{
		{Key: b, Archive: true},
		{Key: a, Archive: true, Meta: true},
		{Key: c, Meta: true},
	}, GCObjects(objs))
	require.Empty(t, GCObjects(nil))
}

func TestOrphanSince(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	first, ok := OrphanSince(strconv.FormatInt(at.Unix(), 10), true)
	require.True(t, ok)
	require.Equal(t, at, first)
	for _, tc := range []struct {
		value string
		set   bool
	}{{"", false}, {"123", false}, {"", true}, {"yesterday", true}} {
		first, ok := OrphanSince(tc.value, tc.set)
		require.False(t, ok, "%q set=%v", tc.value, tc.set)
		require.True(t, first.IsZero())
	}
}

// TestGCDecisions: an object, its workspace's row and its orphan timer
// give the GC's whole decision: what GCDecide chose and the steps, in
// order, with every object deletion after a lease re-check.
func TestGCDecisions(t *testing.T) {
	now := t0.Add(3 * time.Hour)
	key := contracts.ArchiveKey("w1", "op1")
	meta, timer := contracts.MetaKey(key), contracts.OrphanTimerKey(key)
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	both := GCObject{Key: key, Archive: true, Meta: true}
	lease := GCStep{Kind: GCDoCheckLease}
	del := func(k string) GCStep { return GCStep{Kind: GCDoDelete, Key: k} }
	clear := GCStep{Kind: GCDoClearTimer, Key: timer}
	cases := []struct {
		name     string
		obj      GCObject
		w        *contracts.Workspace
		timer    string
		timerSet bool
		want     GCDecision
	}{
		{"C9: protected by archive_key, no timer → nothing",
			both, row(withArchiveKey(key)), "", false,
			GCDecision{Action: GCClearTimer}},
		{"C9: protected with a timer left over → clear it",
			both, row(withArchiveKey(key)), unix(t0), true,
			GCDecision{Action: GCClearTimer, Steps: []GCStep{clear}}},
		{"C9: protected with an unreadable timer → it counts as unset: nothing",
			both, row(withArchiveKey(key)), "garbage", true,
			GCDecision{Action: GCClearTimer}},
		{"4.5: orphan (no row), first sighting → start the timer at now",
			both, nil, "", false,
			GCDecision{Action: GCStartTimer, Steps: []GCStep{{Kind: GCDoStartTimer, Key: timer, Value: unix(now)}}}},
		{"4.5: orphan with an unreadable timer → start again",
			both, nil, "garbage", true,
			GCDecision{Action: GCStartTimer, Steps: []GCStep{{Kind: GCDoStartTimer, Key: timer, Value: unix(now)}}}},
		{"4.5: orphan seen 1 h ago → wait",
			both, nil, unix(now.Add(-time.Hour)), true,
			GCDecision{Action: GCWait}},
		{"4.5: orphan seen 2 h ago → the archive, then its .meta, each after a lease re-check, then the timer",
			both, nil, unix(now.Add(-OrphanDelay)), true,
			GCDecision{Action: GCDelete, Steps: []GCStep{lease, del(key), lease, del(meta), clear}}},
		{"4.5: an archive without its .meta → only the archive",
			GCObject{Key: key, Archive: true}, row(withArchiveKey(contracts.ArchiveKey("w1", "op2"))), unix(t0), true,
			GCDecision{Action: GCDelete, Steps: []GCStep{lease, del(key), clear}}},
		{"4.5: a .meta alone → only the .meta",
			GCObject{Key: key, Meta: true}, row(withDeleted(), withArchiveKey(key)), unix(t0), true,
			GCDecision{Action: GCDelete, Steps: []GCStep{lease, del(meta), clear}}},
		{"C9: op_id protects the archive in progress, however old its timer",
			both, row(withOp(contracts.OpArchiving), withOpID("op1")), unix(t0), true,
			GCDecision{Action: GCClearTimer, Steps: []GCStep{clear}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := GC(GCInput{Object: tc.obj, Row: tc.w, Timer: tc.timer, TimerSet: tc.timerSet, Now: now})
			require.Equal(t, tc.want, got)
		})
	}
}

// TestGCDeletesOnlyAfterALeaseCheck: over every protection, timer and
// listing shape, each deletion directly follows a lease re-check, and a
// deletion is always of the object's archive or .meta and ends with its
// timer cleared.
func TestGCDeletesOnlyAfterALeaseCheck(t *testing.T) {
	now := t0.Add(3 * time.Hour)
	key := contracts.ArchiveKey("w1", "op1")
	rows := []*contracts.Workspace{nil, row(withArchiveKey(key)), row(withOpID("op1")), row(withHealth(contracts.HealthError)), row(withDeleted()), row()}
	timers := []struct {
		v   string
		set bool
	}{{"", false}, {"x", true}, {strconv.FormatInt(now.Unix(), 10), true}, {strconv.FormatInt(t0.Unix(), 10), true}}
	n := 0
	for _, w := range rows {
		for _, tm := range timers {
			for _, obj := range []GCObject{{Key: key, Archive: true}, {Key: key, Meta: true}, {Key: key, Archive: true, Meta: true}} {
				d := GC(GCInput{Object: obj, Row: w, Timer: tm.v, TimerSet: tm.set, Now: now})
				deletes := 0
				for i, s := range d.Steps {
					if s.Kind != GCDoDelete {
						continue
					}
					deletes++
					require.Positive(t, i)
					require.Equal(t, GCDoCheckLease, d.Steps[i-1].Kind)
					require.Contains(t, []string{key, contracts.MetaKey(key)}, s.Key)
				}
				if d.Action == GCDelete {
					require.Equal(t, btoi(obj.Archive)+btoi(obj.Meta), deletes)
					require.Equal(t, GCStep{Kind: GCDoClearTimer, Key: contracts.OrphanTimerKey(key)}, d.Steps[len(d.Steps)-1])
					require.False(t, Protected(w, key))
				} else {
					require.Zero(t, deletes)
				}
				n++
			}
		}
	}
	require.Equal(t, 72, n)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestGCStepKindNames(t *testing.T) {
	for k, n := range map[GCStepKind]string{GCDoClearTimer: "clear-timer", GCDoStartTimer: "start-timer", GCDoCheckLease: "check-lease", GCDoDelete: "delete", 9: "gc-step(9)"} {
		require.Equal(t, n, k.String())
	}
}
