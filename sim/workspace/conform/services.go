package conform

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/redis/go-redis/v9"

	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
)

// Services are the real services of a run: PostgreSQL (a server on which
// the run creates its database and its roles), Redis and MinIO. The same
// CONVERGE_*_DSN/URL/ENDPOINT variables as the tests name services a user
// already runs; the others are started as containers from the local
// images and stopped at the end.
type Services struct {
	PostgresDSN                    string
	RedisURL                       string
	S3Endpoint, S3Access, S3Secret string
	started                        *testenv.Services
}

// ServicesFromEnv reports the services the environment names, or nil
// when it does not name all three.
func ServicesFromEnv() *Services {
	s := &Services{
		PostgresDSN: os.Getenv(testenv.EnvPostgresDSN),
		RedisURL:    os.Getenv(testenv.EnvRedisURL),
		S3Endpoint:  os.Getenv(testenv.EnvMinioEndpoint),
		S3Access:    os.Getenv(testenv.EnvMinioAccessKey),
		S3Secret:    os.Getenv(testenv.EnvMinioSecretKey),
	}
	if s.PostgresDSN == "" || s.RedisURL == "" || s.S3Endpoint == "" {
		return nil
	}
	return s
}

// StartServices starts what the environment does not name.
func StartServices(ctx context.Context) (*Services, error) {
	if s := ServicesFromEnv(); s != nil {
		return s, nil
	}
	st, err := testenv.StartServices(ctx)
	if err != nil {
		return nil, err
	}
	s := &Services{PostgresDSN: st.DatabaseURL, RedisURL: st.RedisURL, S3Endpoint: st.S3Endpoint,
		S3Access: st.S3AccessKey, S3Secret: st.S3SecretKey, started: st}
	if v := os.Getenv(testenv.EnvPostgresDSN); v != "" {
		s.PostgresDSN = v
	}
	if v := os.Getenv(testenv.EnvRedisURL); v != "" {
		s.RedisURL = v
	}
	if v := os.Getenv(testenv.EnvMinioEndpoint); v != "" {
		s.S3Endpoint, s.S3Access, s.S3Secret = v, os.Getenv(testenv.EnvMinioAccessKey), os.Getenv(testenv.EnvMinioSecretKey)
	}
	return s, nil
}

// Close stops the services the run started.
func (s *Services) Close(ctx context.Context) error {
	if s.started == nil {
		return nil
	}
	return s.started.Close(ctx)
}

var runCounter atomic.Int64

// sandbox is one run's share of the services: its database (migrated to
// the canonical schema with the audit trigger), one login role per
// instance, its bucket, and the proxies in front of them.
type sandbox struct {
	name     string
	adminDSN string // the run's database, as the server's admin role
	server   string
	roles    []string
	bucket   string
	redis    *redis.Client
	s3       *minio.Client
	redisPx  *proxy
	s3Px     *proxy
	pgAddr   string
	store    *pgstore.Store
}

// sessionTable records, for every audit row, the login role of the
// session that wrote it, its backend and the wall-clock time: the run's
// own addition beside the canonical schema, so that a write is attributed
// to an instance whatever the implementation declares.
const sessionTable = `
CREATE TABLE conform_audit_session (
    seq   bigint PRIMARY KEY,
    login text NOT NULL,
    pid   int NOT NULL,
    wall  timestamptz NOT NULL
);
CREATE FUNCTION conform_audit_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO conform_audit_session VALUES (NEW.seq, session_user, pg_backend_pid(), clock_timestamp());
    RETURN NULL;
END
$$;
CREATE TRIGGER conform_audit_session AFTER INSERT ON workspace_audit
    FOR EACH ROW EXECUTE FUNCTION conform_audit_session();
`

