package pgstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// t0 is the tests' virtual start time.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

type env struct {
	s     *pgstore.Store
	dsn   string
	clock *wsfakes.Clock
	ids   *wsfakes.IDs
}

// newEnv opens a migrated store on a fresh database, on a virtual clock.
func newEnv(t testing.TB, opts ...pgstore.Option) *env {
	t.Helper()
	e := newEnvNoMigrate(t, opts...)
	require.NoError(t, e.s.Migrate(context.Background()))
	return e
}

// newEnvNoMigrate opens a store on a fresh, empty database.
func newEnvNoMigrate(t testing.TB, opts ...pgstore.Option) *env {
	t.Helper()
	dsn := testenv.PostgresDB(t)
	clock := wsfakes.NewClock(t0)
	opts = append([]pgstore.Option{pgstore.WithLogger(quietLogger(t))}, opts...)
	s, err := pgstore.Open(context.Background(), dsn, clock, opts...)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return &env{s: s, dsn: dsn, clock: clock, ids: wsfakes.NewIDs(7)}
}

// quietLogger sends the store's log to the test's log.
func quietLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// insert adds fresh default rows and returns them.
func (e *env) insert(t testing.TB, n int) []contracts.Workspace {
	t.Helper()
	out := make([]contracts.Workspace, n)
	for i := range out {
		id := e.ids.NewID()
		out[i] = contracts.NewWorkspace(id, "user-1", "ws", "img:1", e.clock.Now())
		require.NoError(t, e.s.Insert(context.Background(), apiWriter, out[i]))
	}
	return out
}

func (e *env) get(t testing.TB, id string) contracts.Workspace {
	t.Helper()
	w, err := e.s.Get(context.Background(), id)
	require.NoError(t, err)
	return w
}

var (
	apiWriter = contracts.Writer{Component: contracts.CompAPI, Instance: "api-1"}
	ttlWriter = contracts.Writer{Component: contracts.CompAPI, Instance: "api-1", OnBehalf: contracts.CompTTLManager}
)

func reconciler(epoch int64) contracts.Writer {
	return contracts.Writer{Component: contracts.CompStateReconciler, Instance: "c1", Epoch: epoch}
}

func health(epoch int64) contracts.Writer {
	return contracts.Writer{Component: contracts.CompHealthMonitor, Instance: "c1", Epoch: epoch}
}

// us truncates t to PostgreSQL's precision.
func us(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }
