package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

// The schema's migrations, NNNN_name.sql, run in order by jackc/tern's
// migrate package (pgx-native; each migration in its own transaction, its
// version in the one-row table schema_version).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// versionTable is tern's record of the schema version.
const versionTable = "schema_version"

// legacyTable is where converge's own migrator (before tern) recorded the
// migrations it applied, one row per version. A database it migrated is
// adopted: its version becomes tern's starting point.
const legacyTable = "schema_migrations"

// migrateLockKey serialises concurrent Migrate calls ("convmigr"), around
// the adoption of a legacy database as well as tern's own run.
const migrateLockKey int64 = 0x636f6e766d696772

// MigrationNames returns the embedded migrations' file names in order.
func MigrationNames() ([]string, error) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	names, err := migrate.FindMigrations(sub)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	return names, nil
}

// Migrate brings the schema to the newest embedded migration. Running it
// again, or from several processes at once, changes nothing more; a
// database migrated by an earlier converge (schema_migrations) is taken
// over at the version it reached.
func (s *Store) Migrate(ctx context.Context) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	defer pc.Release()
	conn := pc.Conn()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("migrate: lock: %w", mapErr(err))
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey); err != nil {
			// Never hand a session holding the lock back to the pool.
			_ = conn.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := adoptLegacy(ctx, conn); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	m, err := migrate.NewMigrator(ctx, conn, versionTable)
	if err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("migrate: load: %w", err)
	}
	m.OnStart = func(seq int32, name, _, _ string) {
		s.log.Info("applying migration", "version", seq, "name", name)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	return nil
}

// adoptLegacy gives a database migrated by converge's earlier migrator a
// tern version table at the version it reached (the highest it recorded),
// so tern runs only what came after. A fresh database, or one tern already
// manages, is left alone.
func adoptLegacy(ctx context.Context, conn *pgx.Conn) error {
	var legacy, tern bool
	err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`,
		legacyTable, versionTable).Scan(&legacy, &tern)
	if err != nil {
		return fmt.Errorf("look for a legacy schema: %w", mapErr(err))
	}
	if !legacy || tern {
		return nil
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return mapErr(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `CREATE TABLE `+versionTable+` (version int4 NOT NULL)`); err != nil {
		return fmt.Errorf("adopt %s: %w", legacyTable, mapErr(err))
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+versionTable+` (version)
		SELECT coalesce(max(version), 0) FROM `+legacyTable); err != nil {
		return fmt.Errorf("adopt %s: %w", legacyTable, mapErr(err))
	}
	return mapErr(tx.Commit(ctx))
}

// SchemaVersion is the schema version tern recorded (0: not migrated).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, versionTable).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", mapErr(err))
	}
	if !exists {
		return 0, nil
	}
	var v int32
	if err := s.pool.QueryRow(ctx, `SELECT version FROM `+versionTable).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", mapErr(err))
	}
	return int(v), nil
}

// MigrationSQL returns the text of the embedded migration file name.
func MigrationSQL(name string) (string, error) {
	b, err := migrationFS.ReadFile("migrations/" + name)
	if err != nil {
		return "", fmt.Errorf("read migration %s: %w", name, err)
	}
	return string(b), nil
}
