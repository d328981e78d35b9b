package pgstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

func acquire(t *testing.T, l *pgstore.Leadership, holder string) *pgstore.Lease {
	t.Helper()
	lease, ok, err := l.TryAcquire(context.Background(), holder)
	require.NoError(t, err)
	require.True(t, ok, "%s did not get the lock", holder)
	return lease.(*pgstore.Lease)
}

// TestTryAcquireWaitsOutSharedHolders: a vacancy watch holds the lock
// shared for an instant when it wakes; a try in that instant, with no
// leader anywhere, waits for the shared holder and wins the election; a
// shared holder that never lets go costs a bounded wait and a lost
// election, not a hang; and with a leader a try still fails at once.
func TestTryAcquireWaitsOutSharedHolders(t *testing.T) {
	ctx := context.Background()
	shared := func(t *testing.T, e *env) *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, e.dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		_, err = c.Exec(ctx, `SELECT pg_advisory_lock_shared($1)`, pgstore.DefaultLockKey)
		require.NoError(t, err)
		return c
	}

	t.Run("wins once the shared holder unlocks", func(t *testing.T) {
		e := newEnv(t, pgstore.WithSharedWait(time.Minute))
		watch := shared(t, e)
		type result struct {
			ok  bool
			err error
		}
		done := make(chan result, 1)
		go func() {
			_, ok, err := newLeadership(t, e).TryAcquire(ctx, "c1")
			done <- result{ok, err}
		}()
		// The try is waiting once its exclusive request queues behind the
		// shared hold.
		require.Eventually(t, func() bool {
			var waiting bool
			err := watch.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted AND mode = 'ExclusiveLock')`).Scan(&waiting)
			return err == nil && waiting
		}, 30*time.Second, 10*time.Millisecond)
		_, err := watch.Exec(ctx, `SELECT pg_advisory_unlock_shared($1)`, pgstore.DefaultLockKey)
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.True(t, r.ok, "the try lost an election nobody else ran")
	})

	t.Run("a shared holder that stays", func(t *testing.T) {
		e := newEnv(t, pgstore.WithSharedWait(100*time.Millisecond))
		shared(t, e)
		_, ok, err := newLeadership(t, e).TryAcquire(ctx, "c1")
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("a leader", func(t *testing.T) {
		e := newEnv(t, pgstore.WithSharedWait(time.Minute))
		lease := acquire(t, newLeadership(t, e), "c1")
		start := time.Now()
		_, ok, err := newLeadership(t, e).TryAcquire(ctx, "c2")
		require.NoError(t, err)
		require.False(t, ok, "a second session got the held lock")
		require.Less(t, time.Since(start), 30*time.Second, "the try waited behind a leader")
		require.NoError(t, lease.Check(ctx))
	})
}

func newLeadership(t *testing.T, e *env) *pgstore.Leadership {
	t.Helper()
	l := e.s.Leadership()
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// TestElection: one holder at a time; a terminated session loses the lock
// within seconds and a new holder gets the next epoch; the deposed
// leader's writes are fenced.
func TestElection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	row := e.insert(t, 1)[0]
	l1, l2 := newLeadership(t, e), newLeadership(t, e)

	lease1 := acquire(t, l1, "c1")
	require.Equal(t, int64(1), lease1.Epoch())
	require.NoError(t, lease1.Check(ctx))
	again := acquire(t, l1, "c1")
	require.Same(t, lease1, again, "the holding session gets its lease back")
	epoch, err := e.s.Epoch(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), epoch, "re-acquiring on the holding session is no new epoch")

	_, ok, err := l2.TryAcquire(ctx, "c2")
	require.NoError(t, err)
	require.False(t, ok, "a second session got the held lock")

	// An administrator (a third session) ends the leader's session.
	pid, err := e.s.BackendPID(lease1)
	require.NoError(t, err)
	killed, err := e.s.TerminateBackend(ctx, pid)
	require.NoError(t, err)
	require.True(t, killed)
	start := time.Now()
	require.Eventually(t, func() bool {
		return lease1.Check(ctx) != nil
	}, 5*time.Second, 50*time.Millisecond)
	require.ErrorIs(t, lease1.Check(ctx), contracts.ErrNotLeader)
	t.Logf("loss noticed after %s", time.Since(start))

	var lease2 *pgstore.Lease
	require.Eventually(t, func() bool {
		l, ok, err := l2.TryAcquire(ctx, "c2")
		if err != nil || !ok {
			return false
		}
		lease2 = l.(*pgstore.Lease)
		return true
	}, 5*time.Second, 50*time.Millisecond)
	require.Equal(t, lease1.Epoch()+1, lease2.Epoch())

	_, err = e.s.Update(ctx, reconciler(lease1.Epoch()), row.ID, contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	require.ErrorIs(t, err, contracts.ErrFenced)
	applied, err := e.s.Update(ctx, reconciler(lease2.Epoch()), row.ID, contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpStarting)})
	require.NoError(t, err)
	require.True(t, applied)

	// A clean release hands over; the old session reconnects, on its
	// first try even if l2's vacancy watch, armed when c2 found the lock
	// held, is in the instant it holds the lock shared (vacancy.go).
	require.NoError(t, lease2.Release(ctx))
	require.ErrorIs(t, lease2.Check(ctx), contracts.ErrNotLeader)
	require.NoError(t, lease2.Release(ctx), "releasing twice is a no-op")
	lease3 := acquire(t, l1, "c1")
	require.Equal(t, lease2.Epoch()+1, lease3.Epoch())

	// The trail names every acquisition and the release; the terminated
	// session's loss, which it could not record, is inferred from c2's
	// acquisition.
	evs, err := e.s.History(ctx, 0)
	require.NoError(t, err)
	var leader []string
	for _, ev := range evs {
		if ev.Kind == history.KindLeader {
			leader = append(leader, ev.Method+" "+ev.Instance+" "+itoa(ev.Epoch))
		}
	}
	require.Equal(t, []string{"acquire c1 1", "lost c1 0", "acquire c2 2", "release c2 2", "acquire c1 3"}, leader)
}

// TestCheckTimeout: a lock check that gets no answer in time counts as a
// lost lock (and drops the session, releasing the lock).
func TestCheckTimeout(t *testing.T) {
	e := newEnv(t, pgstore.WithCheckTimeout(300*time.Millisecond))
	ctx := context.Background()
	l := newLeadership(t, e)
	lease := acquire(t, l, "c1")

	tx, err := e.s.Pool().Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `LOCK TABLE system_locks IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)

	start := time.Now()
	require.ErrorIs(t, lease.Check(ctx), contracts.ErrNotLeader)
	require.Less(t, time.Since(start), 3*time.Second)
	require.NoError(t, tx.Rollback(ctx))

	other := newLeadership(t, e)
	require.Eventually(t, func() bool {
		_, ok, err := other.TryAcquire(ctx, "c2")
		return err == nil && ok
	}, 5*time.Second, 50*time.Millisecond, "the dropped session still holds the lock")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestIdleSessionTimeout: a live leader keeps its lock past the server's
// idle_session_timeout (its lease checks itself meanwhile); an idle standby
// session that the server closed is replaced without an error. (A leader
// that stops talking loses the lock to the timeout: that is the partition
// drill, TestPartitionedLeaderLosesTheLock.)
func TestIdleSessionTimeout(t *testing.T) {
	e := newEnv(t, pgstore.WithIdleSessionTimeout(500*time.Millisecond))
	ctx := context.Background()
	l1, l2 := newLeadership(t, e), newLeadership(t, e)
	lease1 := acquire(t, l1, "c1")
	_, ok, err := l2.TryAcquire(ctx, "c2")
	require.NoError(t, err)
	require.False(t, ok)

	time.Sleep(1500 * time.Millisecond) // both sessions idle past the timeout, but for the lease's checks
	_, ok, err = l2.TryAcquire(ctx, "c2")
	require.NoError(t, err, "the closed standby session was not replaced")
	require.False(t, ok, "the live leader lost its lock to the idle timeout")
	require.NoError(t, lease1.Check(ctx))
}

// TestVacancyWakesTheStandby: a standby that found the lock held is told
// when the holder's session ends (crash, termination or release), with no
// signal while the holder keeps it, and then wins the lock at once.
func TestVacancyWakesTheStandby(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l1, l2 := newLeadership(t, e), newLeadership(t, e)
	lease1 := acquire(t, l1, "c1")
	_, ok, err := l2.TryAcquire(ctx, "c2")
	require.NoError(t, err)
	require.False(t, ok)

	// The holder checks its lease meanwhile: the watch does not disturb it.
	for range 3 {
		require.NoError(t, lease1.Check(ctx))
		select {
		case <-l2.Vacated():
			t.Fatal("vacancy signalled while the lock is held")
		case <-time.After(100 * time.Millisecond):
		}
	}

	pid, err := e.s.BackendPID(lease1)
	require.NoError(t, err)
	killed, err := e.s.TerminateBackend(ctx, pid)
	require.NoError(t, err)
	require.True(t, killed)
	select {
	case <-l2.Vacated():
	case <-time.After(30 * time.Second):
		t.Fatal("no vacancy signal after the holder's session ended")
	}
	lease2 := acquire(t, l2, "c2")
	require.Equal(t, lease1.Epoch()+1, lease2.Epoch())

	// The roles swap: the old holder's watch wakes it when c2 releases.
	_, ok, err = l1.TryAcquire(ctx, "c1")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, lease2.Release(ctx))
	select {
	case <-l1.Vacated():
	case <-time.After(30 * time.Second):
		t.Fatal("no vacancy signal after the holder released")
	}
	acquire(t, l1, "c1")
}

// TestLeadershipClosesTwice: closing a session twice, whether or not it
// ever lost an election (and so started its vacancy watch), returns.
func TestLeadershipClosesTwice(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	idle := e.s.Leadership()
	require.NoError(t, idle.Close(ctx))
	require.NoError(t, idle.Close(ctx))

	holder, standby := newLeadership(t, e), e.s.Leadership()
	acquire(t, holder, "c1")
	_, ok, err := standby.TryAcquire(ctx, "c2")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, standby.Close(ctx))
	require.NoError(t, standby.Close(ctx))
	_, ok, err = standby.TryAcquire(ctx, "c2") // after Close: no watch starts again
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, standby.Close(ctx))
}
