package workspace

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

func TestStoreInsertGetListOrderedByID(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "c", "a", "d", "b")
	ctx := t.Context()

	got, err := w.Store.Get(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, "b", got.ID)
	require.Equal(t, t0, got.CreatedAt)

	_, err = w.Store.Get(ctx, "zz")
	require.ErrorIs(t, err, contracts.ErrNotFound)

	rows, err := w.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "d"}, idsOf(rows))

	err = w.Store.Insert(ctx, apiWriter, contracts.NewWorkspace("a", "u", "dup", "img", t0))
	require.ErrorIs(t, err, ErrDuplicateID)
	ins := eventsOf(w, history.KindInsert)
	require.Len(t, ins, 5, "the refused insert is recorded too")
	require.False(t, ins[4].Applied)
	require.NotEmpty(t, ins[4].Err)
	require.Equal(t, "c", ins[0].Row.ID)
	require.True(t, ins[0].Applied)
}

func TestStoreListAppliesFilter(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b", "c")
	ctx := t.Context()
	// b becomes RUNNING = desired: no longer a reconcile target.
	_, err := w.Store.Update(ctx, contracts.Writer{Component: contracts.CompHealthMonitor}, "b", contracts.Cond{},
		contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	require.NoError(t, err)
	rows, err := w.Store.List(ctx, contracts.FilterReconcile)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c"}, idsOf(rows))
	rows, err = w.Store.List(ctx, contracts.FilterTTL)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, idsOf(rows))
}

func TestStoreReturnsCopies(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	ctx := t.Context()
	_, err := w.Store.Update(ctx, reconciler("", 0), "a", contracts.Cond{}, contracts.Patch{
		HomeCtx:   contracts.Some(&contracts.HomeCtx{RestoreMarker: "m1"}),
		ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Context: map[string]any{"k": "v"}}),
	})
	require.NoError(t, err)
	got, err := w.Store.Get(ctx, "a")
	require.NoError(t, err)
	got.HomeCtx.RestoreMarker = "mutated"
	got.ErrorInfo.Context["k"] = "mutated"
	rows, err := w.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	rows[0].Name = "mutated"
	again := w.Store.Snapshot()[0]
	require.Equal(t, "m1", again.RestoreMarker())
	require.Equal(t, "v", again.ErrorInfo.Context["k"])
	require.Equal(t, "ws a", again.Name)
}

func TestStoreUpdateIsCompareAndSetAndRecorded(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	ctx := t.Context()
	w.Clock.Advance(time.Minute)
	wr := reconciler("coord-1", 0)
	claim := contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotDeleted: true}
	p := contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpID: contracts.Some("op-1")}

	ok, err := w.Store.Update(ctx, wr, "a", claim, p)
	require.NoError(t, err)
	require.True(t, ok)
	e := lastEvent(t, w)
	require.Equal(t, history.KindWrite, e.Kind)
	require.Equal(t, "a", e.Workspace)
	require.Equal(t, "coord-1", e.Instance)
	require.Equal(t, contracts.CompStateReconciler, e.Component)
	require.True(t, e.Applied)
	require.Equal(t, claim, *e.Cond)
	require.Equal(t, p, *e.Patch)
	require.Equal(t, t0.Add(time.Minute), e.At)

	// The same claim again fails: the row is no longer NONE.
	ok, err = w.Store.Update(ctx, wr, "a", claim, contracts.Patch{OpID: contracts.Some("op-2")})
	require.NoError(t, err)
	require.False(t, ok)
	e = lastEvent(t, w)
	require.False(t, e.Applied)
	require.Empty(t, e.Err)

	row := w.Store.Snapshot()[0]
	require.Equal(t, contracts.OpProvisioning, row.Operation)
	require.Equal(t, "op-1", row.OpID)
	require.Equal(t, t0.Add(time.Minute), row.UpdatedAt, "updated_at stamped by the store")

	_, err = w.Store.Update(ctx, wr, "missing", contracts.Cond{}, p)
	require.ErrorIs(t, err, contracts.ErrNotFound)
}

