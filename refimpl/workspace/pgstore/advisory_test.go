package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/refimpl/testenv"
)

// pgAdvisory is one PostgreSQL session's advisory locks.
type pgAdvisory struct {
	c   *pgx.Conn
	dsn string
}

func (p pgAdvisory) TryLock(ctx context.Context, key int64) (bool, error) {
	var ok bool
	if err := p.c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		return false, fmt.Errorf("pg_try_advisory_lock(%d): %w", key, err)
	}
	return ok, nil
}

func (p pgAdvisory) Unlock(ctx context.Context, key int64) (bool, error) {
	var ok bool
	if err := p.c.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, key).Scan(&ok); err != nil {
		return false, fmt.Errorf("pg_advisory_unlock(%d): %w", key, err)
	}
	return ok, nil
}

// Close ends the session and returns once its backend has exited: the
// client's Terminate message returns before the server process has gone
// (and released its locks), so a lock tried at once from another session
// could still find it held. Waiting on pg_stat_activity makes Close mean
// "the session has ended", which is what the contract is about.
func (p pgAdvisory) Close(ctx context.Context) error {
	pid := p.c.PgConn().PID()
	if err := p.c.Close(ctx); err != nil {
		return err
	}
	probe, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return fmt.Errorf("connect to watch backend %d end: %w", pid, err)
	}
	defer probe.Close(context.Background())
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var alive bool
		if err := probe.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive); err != nil {
			return fmt.Errorf("backend %d did not end: %w", pid, err)
		}
		if !alive {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("backend %d did not end: %w", pid, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestAdvisoryLockContract runs the advisory-lock suite against
// PostgreSQL itself: the fake's counted, re-entrant session lock
// (fakes.Session.TryLock) is what the real one does.
func TestAdvisoryLockContract(t *testing.T) {
	contracttest.AdvisoryLocks(t, func(t *testing.T) contracttest.AdvisoryTarget {
		dsn := testenv.PostgresDB(t)
		return contracttest.AdvisoryTarget{NewSession: func(t *testing.T) contracttest.AdvisorySession {
			c, err := pgx.Connect(t.Context(), dsn)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close(context.Background()) })
			return pgAdvisory{c: c, dsn: dsn}
		}}
	})
}