func newSandbox(ctx context.Context, s *Services, instances int) (_ *sandbox, err error) {
	n := runCounter.Add(1)
	sb := &sandbox{name: fmt.Sprintf("conform_%d_%d", os.Getpid(), n), server: s.PostgresDSN}
	defer func() {
		if err != nil {
			sb.close(context.WithoutCancel(ctx))
		}
	}()
	admin, err := pgx.Connect(ctx, s.PostgresDSN)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{sb.name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	sb.adminDSN, err = withDatabase(s.PostgresDSN, sb.name)
	if err != nil {
		return nil, err
	}
	for i := range instances {
		role := fmt.Sprintf("%s_i%d", sb.name, i+1)
		if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD 'conform'", pgx.Identifier{role}.Sanitize())); err != nil {
			return nil, fmt.Errorf("create role: %w", err)
		}
		sb.roles = append(sb.roles, role)
	}
	sb.store, err = pgstore.Open(ctx, sb.adminDSN, runner.Clock{})
	if err != nil {
		return nil, err
	}
	if err := sb.store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("create the canonical schema: %w", err)
	}
	conn, err := pgx.Connect(ctx, sb.adminDSN)
	if err != nil {
		return nil, err
	}
	_, err = conn.Exec(ctx, sessionTable)
	_ = conn.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("install the session trail: %w", err)
	}
	u, err := url.Parse(s.PostgresDSN)
	if err != nil || u.Host == "" {
		return nil, errors.New("the PostgreSQL DSN must be a postgres:// URL")
	}
	sb.pgAddr = u.Host

	ropt, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	sb.redis = redis.NewClient(ropt)
	if sb.redisPx, err = newProxy("redis", ropt.Addr); err != nil {
		return nil, err
	}
	sb.bucket = strings.ReplaceAll(fmt.Sprintf("conform-%d-%d", os.Getpid(), n), "_", "-")
	sb.s3, err = minio.New(s.S3Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.S3Access, s.S3Secret, "")})
	if err != nil {
		return nil, err
	}
	if err := sb.s3.MakeBucket(ctx, sb.bucket, minio.MakeBucketOptions{}); err != nil {
		return nil, fmt.Errorf("create the bucket: %w", err)
	}
	if sb.s3Px, err = newProxy("s3", s.S3Endpoint); err != nil {
		return nil, err
	}
	return sb, nil
}

// instanceDSN is instance i's DSN: its own role, through its own proxy.
func (sb *sandbox) instanceDSN(i int, px *proxy) (string, error) {
	u, err := url.Parse(sb.adminDSN)
	if err != nil {
		return "", err
	}
	u.User = url.UserPassword(sb.roles[i], "conform")
	u.Host = px.Addr()
	return u.String(), nil
}

// instanceOf names the instance a login role belongs to ("" for none).
func (sb *sandbox) instanceOf(login string) string {
	for i, r := range sb.roles {
		if r == login {
			return fmt.Sprintf("conform-%d", i+1)
		}
	}
	return ""
}

func (sb *sandbox) close(ctx context.Context) {
	if sb.store != nil {
		sb.store.Close()
	}
	if sb.redisPx != nil {
		sb.redisPx.Close()
	}
	if sb.s3Px != nil {
		sb.s3Px.Close()
	}
	if sb.redis != nil {
		_ = sb.redis.Close()
	}
	if sb.s3 != nil && sb.bucket != "" {
		for o := range sb.s3.ListObjects(ctx, sb.bucket, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err == nil {
				_ = sb.s3.RemoveObject(ctx, sb.bucket, o.Key, minio.RemoveObjectOptions{})
			}
		}
		_ = sb.s3.RemoveBucket(ctx, sb.bucket)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, sb.server)
	if err != nil {
		return
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{sb.name}.Sanitize()+" WITH (FORCE)")
	for _, r := range sb.roles {
		_, _ = admin.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{r}.Sanitize())
	}
}

// withDatabase returns a postgres:// dsn with its database replaced.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("the PostgreSQL DSN must be a postgres:// URL")
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