func TestStoreRecordsACopyOfThePatch(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	info := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Message: "boom"}
	p := contracts.Patch{ErrorInfo: contracts.Some(info)}
	_, err := w.Store.Update(t.Context(), reconciler("", 0), "a", contracts.Cond{}, p)
	require.NoError(t, err)
	info.Message = "changed afterwards"
	require.Equal(t, "boom", lastEvent(t, w).Patch.ErrorInfo.V.Message)
	require.Equal(t, "boom", w.Store.Snapshot()[0].ErrorInfo.Message)
}

func TestStoreFencing(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b")
	ctx := t.Context()
	lease1, ok, err := w.Store.Session("coord-1").TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(1), lease1.Epoch())
	p := contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)}

	// The leader's epoch writes.
	ok, err = w.Store.Update(ctx, reconciler("coord-1", 1), "a", contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, ok)

	// Leadership moves: epoch 2. The old leader is fenced.
	w.Store.KillSession("coord-1")
	_, ok, err = w.Store.Session("coord-2").TryAcquire(ctx, "coord-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(2), w.Store.Epoch())

	ok, err = w.Store.Update(ctx, reconciler("coord-1", 1), "b", contracts.Cond{}, p)
	require.ErrorIs(t, err, contracts.ErrFenced)
	require.False(t, ok)
	e := lastEvent(t, w)
	require.Equal(t, history.KindWrite, e.Kind)
	require.False(t, e.Applied)
	require.Equal(t, int64(1), e.Epoch)
	require.Contains(t, e.Err, "fenced")
	require.Equal(t, contracts.OpNone, w.Store.Snapshot()[1].Operation, "not applied")

	err = w.Store.UpdateMany(ctx, reconciler("coord-1", 1), []ports.RowUpdate{{ID: "a", Patch: p}, {ID: "b", Patch: p}})
	require.ErrorIs(t, err, contracts.ErrFenced)
	require.Equal(t, contracts.OpNone, w.Store.Snapshot()[1].Operation)

	// Epoch 0 (API) is never fenced; the current epoch writes.
	ok, err = w.Store.Update(ctx, apiWriter, "b", contracts.Cond{}, contracts.Patch{Name: contracts.Some("renamed")})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = w.Store.Update(ctx, reconciler("coord-2", 2), "b", contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, ok)
	require.ErrorIs(t, w.Store.Insert(ctx, reconciler("coord-1", 1), contracts.NewWorkspace("c", "u", "n", "i", t0)), contracts.ErrFenced)
}

func TestStoreUpdateManyAppliesEachCondition(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b", "c")
	ctx := t.Context()
	w.Clock.Advance(time.Second)
	hm := contracts.Writer{Component: contracts.CompHealthMonitor, Instance: "coord-1"}
	_, err := w.Store.Update(ctx, reconciler("", 0), "b", contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	require.NoError(t, err)
	before := w.Rec.Len() + int(w.Rec.ObservedAtWrites())

	now := w.Clock.Now()
	err = w.Store.UpdateMany(ctx, hm, []ports.RowUpdate{
		{ID: "a", Cond: contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, Patch: contracts.Patch{ObservedAt: contracts.Some(now)}},
		{ID: "b", Cond: contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, Patch: contracts.Patch{ObservedAt: contracts.Some(now)}},
		{ID: "gone", Patch: contracts.Patch{ObservedAt: contracts.Some(now)}},
		{ID: "c", Patch: contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}},
	})
	require.NoError(t, err)
	rows := w.Store.Snapshot()
	require.Equal(t, now, rows[0].ObservedAt)
	require.True(t, rows[1].ObservedAt.IsZero(), "b's condition failed")
	require.Equal(t, contracts.HealthError, rows[2].HealthStatus)
	require.Equal(t, before+4, w.Rec.Len()+int(w.Rec.ObservedAtWrites()), "every row's attempt is recorded")
	e := lastEvent(t, w)
	require.Equal(t, "store.UpdateMany", e.Method)
	require.Equal(t, "coord-1", e.Instance)
	require.Equal(t, contracts.CompHealthMonitor, e.Component)
}

