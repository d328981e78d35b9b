package contracttest

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// acquire takes the leader lock on session for holder and fails t if it
// cannot.
func acquire(t *testing.T, session ports.Leadership, holder string) ports.Lease {
	t.Helper()
	lease, ok, err := session.TryAcquire(t.Context(), holder)
	require.NoError(t, err, "acquire for %s", holder)
	require.True(t, ok, "acquire for %s", holder)
	require.NotNil(t, lease)
	return lease
}

// refused asserts that session cannot take the lock.
func refused(t *testing.T, session ports.Leadership, holder string) {
	t.Helper()
	lease, ok, err := session.TryAcquire(t.Context(), holder)
	require.NoError(t, err, "a held lock is not an error")
	require.False(t, ok, "%s acquired a lock another session holds", holder)
	require.Nil(t, lease)
}

func storeLeadership(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	a, b, c := x.NewSession(t), x.NewSession(t), x.NewSession(t)

	la := acquire(t, a, "A")
	e1 := la.Epoch()
	require.Positive(t, e1, "an acquisition has an epoch ≥ 1")
	require.NoError(t, la.Check(ctx))
	refused(t, b, "B")

	again := acquire(t, a, "A")
	require.Equal(t, e1, again.Epoch(), "the holding session re-acquiring is not a new acquisition")
	require.NoError(t, la.Check(ctx))
	refused(t, b, "B")

	require.NoError(t, la.Release(ctx))
	err := la.Check(ctx)
	require.ErrorIs(t, err, contracts.ErrNotLeader, "a released lease is not held")

	lb := acquire(t, b, "B")
	e2 := lb.Epoch()
	require.Equal(t, e1+1, e2, "each acquisition increments the epoch")
	require.NoError(t, lb.Check(ctx))
	require.ErrorIs(t, la.Check(ctx), contracts.ErrNotLeader, "the old lease stays lost")
	_ = la.Release(ctx) // releasing a lost lease (its error, if any, does not matter)…
	require.NoError(t, lb.Check(ctx), "…must not release the new holder's lock")
	refused(t, c, "C")

	// The holder's session dies: the lock is released, the lease says so.
	x.KillSession(t, b, lb)
	eventually(t, x.Wait, "a killed session's lease reports ErrNotLeader", func() bool {
		err := lb.Check(ctx)
		if err == nil {
			return false
		}
		require.ErrorIs(t, err, contracts.ErrNotLeader)
		return true
	})
	var lc ports.Lease
	eventually(t, x.Wait, "a new session acquires after the holder's session was killed", func() bool {
		lease, ok, err := c.TryAcquire(ctx, "C")
		require.NoError(t, err)
		lc = lease
		return ok
	})
	require.Equal(t, e2+1, lc.Epoch())
	require.NoError(t, lc.Check(ctx))
	require.ErrorIs(t, lb.Check(ctx), contracts.ErrNotLeader)
	require.NoError(t, lc.Release(ctx))
}

func storeFencing(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(15, 16))
	now := x.now()
	row := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "fenced", "img:1", now)
	x.insert(t, row)
	other := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "other", "img:1", now)
	x.insert(t, other)

	s1 := x.NewSession(t)
	l1 := acquire(t, s1, "one")
	e := l1.Epoch()

	x.tick(t)
	p := contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(x.now())}
	applied, err := x.Store.Update(ctx, reconcilerAt(e), row.ID, contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, p)
	require.NoError(t, err, "the current epoch writes")
	require.True(t, applied)
	want := row.Clone()
	p.Apply(&want, x.now())
	x.requireRow(t, want)

	x.tick(t)
	stale := contracts.Patch{Operation: contracts.Some(contracts.OpNone), Memo: contracts.Some("stale")}
	for _, bad := range []int64{e + 1, e + 7} {
		applied, err = x.Store.Update(ctx, reconcilerAt(bad), row.ID, contracts.Cond{}, stale)
		require.ErrorIs(t, err, contracts.ErrFenced, "epoch %d while %d leads", bad, e)
		require.False(t, applied)
		applied, err = x.Store.Update(ctx, reconcilerAt(bad), row.ID, contracts.Cond{Operation: contracts.Some(contracts.OpDeleting)}, stale)
		require.ErrorIs(t, err, contracts.ErrFenced, "fencing is reported even when the cond fails too")
		require.False(t, applied)
		err = x.Store.UpdateMany(ctx, reconcilerAt(bad), []ports.RowUpdate{
			{ID: row.ID, Patch: stale}, {ID: other.ID, Patch: stale},
		})
		require.ErrorIs(t, err, contracts.ErrFenced, "UpdateMany with epoch %d", bad)
		err = x.Store.MarkObserved(ctx, contracts.Writer{Component: contracts.CompHealthMonitor, Epoch: bad}, []string{row.ID, other.ID}, x.now())
		require.ErrorIs(t, err, contracts.ErrFenced, "MarkObserved with epoch %d", bad)
	}
	x.requireRow(t, want, "fenced writes wrote nothing")
	x.requireRow(t, other, "fenced writes wrote nothing")

	// A new acquisition makes the old epoch stale.
	require.NoError(t, l1.Release(ctx))
	l2 := acquire(t, x.NewSession(t), "two")
	require.Equal(t, e+1, l2.Epoch())
	x.tick(t)
	applied, err = x.Store.Update(ctx, reconcilerAt(e), row.ID, contracts.Cond{}, stale)
	require.ErrorIs(t, err, contracts.ErrFenced, "the previous leader's epoch")
	require.False(t, applied)
	require.ErrorIs(t, x.Store.UpdateMany(ctx, reconcilerAt(e), []ports.RowUpdate{{ID: row.ID, Patch: stale}}), contracts.ErrFenced)
	x.requireRow(t, want, "the previous leader wrote nothing")

	err = x.Store.UpdateMany(ctx, reconcilerAt(e+1), []ports.RowUpdate{{ID: row.ID, Patch: stale}})
	require.NoError(t, err, "the new leader's epoch")
	stale.Apply(&want, x.now())
	x.requireRow(t, want)

	x.tick(t)
	api := contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}
	applied, err = x.Store.Update(ctx, apiWriter, row.ID, contracts.Cond{}, api)
	require.NoError(t, err, "epoch 0 is never fenced")
	require.True(t, applied)
	api.Apply(&want, x.now())
	x.requireRow(t, want)
	require.NoError(t, x.Store.MarkObserved(ctx, healthWriter, []string{other.ID}, x.now()), "epoch 0 is never fenced")
	require.NoError(t, l2.Release(ctx))
}
