package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

func TestMigrationsEmbedded(t *testing.T) {
	names, err := pgstore.MigrationNames()
	require.NoError(t, err)
	require.Equal(t, []string{"0001_workspaces.sql", "0002_audit_notify.sql", "0003_running_limits.sql", "0004_reconcile_filter.sql"}, names)
}

// schemaObjects counts the public schema's relations, triggers, functions
// and types: a fingerprint that a repeated migration would change.
func schemaObjects(t *testing.T, e *env) int {
	t.Helper()
	var n int
	require.NoError(t, e.s.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public')
		+ (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal)
		+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public')
		+ (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'public')`).Scan(&n))
	return n
}

func schemaVersion(t *testing.T, e *env) int {
	t.Helper()
	v, err := e.s.SchemaVersion(context.Background())
	require.NoError(t, err)
	return v
}

// TestMigrateIdempotent: Migrate again, also concurrently, changes
// nothing; a fresh database migrated by concurrent stores ends up the same.
func TestMigrateIdempotent(t *testing.T) {
	e := newEnv(t) // migrated once
	ctx := context.Background()
	names, err := pgstore.MigrationNames()
	require.NoError(t, err)
	require.Equal(t, len(names), schemaVersion(t, e))
	objects := schemaObjects(t, e)

	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- e.s.Migrate(ctx) }()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, objects, schemaObjects(t, e))
	require.Equal(t, len(names), schemaVersion(t, e))

	other := newEnvNoMigrate(t)
	require.Zero(t, schemaVersion(t, other))
	for range 3 {
		go func() { errs <- other.s.Migrate(ctx) }()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	require.Equal(t, len(names), schemaVersion(t, other))
	require.Equal(t, objects, schemaObjects(t, other))
}

// TestMigrateUpgradesALegacyDatabase: a database converge's earlier,
// hand-written migrator brought to version 2 (its schema_migrations table,
// rows in use) is taken over by tern at version 2: only 0003 on run, the data
// stays, and the running-limit indexes follow the amended rule.
func TestMigrateUpgradesALegacyDatabase(t *testing.T) {
	e := newEnvNoMigrate(t)
	ctx := context.Background()
	legacy, err := pgx.Connect(ctx, e.dsn)
	require.NoError(t, err)
	defer legacy.Close(context.Background())
	// What the old migrator did: its table, then each file in its own
	// transaction with a row recording it.
	_, err = legacy.Exec(ctx, `CREATE TABLE schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
	require.NoError(t, err)
	for i, name := range []string{"0001_workspaces", "0002_audit_notify"} {
		sql, err := pgstore.MigrationSQL(name + ".sql")
		require.NoError(t, err)
		tx, err := legacy.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, sql)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, i+1, name)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
	}
	rows := e.insert(t, 2)

	require.NoError(t, e.s.Migrate(ctx), "0001 and 0002 are not run again (they would fail: their types exist)")
	names, err := pgstore.MigrationNames()
	require.NoError(t, err)
	require.Equal(t, len(names), schemaVersion(t, e))
	for _, w := range rows {
		require.Equal(t, w.ID, e.get(t, w.ID).ID, "the data survives the upgrade")
	}
	var def string
	require.NoError(t, e.s.Pool().QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'workspaces_user_running_idx'`).Scan(&def))
	require.True(t, strings.Contains(def, "desired_state"), "0003 ran: %s", def)

	// And the database is now like a fresh one.
	fresh := newEnv(t)
	// The same schema, plus the old schema_migrations: its table, primary
	// key index, row type and array type.
	require.Equal(t, schemaObjects(t, fresh)+4, schemaObjects(t, e))
	require.NoError(t, e.s.Migrate(ctx))
	require.Equal(t, len(names), schemaVersion(t, e))
	running, err := e.s.List(ctx, contracts.FilterRunning)
	require.NoError(t, err)
	require.Len(t, running, 2, "desired RUNNING rows count under the amended filter")
}