func TestChangeFeed(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	insertRows(t, w, "early") // before Listen: not seen
	l, err := w.Store.Listen(ctx)
	require.NoError(t, err)
	changes, err := l.Poll(ctx)
	require.NoError(t, err)
	require.Empty(t, changes)

	insertRows(t, w, "a")
	select {
	case <-l.Ready():
	default:
		t.Fatal("Ready not signalled")
	}
	rec := reconciler("", 0)
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)})
	mustUpdate(t, w, rec, "a", contracts.Patch{OpID: contracts.Some("x")})                           // not a notify column
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)}) // same value: no change
	mustUpdate(t, w, contracts.Writer{Component: contracts.CompHealthMonitor}, "a", contracts.Patch{ObservedAt: contracts.Some(t0)})
	w.Clock.Advance(time.Second)
	mustUpdate(t, w, apiWriter, "a", contracts.Patch{DeletedAt: contracts.Some(w.Clock.Now())})
	_, err = w.Store.Update(ctx, rec, "a", contracts.Cond{Operation: contracts.Some(contracts.OpNone)},
		contracts.Patch{Operation: contracts.Some(contracts.OpDeleting)}) // condition fails: nothing applied
	require.NoError(t, err)

	changes, err = l.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, changes, 3)
	require.Equal(t, "a", changes[0].WorkspaceID)
	require.Equal(t, contracts.OpNone, changes[0].Operation, "the insert")
	require.Equal(t, contracts.OpProvisioning, changes[1].Operation)
	require.True(t, changes[2].Deleted)
	require.Equal(t, t0.Add(time.Second), changes[2].At)
	again, err := l.Poll(ctx)
	require.NoError(t, err)
	require.Empty(t, again, "Poll drains")

	w.Store.DropFeed(1)
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpDeleting)})
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpNone)})
	changes, err = l.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, changes, 1, "the first was dropped")
	require.Equal(t, contracts.OpNone, changes[0].Operation)
	require.Equal(t, int64(1), w.Stats().DroppedChanges)

	w.Store.BreakFeed()
	_, err = l.Poll(ctx)
	require.ErrorIs(t, err, contracts.ErrUnavailable)
	l2, err := w.Store.Listen(ctx)
	require.NoError(t, err)
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	changes, err = l2.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	require.NoError(t, l2.Close())
	mustUpdate(t, w, rec, "a", contracts.Patch{Operation: contracts.Some(contracts.OpNone)})
	_, err = l2.Poll(ctx)
	require.Error(t, err, "closed")
}

func mustUpdate(t *testing.T, w *World, wr contracts.Writer, id string, p contracts.Patch) {
	t.Helper()
	ok, err := w.Store.Update(t.Context(), wr, id, contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, ok)
}

func idsOf(rows []contracts.Workspace) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// MarkObserved stamps observed_at without recording rows one by one; the
// pass is recorded as one note, and a stale epoch is fenced.
func TestMarkObservedRecordsOnePassNote(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b")
	kept := w.Rec.Len()
	hm := contracts.Writer{Component: contracts.CompHealthMonitor, Instance: "coord-1"}
	at := w.Clock.Now().Add(time.Second)
	require.NoError(t, w.Store.MarkObserved(t.Context(), hm, []string{"a", "b", "gone"}, at))
	require.Equal(t, kept+1, w.Rec.Len())
	require.Equal(t, int64(2), w.Rec.ObservedAtWrites())
	note := lastEvent(t, w)
	require.Equal(t, history.KindNote, note.Kind)
	require.Equal(t, "health.pass", note.Method)
	require.Equal(t, "2 rows observed", note.Result)
	for _, r := range w.Store.Snapshot() {
		require.Equal(t, at, r.ObservedAt)
	}
	stale := hm
	stale.Epoch = 99
	require.ErrorIs(t, w.Store.MarkObserved(t.Context(), stale, []string{"a"}, at), contracts.ErrFenced)
	require.True(t, onlyObservedAt(&contracts.Patch{ObservedAt: contracts.Some(t0)}))
	require.False(t, onlyObservedAt(&contracts.Patch{ObservedAt: contracts.Some(t0), HealthStatus: contracts.Some(contracts.HealthOK)}))
}

