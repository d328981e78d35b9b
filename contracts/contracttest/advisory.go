package contracttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// AdvisorySession is one DB session's session-level advisory locks, the
// primitive a leader lock is built on (PostgreSQL's pg_try_advisory_lock
// and pg_advisory_unlock on bigint keys).
type AdvisorySession interface {
	// TryLock takes key without waiting: true if it was free or this
	// session holds it already, false if another session holds it.
	TryLock(ctx context.Context, key int64) (bool, error)
	// Unlock releases one hold of key: false if this session does not
	// hold it.
	Unlock(ctx context.Context, key int64) (bool, error)
	// Close ends the session, releasing every lock it holds.
	Close(ctx context.Context) error
}

// AdvisoryTarget opens sessions on one database.
type AdvisoryTarget struct {
	// NewSession opens a new session (its own connection), closed when t
	// ends at the latest.
	NewSession func(t *testing.T) AdvisorySession
}

// AdvisoryLocks runs the advisory-lock suite: the lock is re-entrant and
// counted per session, as PostgreSQL's is.
func AdvisoryLocks(t *testing.T, newTarget func(t *testing.T) AdvisoryTarget) {
	t.Run("ReentrantCounted", func(t *testing.T) { advisoryCounted(t, newTarget(t)) })
	t.Run("CloseReleasesEveryHold", func(t *testing.T) { advisoryClose(t, newTarget(t)) })
	t.Run("KeysAreIndependent", func(t *testing.T) { advisoryKeys(t, newTarget(t)) })
}

// lockKey is a key no leader lock uses.
const lockKey int64 = 0x0c0ffee

func tryLock(t *testing.T, s AdvisorySession, key int64) bool {
	t.Helper()
	ok, err := s.TryLock(t.Context(), key)
	require.NoError(t, err, "try lock %d", key)
	return ok
}

func unlock(t *testing.T, s AdvisorySession, key int64) bool {
	t.Helper()
	ok, err := s.Unlock(t.Context(), key)
	require.NoError(t, err, "unlock %d", key)
	return ok
}

func advisoryCounted(t *testing.T, x AdvisoryTarget) {
	a, b := x.NewSession(t), x.NewSession(t)
	require.True(t, tryLock(t, a, lockKey), "a free lock is taken")
	require.True(t, tryLock(t, a, lockKey), "the holding session takes it again (re-entrant)")
	require.False(t, tryLock(t, b, lockKey), "another session is refused")

	require.True(t, unlock(t, a, lockKey), "the first unlock releases one hold")
	require.False(t, tryLock(t, b, lockKey), "taken twice, unlocked once: still held")
	require.False(t, unlock(t, b, lockKey), "a session that does not hold it cannot unlock it")

	require.True(t, unlock(t, a, lockKey), "the second unlock releases the last hold")
	require.False(t, unlock(t, a, lockKey), "nothing left to unlock")
	require.True(t, tryLock(t, b, lockKey), "free once every hold is released")
	require.False(t, tryLock(t, a, lockKey))
	require.True(t, unlock(t, b, lockKey))
}

func advisoryClose(t *testing.T, x AdvisoryTarget) {
	a, b := x.NewSession(t), x.NewSession(t)
	for range 3 {
		require.True(t, tryLock(t, a, lockKey))
	}
	require.NoError(t, a.Close(t.Context()))
	require.True(t, tryLock(t, b, lockKey), "a closed session holds nothing, whatever its count")
	require.True(t, unlock(t, b, lockKey))
}

func advisoryKeys(t *testing.T, x AdvisoryTarget) {
	a, b := x.NewSession(t), x.NewSession(t)
	require.True(t, tryLock(t, a, lockKey))
	require.True(t, tryLock(t, b, lockKey+1), "another key is another lock")
	require.False(t, tryLock(t, a, lockKey+1))
	require.True(t, unlock(t, a, lockKey))
	require.True(t, unlock(t, b, lockKey+1))
}
