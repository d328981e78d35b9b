package workspace

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

func TestHookFailsCallsWithoutEffectAndRecordsThem(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	ctx := t.Context()
	d := w.Deps("coord-1")
	require.NoError(t, d.Storage.Provision(ctx, "a"))

	boom := errors.New("injected outage")
	var seen []Call
	w.SetHook(func(c Call) error {
		seen = append(seen, c)
		if c.Port == "instances" || c.Method == "Update" || c.Method == "Archive" {
			return boom
		}
		return nil
	})

	require.ErrorIs(t, d.Instances.Start(ctx, "a", "img"), boom)
	require.Empty(t, w.Instances.Snapshot(), "no effect")
	e := lastEvent(t, w)
	require.Equal(t, history.KindCall, e.Kind)
	require.Equal(t, "instances.Start", e.Method)
	require.Equal(t, "coord-1", e.Instance)
	require.Equal(t, "a", e.Workspace)
	require.Equal(t, boom.Error(), e.Err)

	ok, err := d.Store.Update(ctx, reconciler("coord-1", 0), "a", contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	require.ErrorIs(t, err, boom)
	require.False(t, ok)
	require.Equal(t, contracts.OpNone, w.Store.Snapshot()[0].Operation)
	e = lastEvent(t, w)
	require.Equal(t, history.KindWrite, e.Kind)
	require.False(t, e.Applied)
	require.Equal(t, boom.Error(), e.Err)

	_, err = d.Storage.Archive(ctx, "a", "op-1")
	require.ErrorIs(t, err, boom)
	require.Empty(t, w.Objects.Keys())

	_, err = d.Store.Get(ctx, "a")
	require.NoError(t, err, "other calls pass")
	require.Equal(t, []Call{
		{Instance: "coord-1", Port: "instances", Method: "Start", Workspace: "a"},
		{Instance: "coord-1", Port: "store", Method: "Update", Workspace: "a"},
		{Instance: "coord-1", Port: "storage", Method: "Archive", Workspace: "a", Key: contracts.ArchiveKey("a", "op-1")},
		{Instance: "coord-1", Port: "store", Method: "Get", Workspace: "a"},
	}, seen)

	stats := w.Stats()
	require.Equal(t, int64(1), stats.Failed["instances.Start"])
	require.Equal(t, int64(1), stats.Calls["store.Get"])

	w.SetHook(nil)
	require.NoError(t, d.Instances.Start(ctx, "a", "img"))
}

func TestHookCanCrashAnInstanceEverywhere(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	insertRows(t, w, "a")
	d := w.Deps("coord-1")
	lease, ok, err := d.Leadership.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	l, err := d.Feed.Listen(ctx)
	require.NoError(t, err)

	w.SetHook(func(c Call) error {
		if c.Instance == "coord-1" {
			return contracts.ErrCrashed
		}
		return nil
	})
	checks := []error{
		lease.Check(ctx),
		d.Store.UpdateMany(ctx, reconciler("coord-1", 1), []ports.RowUpdate{{ID: "a"}}),
		d.Bus.Publish(ctx, contracts.MonitorTriggerChannel, "a"),
		d.Objects.Put(ctx, "k", nil),
	}
	_, err = d.Store.List(ctx, contracts.FilterAll)
	checks = append(checks, err)
	_, err = l.Poll(ctx)
	checks = append(checks, err)
	_, err = d.Storage.ListVolumes(ctx)
	checks = append(checks, err)
	_, _, err = d.Bus.Get(ctx, "k")
	checks = append(checks, err)
	for i, err := range checks {
		require.ErrorIs(t, err, contracts.ErrCrashed, "call %d", i)
	}
	// Another instance is unaffected.
	_, err = w.Deps("coord-2").Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
}

func TestCallsAreAttributedToTheirInstance(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	api, c1, c2 := w.Deps("api"), w.Deps("coord-1"), w.Deps("coord-2")
	require.Equal(t, "coord-1", c1.Instance)
	require.Same(t, w.Clock, c1.Clock)

	require.NoError(t, api.Store.Insert(ctx, apiWriter, contracts.NewWorkspace("a", "u", "n", "img", t0)))
	_, ok, err := c1.Leadership.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, c1.Storage.Provision(ctx, "a"))
	require.NoError(t, c2.Instances.Start(ctx, "a", "img"))
	require.NoError(t, c1.Bus.Set(ctx, contracts.IdleTimerKey("a"), "1", 0))
	_, err = c2.Store.Update(ctx, contracts.Writer{Component: contracts.CompHealthMonitor}, "a", contracts.Cond{},
		contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
	require.NoError(t, err)

	// Reads are counted, not recorded.
	_, err = c1.Store.Get(ctx, "a")
	require.NoError(t, err)
	_, err = c1.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	_, _, err = c1.Bus.Get(ctx, "x")
	require.NoError(t, err)

	var got []string
	for _, e := range w.Rec.Events() {
		got = append(got, string(e.Kind)+" "+e.Method+" by "+e.Instance)
	}
	require.Equal(t, []string{
		"db.insert store.Insert by api",
		"leader acquire by coord-1",
		"call storage.Provision by coord-1",
		"call instances.Start by coord-2",
		"call bus.Set by coord-1",
		"db.write store.Update by coord-2",
	}, got)
	stats := w.Stats()
	require.Equal(t, int64(1), stats.Calls["store.Get"])
	require.Equal(t, int64(1), stats.Calls["store.List"])
	require.Equal(t, int64(1), stats.Calls["bus.Get"])
}

func TestSameInputsSameHistoryHash(t *testing.T) {
	run := func() string {
		w := newWorld(t)
		ctx := t.Context()
		ids := NewIDs(7)
		d := w.Deps("coord-1")
		for range 20 {
			id := ids.NewID()
			require.NoError(t, d.Store.Insert(ctx, apiWriter, contracts.NewWorkspace(id, "u", "n", "img", w.Clock.Now())))
			require.NoError(t, d.Storage.Provision(ctx, id))
			require.NoError(t, w.Storage.WriteFile(id, "f", []byte(id)))
			_, err := d.Storage.Archive(ctx, id, "op")
			require.NoError(t, err)
			w.Clock.Advance(1)
		}
		return w.Rec.Hash()
	}
	require.Equal(t, run(), run())
}

func TestConcurrentUseIsSafe(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a", "b")
	ctx := t.Context()
	done := make(chan struct{})
	for g := range 4 {
		d := w.Deps("coord-" + string(rune('1'+g)))
		go func() {
			defer func() { done <- struct{}{} }()
			sub, _ := d.Bus.Subscribe(ctx, "c")
			l, _ := d.Feed.Listen(ctx)
			for i := range 50 {
				_, _ = d.Store.Update(ctx, contracts.Writer{Component: contracts.CompHealthMonitor}, "a", contracts.Cond{},
					contracts.Patch{HealthStatus: contracts.Some([]contracts.HealthStatus{contracts.HealthOK, contracts.HealthError}[i%2])})
				_, _ = d.Store.List(ctx, contracts.FilterAll)
				_ = d.Storage.Provision(ctx, "a")
				_ = d.Instances.Start(ctx, "a", "img")
				_, _ = d.Bus.Incr(ctx, "n")
				_ = d.Bus.Publish(ctx, "c", "m")
				_ = sub.Poll()
				_, _ = l.Poll(ctx)
				_, _, _ = d.Leadership.TryAcquire(ctx, "x")
			}
		}()
	}
	for range 4 {
		<-done
	}
	v, ok := w.Bus.Peek("n")
	require.True(t, ok)
	require.Equal(t, "200", v)
}

// Every port method through a view is hooked with the view's instance and
// its own port and method name.
func TestEveryViewCallIsHooked(t *testing.T) {
	w := newWorld(t)
	insertRows(t, w, "a")
	ctx := t.Context()
	var seen []string
	w.SetHook(func(c Call) error {
		require.Equal(t, "inst-x", c.Instance, "%s.%s", c.Port, c.Method)
		seen = append(seen, c.Port+"."+c.Method)
		return nil
	})
	d := w.Deps("inst-x")
	_, _ = d.Store.Get(ctx, "a")
	_, _ = d.Store.List(ctx, contracts.FilterAll)
	_ = d.Store.Insert(ctx, apiWriter, contracts.NewWorkspace("b", "u", "n", "i", t0))
	_, _ = d.Store.Update(ctx, apiWriter, "a", contracts.Cond{}, contracts.Patch{})
	_ = d.Store.UpdateMany(ctx, apiWriter, nil)
	_ = d.Store.MarkObserved(ctx, apiWriter, nil, t0)
	lease, _, _ := d.Leadership.TryAcquire(ctx, "inst-x")
	_ = lease.Check(ctx)
	_ = lease.Release(ctx)
	l, _ := d.Feed.Listen(ctx)
	_, _ = l.Poll(ctx)
	_ = d.Storage.Provision(ctx, "a")
	_ = d.Instances.Start(ctx, "a", "img")
	_ = d.Instances.Delete(ctx, "a")
	_, _ = d.Instances.List(ctx)
	_, _ = d.Storage.ListVolumes(ctx)
	key, _ := d.Storage.Archive(ctx, "a", "op")
	_, _ = d.Storage.Restore(ctx, "a", key)
	_ = d.Storage.DeleteVolume(ctx, "a")
	_ = d.Objects.Put(ctx, "k", nil)
	_, _ = d.Objects.Get(ctx, "k")
	_, _ = d.Objects.Head(ctx, "k")
	_, _ = d.Objects.List(ctx, "")
	_ = d.Objects.Delete(ctx, "k")
	_ = d.Bus.Publish(ctx, "c", "p")
	_, _ = d.Bus.Subscribe(ctx, "c")
	_, _ = d.Bus.Incr(ctx, "n")
	_, _ = d.Bus.Decr(ctx, "n")
	_, _, _ = d.Bus.Get(ctx, "n")
	_ = d.Bus.Set(ctx, "s", "v", 0)
	_, _ = d.Bus.SetNX(ctx, "s", "v", 0)
	_ = d.Bus.Del(ctx, "s")

	var want []string
	for m := range numMethods {
		if m != mBusPoll { // Subscription.Poll cannot fail: counted only
			want = append(want, methods[m].full)
		}
	}
	require.ElementsMatch(t, want, seen)
	for _, e := range w.Rec.Events() {
		if e.Kind == history.KindCall {
			require.Equal(t, "inst-x", e.Instance, e.Method)
		}
	}
}
