package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/refimpl/pgstore"
)

func TestMigrationsEmbedded(t *testing.T) {
	migs, err := pgstore.Migrations()
	require.NoError(t, err)
	require.NotEmpty(t, migs)
	for i, m := range migs {
		require.Equal(t, i+1, m.Version, "versions run 1, 2, 3… without gaps")
		require.NotEmpty(t, m.SQL)
	}
}

// TestMigrateIdempotent: Migrate again, also concurrently, changes
// nothing.
func TestMigrateIdempotent(t *testing.T) {
	e := newEnv(t) // migrated once
	ctx := context.Background()
	migs, err := pgstore.Migrations()
	require.NoError(t, err)

	schema := func() (objects int, applied []int) {
		t.Helper()
		require.NoError(t, e.s.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public')
			+ (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal)
			+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public')
			+ (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public')`).Scan(&objects))
		applied, err := e.s.AppliedMigrations(ctx)
		require.NoError(t, err)
		return objects, applied
	}
	objects, applied := schema()
	require.Len(t, applied, len(migs))
	require.Equal(t, migs[len(migs)-1].Version, applied[len(applied)-1])

	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- e.s.Migrate(ctx) }()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	objects2, applied2 := schema()
	require.Equal(t, objects, objects2)
	require.Equal(t, applied, applied2)

	// A fresh database migrated by concurrent stores ends up the same.
	other := newEnvNoMigrate(t)
	for range 3 {
		go func() { errs <- other.s.Migrate(ctx) }()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	got, err := other.s.AppliedMigrations(ctx)
	require.NoError(t, err)
	require.Equal(t, applied, got)
}
