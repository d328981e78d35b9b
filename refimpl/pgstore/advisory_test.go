package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/refimpl/testenv"
)

// pgAdvisory is one PostgreSQL session's advisory locks.
type pgAdvisory struct{ c *pgx.Conn }

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

func (p pgAdvisory) Close(ctx context.Context) error { return p.c.Close(ctx) }

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
			return pgAdvisory{c}
		}}
	})
}
