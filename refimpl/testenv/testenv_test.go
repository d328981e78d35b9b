package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

func query(t *testing.T, dsn, sql string, args ...any) (out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer func() { _ = c.Close(ctx) }()
	require.NoError(t, c.QueryRow(ctx, sql, args...).Scan(&out))
	return out
}

func exec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer func() { _ = c.Close(ctx) }()
	_, err = c.Exec(ctx, sql)
	require.NoError(t, err)
}

func TestPostgres(t *testing.T) {
	dsn := Postgres(t)
	require.Equal(t, "ok", query(t, dsn, "SELECT 'ok'"))
}

// TestPostgresDBIsolated: each PostgresDB is a database of its own on the
// shared server.
func TestPostgresDBIsolated(t *testing.T) {
	a, b := PostgresDB(t), PostgresDB(t)
	require.NotEqual(t, a, b)
	dbA := query(t, a, "SELECT current_database()")
	dbB := query(t, b, "SELECT current_database()")
	require.NotEqual(t, dbA, dbB)
	exec(t, a, "CREATE TABLE only_in_a (x int)")
	require.Equal(t, "f", query(t, b, "SELECT (to_regclass('only_in_a') IS NOT NULL)::text")[:1])
	require.Equal(t, "t", query(t, a, "SELECT (to_regclass('only_in_a') IS NOT NULL)::text")[:1])
}

func TestRedis(t *testing.T) {
	u := Redis(t)
	require.NoError(t, waitPong(context.Background(), u))
}

func TestMinIO(t *testing.T) {
	endpoint, access, secret := MinIO(t)
	require.NotEmpty(t, access)
	require.NotEmpty(t, secret)
	resp, err := http.Get("http://" + endpoint + "/minio/health/live")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestEnvOverridesStartNothing(t *testing.T) {
	t.Setenv(EnvPostgresDSN, "postgres://u:p@db.example:5432/x")
	t.Setenv(EnvRedisURL, "redis://cache.example:6379")
	t.Setenv(EnvMinioEndpoint, "objects.example:9000")
	t.Setenv(EnvMinioAccessKey, "ak")
	t.Setenv(EnvMinioSecretKey, "sk")
	require.Equal(t, "postgres://u:p@db.example:5432/x", Postgres(t))
	require.Equal(t, "redis://cache.example:6379", Redis(t))
	e, a, s := MinIO(t)
	require.Equal(t, []string{"objects.example:9000", "ak", "sk"}, []string{e, a, s})
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://u:p@h:5432/postgres?sslmode=disable", "test_1")
	require.NoError(t, err)
	require.Equal(t, "postgres://u:p@h:5432/test_1?sslmode=disable", got)
	got, err = withDatabase("host=h user=u dbname=postgres", "test_2")
	require.NoError(t, err)
	require.Equal(t, "host=h user=u dbname=postgres dbname=test_2", got)
	cfg, err := pgx.ParseConfig(got)
	require.NoError(t, err)
	require.Equal(t, "test_2", cfg.Database)
}

// recordingTB captures how skipOrFail ends a test.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestNoDockerSkipsOrFails(t *testing.T) {
	cause := errors.New("dial unix /var/run/docker.sock: no such file")

	t.Setenv(EnvRequireReal, "")
	r := &recordingTB{}
	skipOrFail(r, "postgres", cause)
	require.Empty(t, r.failed)
	require.Contains(t, r.skipped, "no Docker engine: real tier skipped")
	require.Contains(t, r.skipped, "postgres")

	t.Setenv(EnvRequireReal, "1")
	r = &recordingTB{}
	skipOrFail(r, "postgres", cause)
	require.Empty(t, r.skipped)
	require.Contains(t, r.failed, EnvRequireReal+"=1")
	require.Contains(t, r.failed, "no Docker engine")
}

func TestSetupEnvKeepsCallerValues(t *testing.T) {
	// setupEnv has run (the tests above started containers or probed);
	// the variables hold its defaults unless the caller set them.
	setupEnv()
	v, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED")
	require.True(t, ok)
	require.NotEmpty(t, v)
	_, ok = os.LookupEnv("TESTCONTAINERS_HOST_OVERRIDE")
	require.True(t, ok)
}

// TestStartServicesFailsCleanly: a service that cannot start ends
// StartServices with an error and nothing left running, never a panic
// (the cleanup once closed the nil it had just returned).
func TestStartServicesFailsCleanly(t *testing.T) {
	needDocker(t, "StartServices")
	t.Setenv(EnvPostgresImage, "converge-test/absent-image:none")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := StartServices(ctx)
	require.Error(t, err)
	require.Nil(t, s)
}

// TestLocalImageHonoursPrefix: the local stand-in's name follows
// CONVERGE_IMAGE_PREFIX the way images/build.sh and images/env.sh read it.
func TestLocalImageHonoursPrefix(t *testing.T) {
	t.Setenv(EnvImagePrefix, "")
	require.Equal(t, "converge/postgres:15", localImage(postgresService))
	require.Equal(t, "converge/minio:latest", localImage(minioService))
	t.Setenv(EnvImagePrefix, "fresh-test/")
	require.Equal(t, "fresh-test/redis:7", localImage(redisService))
}
