package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLockKey serialises concurrent Migrate calls ("convmigr").
const migrateLockKey int64 = 0x636f6e766d696772

// Migration is one embedded schema migration.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in version order. A file is
// named NNNN_name.sql; versions are unique.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		b, err := migrationFS.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	return out, nil
}

// Migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction. It holds an advisory
// lock meanwhile, so concurrent callers apply each migration once; running
// it again changes nothing.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.migrate(ctx)
	return err
}

// AppliedMigrations returns the versions recorded in schema_migrations,
// in order.
func (s *Store) AppliedMigrations(ctx context.Context) ([]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", mapErr(err))
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", mapErr(err))
	}
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out, nil
}

// migrate is Migrate, returning the versions it applied.
func (s *Store) migrate(ctx context.Context) (applied []int, err error) {
	migs, err := Migrations()
	if err != nil {
		return nil, err
	}
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", mapErr(err))
	}
	defer pc.Release()
	conn := pc.Conn()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", mapErr(err))
	}
	defer func() {
		if _, uerr := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrateLockKey); uerr != nil {
			// Never hand a session holding the lock back to the pool.
			_ = conn.Close(context.Background())
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", mapErr(err))
	}
	for _, m := range migs {
		done, err := s.applyMigration(ctx, conn, m)
		if err != nil {
			return applied, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if done {
			applied = append(applied, m.Version)
			s.log.Info("migration applied", "version", m.Version, "name", m.Name)
		}
	}
	return applied, nil
}

// applyMigration runs m in a transaction unless it is recorded already.
func (s *Store) applyMigration(ctx context.Context, conn *pgx.Conn, m Migration) (applied bool, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, mapErr(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.Background())
		}
	}()
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM schema_migrations WHERE version = $1`, m.Version).Scan(&one)
	switch {
	case err == nil:
		return false, tx.Rollback(ctx)
	case !errors.Is(err, pgx.ErrNoRows):
		return false, mapErr(err)
	}
	// Without arguments pgx sends the file with the simple protocol, which
	// runs several statements.
	if _, err = tx.Exec(ctx, m.SQL); err != nil {
		return false, mapErr(err)
	}
	if _, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
		return false, mapErr(err)
	}
	if err = tx.Commit(ctx); err != nil {
		return false, mapErr(err)
	}
	return true, nil
}
