package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	pgUser     = "converge"
	pgPassword = "converge"
	pgDatabase = "converge"
)

// Postgres starts a PostgreSQL server for t and returns the DSN of its
// database; the container is terminated when t ends. With
// CONVERGE_POSTGRES_DSN set it returns that DSN and starts nothing (tests
// sharing it should prefer PostgresDB, which isolates them).
func Postgres(t testing.TB) (dsn string) {
	t.Helper()
	if v := os.Getenv(EnvPostgresDSN); v != "" {
		return v
	}
	needDocker(t, "postgres")
	dsn, ctr, err := startPostgres(context.Background(), t)
	t.Cleanup(func() { terminate(t, ctr) })
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	return dsn
}

// startPostgres runs a PostgreSQL container and waits until it answers
// queries. t (nil for the shared server) receives testcontainers' log.
func startPostgres(ctx context.Context, t testing.TB) (string, testcontainers.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	image, note := imageFor(ctx, postgresService)
	if note != "" && t != nil {
		t.Log(note)
	}
	ctr, err := tcpostgres.Run(ctx, image,
		logger(t),
		labels(postgresService),
		tcpostgres.WithUsername(pgUser),
		tcpostgres.WithPassword(pgPassword),
		tcpostgres.WithDatabase(pgDatabase),
		// A test server needs no durability: the module already runs it
		// with fsync=off, and initdb skips its final sync of the new
		// cluster, so a start does not queue behind a disk that other
		// containers and builds keep busy (a CI run once saw initdb sit in
		// that sync for minutes; docs/decisions/test-tiers.md, DR384).
		testcontainers.WithEnv(map[string]string{"POSTGRES_INITDB_ARGS": "--no-sync"}),
		// The official entrypoint logs "ready" twice (it restarts the
		// server after initialisation), a plain one once: wait for one
		// line and the listening port, then for a query to answer.
		testcontainers.WithWaitStrategyAndDeadline(startTimeout,
			wait.ForLog("database system is ready to accept connections").WithOccurrence(1),
			wait.ForListeningPort("5432/tcp"),
		),
	)
	if ctr == nil {
		return "", nil, fmt.Errorf("run %s: %w", image, err)
	}
	if err != nil {
		return "", ctr, fmt.Errorf("run %s: %w", image, err)
	}
	dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return "", ctr, fmt.Errorf("postgres connection string: %w", err)
	}
	if err := waitQuery(ctx, dsn); err != nil {
		return "", ctr, err
	}
	return dsn, ctr, nil
}

// waitQuery retries a connection and a query until one succeeds.
func waitQuery(ctx context.Context, dsn string) error {
	var last error
	for {
		c, err := pgx.Connect(ctx, dsn)
		if err == nil {
			var one int
			err = c.QueryRow(ctx, "SELECT 1").Scan(&one)
			_ = c.Close(ctx)
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres never answered: %w", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// shared is the PostgreSQL server of a test binary whose TestMain calls
// Run.
var shared struct {
	active atomic.Bool // Run is in effect

	once sync.Once
	dsn  string
	ctr  testcontainers.Container
	err  error
	skip error // no Docker engine

	n atomic.Int64 // databases created
}

// Run runs the tests of m with a shared PostgreSQL server for PostgresDB,
// terminates it, and returns m's exit code:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
func Run(m *testing.M) int {
	shared.active.Store(true)
	code := m.Run()
	if shared.ctr != nil {
		if err := testcontainers.TerminateContainer(shared.ctr); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: terminate shared postgres: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// serverDSN returns the DSN of a server PostgresDB may create databases
// on: CONVERGE_POSTGRES_DSN, the shared server under Run, or else a server
// started for t alone.
func serverDSN(t testing.TB) string {
	t.Helper()
	if v := os.Getenv(EnvPostgresDSN); v != "" {
		return v
	}
	if !shared.active.Load() {
		return Postgres(t)
	}
	shared.once.Do(func() {
		if err := dockerErr(); err != nil {
			shared.skip = err
			return
		}
		shared.dsn, shared.ctr, shared.err = startPostgres(context.Background(), nil)
	})
	switch {
	case shared.skip != nil:
		skipOrFail(t, "postgres", shared.skip)
	case shared.err != nil:
		t.Fatalf("start shared postgres: %v", shared.err)
	}
	return shared.dsn
}

// PostgresDB returns the DSN of a fresh, empty database for t, dropped when
// t ends. The server is the shared one under Run, CONVERGE_POSTGRES_DSN's,
// or a container started for t.
func PostgresDB(t testing.TB) (dsn string) {
	t.Helper()
	server := serverDSN(t)
	name := fmt.Sprintf("converge_test_%d_%d", os.Getpid(), shared.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to postgres server: %v", err)
	}
	defer func() { _ = admin.Close(context.Background()) }()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("drop database %s: connect: %v", name, err)
			return
		}
		defer func() { _ = c.Close(context.Background()) }()
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	dsn, err = withDatabase(server, name)
	if err != nil {
		t.Fatalf("database DSN: %v", err)
	}
	return dsn
}

// withDatabase returns dsn with its database replaced by name; dsn is a
// postgres:// URL or a keyword/value string.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %q: %w", redact(dsn), err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In keyword/value form a later keyword overrides an earlier one.
	return dsn + " dbname=" + name, nil
}

// redact hides a URL's password.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return u.Redacted()
}