func TestErrorInfoNotifiesOnlyOnChange(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	l, err := w.Store.Listen(t.Context())
	require.NoError(t, err)
	info := func(msg string) *contracts.ErrorInfo {
		return &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Message: msg, Context: map[string]any{"code": "DISK_FULL"}}
	}
	rec := reconciler("", 0)
	mustUpdate(t, w, rec, "a", contracts.Patch{ErrorInfo: contracts.Some(info("one"))})
	mustUpdate(t, w, rec, "a", contracts.Patch{ErrorInfo: contracts.Some(info("one"))}) // same content
	mustUpdate(t, w, rec, "a", contracts.Patch{ErrorInfo: contracts.Some(info("two"))})
	mustUpdate(t, w, rec, "a", contracts.Patch{ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil)})
	changes, err := l.Poll(t.Context())
	require.NoError(t, err)
	require.Len(t, changes, 3)
	require.Zero(t, changes[2].ErrorCount)
}

// Scan reads what List reads, row by row, from copies: a reader changing
// the row it was passed changes nothing stored.
func TestStoreScanMatchesListAndLendsCopies(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "c", "a", "d", "b")
	ctx := t.Context()
	_, err := w.Store.Update(ctx, contracts.Writer{Component: contracts.CompHealthMonitor}, "b", contracts.Cond{},
		contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning),
			ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: "Mismatch", Context: map[string]any{"k": "v"}})})
	require.NoError(t, err)
	for _, f := range []contracts.Filter{contracts.FilterAll, contracts.FilterActive, contracts.FilterReconcile, contracts.FilterTTL} {
		listed, err := w.Store.List(ctx, f)
		require.NoError(t, err)
		var scanned []contracts.Workspace
		require.NoError(t, w.Store.Scan(ctx, f, func(row *contracts.Workspace) {
			scanned = append(scanned, row.Clone())
			row.Name = "changed"
			if row.ErrorInfo != nil {
				row.ErrorInfo.Context["k"] = "changed"
			}
		}))
		require.Equal(t, listed, scanned, "filter %d", f)
	}
	b, err := w.Store.Get(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, "ws b", b.Name)
	require.Equal(t, "v", b.ErrorInfo.Context["k"])
}

// A reader that writes to the store while it scans neither deadlocks nor
// loses its place (pages of rows are copied at a time, so the table can
// change between two): it sees every row that was there throughout, once,
// in id order.
func TestStoreScanSurvivesWritesDuringTheScan(t *testing.T) {
	w := newWorld(t)
	var ids []string
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("r%03d", 2*i))
	}
	insertRows(t, w, ids...)
	var seen []string
	require.NoError(t, w.Store.Scan(t.Context(), contracts.FilterAll, func(row *contracts.Workspace) {
		seen = append(seen, row.ID)
		if len(seen)%50 == 0 {
			// Behind the cursor and ahead of it.
			insertRows(t, w, row.ID+"-a", fmt.Sprintf("r%03d", 2*len(seen)+101))
		}
	}))
	require.True(t, slices.IsSorted(seen), "in id order, once each")
	require.Len(t, slices.Compact(slices.Clone(seen)), len(seen))
	for _, id := range ids {
		require.Contains(t, seen, id)
	}
}

