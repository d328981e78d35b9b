package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jackc/pgx/v5"
	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// TestContract runs the shared ports.Store suite (contracttest.Store)
// against PostgreSQL: a fresh database per subtest, on a virtual clock,
// with List reading pages of two rows so that every listing the suite
// checks crosses page boundaries.
func TestContract(t *testing.T) {
	contracttest.Store(t, func(t *testing.T) contracttest.StoreTarget {
		dsn := testenv.PostgresDB(t)
		clock := wsfakes.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC))
		s, err := pgstore.Open(t.Context(), dsn, clock, pgstore.WithListPage(2))
		require.NoError(t, err)
		t.Cleanup(s.Close)
		require.NoError(t, s.Migrate(t.Context()))
		return contracttest.StoreTarget{
			Store: s, Feed: s, Clock: clock,
			Advance: func(_ *testing.T, d time.Duration) { clock.Advance(d) },
			NewSession: func(t *testing.T) ports.Leadership {
				l := s.Leadership()
				t.Cleanup(func() { _ = l.Close(context.Background()) })
				return l
			},
			KillSession: func(t *testing.T, _ ports.Leadership, lease ports.Lease) {
				pid, err := s.BackendPID(lease)
				require.NoError(t, err)
				c, err := pgx.Connect(t.Context(), dsn)
				require.NoError(t, err)
				defer c.Close(context.Background())
				var ok bool
				require.NoError(t, c.QueryRow(t.Context(), "SELECT pg_terminate_backend($1)", int32(pid)).Scan(&ok))
				require.True(t, ok)
			},
		}
	})
}
