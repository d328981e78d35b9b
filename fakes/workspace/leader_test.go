package workspace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

func TestLeaderElectionEpochsAndRelease(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	s1, s2 := w.Store.Session("coord-1"), w.Store.Session("coord-2")
	require.Same(t, s1, w.Store.Session("coord-1"), "a live session is reused")

	l1, ok, err := s1.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(1), l1.Epoch())
	require.Equal(t, "coord-1", w.Store.Holder())

	_, ok, err = s2.TryAcquire(ctx, "coord-2")
	require.NoError(t, err)
	require.False(t, ok, "held by another session")

	again, ok, err := s1.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(1), again.Epoch(), "re-acquiring a held lock is no new acquisition")

	require.NoError(t, l1.Check(ctx))
	require.NoError(t, l1.Release(ctx))
	require.ErrorIs(t, l1.Check(ctx), contracts.ErrNotLeader)
	require.Empty(t, w.Store.Holder())
	require.NoError(t, l1.Release(ctx), "releasing twice is harmless")

	l2, ok, err := s2.TryAcquire(ctx, "coord-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(2), l2.Epoch())
	l1b, ok, err := s1.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.False(t, ok)
	require.Nil(t, l1b)

	var got []string
	for _, e := range eventsOf(w, history.KindLeader) {
		got = append(got, e.Method+":"+e.Instance)
	}
	require.Equal(t, []string{"acquire:coord-1", "release:coord-1", "acquire:coord-2"}, got)
}

func TestKillSessionReleasesTheLock(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	s1 := w.Store.Session("coord-1")
	l1, ok, err := s1.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)

	w.Store.KillSession("coord-1")
	require.Empty(t, w.Store.Holder())
	require.ErrorIs(t, l1.Check(ctx), contracts.ErrNotLeader)
	c := lastEvent(t, w)
	require.Equal(t, history.KindCall, c.Kind, "every lock check is recorded, a failed one too")
	require.Equal(t, "store.Check", c.Method)
	require.Equal(t, int64(1), c.Epoch)
	require.Contains(t, c.Err, "not leader")
	leaders := eventsOf(w, history.KindLeader)
	e := leaders[len(leaders)-1]
	require.Equal(t, history.KindLeader, e.Kind)
	require.Equal(t, "lost", e.Method)
	require.Equal(t, "coord-1", e.Instance)
	require.Equal(t, int64(1), e.Epoch)

	_, ok, err = s1.TryAcquire(ctx, "coord-1")
	require.ErrorIs(t, err, contracts.ErrUnavailable, "a dead session cannot acquire")
	require.False(t, ok)
	_, _, err = s1.TryAcquire(ctx, "coord-1")
	require.Error(t, err, "still dead")

	// Another instance takes over; a reconnected session can compete again.
	l2, ok, err := w.Store.Session("coord-2").TryAcquire(ctx, "coord-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(2), l2.Epoch())
	s1b := w.Store.Session("coord-1")
	require.NotSame(t, s1, s1b)
	require.NoError(t, l2.Release(ctx))
	l1b, ok, err := s1b.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(3), l1b.Epoch())
}

func TestDepsLeadershipReconnectsAfterAKill(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	d := w.Deps("coord-1")
	lease, ok, err := d.Leadership.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)

	w.Store.KillSession("coord-1")
	require.ErrorIs(t, lease.Check(ctx), contracts.ErrNotLeader, "the instance notices")
	_, ok, err = d.Leadership.TryAcquire(ctx, "coord-1")
	require.ErrorIs(t, err, contracts.ErrUnavailable, "the broken connection surfaces once")
	require.False(t, ok)
	lease, ok, err = d.Leadership.TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok, "then the view has reconnected")
	require.Equal(t, int64(2), lease.Epoch())
	require.NoError(t, lease.Check(ctx))
}

// A successful check of the lock is recorded too, with its epoch: SPEC
// 3.1's re-check before a world-changing call is judged on the history.
func TestSuccessfulLockChecksAreRecorded(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	l, ok, err := w.Store.Session("coord-1").TryAcquire(ctx, "coord-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, l.Check(ctx))
	e := lastEvent(t, w)
	require.Equal(t, history.KindCall, e.Kind)
	require.Equal(t, "store.Check", e.Method)
	require.Equal(t, "coord-1", e.Instance)
	require.Equal(t, l.Epoch(), e.Epoch)
	require.Empty(t, e.Err)
}