// A scan is a listing: an outage of store.List fails it before any row.
func TestStoreScanFailsLikeList(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	boom := contracts.ErrUnavailable
	w.SetHook(func(c Call) error {
		if c.Port == "store" && c.Method == "List" {
			return boom
		}
		return nil
	})
	called := false
	err := w.Store.Scan(t.Context(), contracts.FilterAll, func(*contracts.Workspace) { called = true })
	require.ErrorIs(t, err, boom)
	require.False(t, called)
}

// MarkObserved stamps exactly the rows named, whatever their order.
func TestStoreMarkObservedAnyOrder(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b", "c", "d", "e")
	at := t0.Add(time.Minute)
	hm := contracts.Writer{Component: contracts.CompHealthMonitor}
	require.NoError(t, w.Store.MarkObserved(t.Context(), hm, []string{"b", "e", "a", "zz", "d"}, at))
	for _, row := range w.Store.Snapshot() {
		require.Equal(t, row.ID != "c", row.ObservedAt.Equal(at), row.ID)
	}
}

// The guard reads an index of the rows that count toward the limits; every
// write keeps it, so it agrees with the rows after any mix of writes, and
// a guarded write sees what a count over the whole table would.
func TestStoreLimitIndexFollowsEveryWrite(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	insertRows(t, w, "a", "b", "c", "d")
	hm := contracts.Writer{Component: contracts.CompHealthMonitor}
	write := func(id string, p contracts.Patch) {
		t.Helper()
		_, err := w.Store.Update(ctx, hm, id, contracts.Cond{}, p)
		require.NoError(t, err)
		require.NoError(t, w.Store.CheckIndex())
	}
	require.NoError(t, w.Store.CheckIndex())
	write("a", contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)})
	write("b", contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	write("c", contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)})
	write("c", contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	write("b", contracts.Patch{DeletedAt: contracts.Some(t0)})
	require.NoError(t, w.Store.UpdateMany(ctx, hm, []ports.RowUpdate{
		{ID: "d", Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}},
		{ID: "a", Patch: contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}},
	}))
	require.NoError(t, w.Store.CheckIndex())
	// d alone counts: a user limit of one refuses a second of user-1's.
	_, err := w.Store.UpdateWithinLimits(ctx, apiWriter, "a", contracts.Cond{},
		contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}, contracts.Limits{MaxRunningPerUser: 1, MaxRunningGlobal: 10})
	var le *contracts.LimitExceeded
	require.ErrorAs(t, err, &le)
	require.Equal(t, []string{"d"}, le.RunningWorkspaces)
	require.NoError(t, w.Store.CheckIndex())
}

// Laying the rows out again as the table grows loses nothing: every row,
// every write and both indexes survive it.
func TestStoreCompactionKeepsRowsAndIndexes(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	hm := contracts.Writer{Component: contracts.CompHealthMonitor}
	var ids []string
	for i := range 400 {
		id := fmt.Sprintf("w%03d", (i*7919)%400) // not in id order
		ids = append(ids, id)
		insertRows(t, w, id)
		if i%3 == 0 {
			_, err := w.Store.Update(ctx, hm, id, contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
			require.NoError(t, err)
		}
	}
	require.NoError(t, w.Store.CheckIndex())
	rows, err := w.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	require.Len(t, rows, 400)
	observedRunning := 0
	for _, r := range rows {
		if r.ObservedStatus == contracts.ObservedRunning {
			observedRunning++
		}
	}
	require.Equal(t, (400+2)/3, observedRunning)
	// A write after a compaction lands on the row every reader sees.
	_, err = w.Store.Update(ctx, hm, ids[1], contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	require.NoError(t, err)
	got, err := w.Store.Get(ctx, ids[1])
	require.NoError(t, err)
	require.Equal(t, contracts.ObservedRunning, got.ObservedStatus)
	require.NoError(t, w.Store.CheckIndex())
}
