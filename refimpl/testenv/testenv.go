package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Environment variables read by the package.
const (
	// EnvRequireReal: "1" turns every skip for a missing Docker engine into
	// a failure (CI sets it).
	EnvRequireReal = "CONVERGE_REQUIRE_REAL"

	EnvPostgresImage = "CONVERGE_POSTGRES_IMAGE"
	EnvRedisImage    = "CONVERGE_REDIS_IMAGE"
	EnvMinioImage    = "CONVERGE_MINIO_IMAGE"
	// EnvImagePrefix replaces "converge/" in the names of the images
	// images/build.sh makes (as build.sh and env.sh read it), so a second
	// set can be built and tested beside the first.
	EnvImagePrefix = "CONVERGE_IMAGE_PREFIX"

	// EnvPostgresDSN names an existing PostgreSQL server (a role allowed to
	// create databases, for PostgresDB).
	EnvPostgresDSN = "CONVERGE_POSTGRES_DSN"
	// EnvRedisURL names an existing Redis server (redis://host:port).
	EnvRedisURL = "CONVERGE_REDIS_URL"
	// EnvMinioEndpoint (host:port), EnvMinioAccessKey and EnvMinioSecretKey
	// name an existing MinIO server.
	EnvMinioEndpoint  = "CONVERGE_MINIO_ENDPOINT"
	EnvMinioAccessKey = "CONVERGE_MINIO_ACCESS_KEY"
	EnvMinioSecretKey = "CONVERGE_MINIO_SECRET_KEY"
)

// service describes one kind of container: the variable naming its image,
// the official image and the locally built stand-in (its name after the
// prefix, see localImage).
type service struct {
	name     string
	envImage string
	official string
	local    string
}

var (
	postgresService = service{"postgres", EnvPostgresImage, "postgres:15", "postgres:15"}
	redisService    = service{"redis", EnvRedisImage, "redis:7", "redis:7"}
	minioService    = service{"minio", EnvMinioImage, "minio/minio:latest", "minio:latest"}
)

// localImage names the image images/build.sh makes for s:
// $CONVERGE_IMAGE_PREFIX (default "converge/") followed by s.local.
func localImage(s service) string {
	prefix := os.Getenv(EnvImagePrefix)
	if prefix == "" {
		prefix = "converge/"
	}
	return prefix + s.local
}

// Label marks every container the package starts (on top of testcontainers'
// own org.testcontainers=true), so leftovers of a killed test binary can be
// found: docker ps -aq --filter label=org.wsconverge.testenv.
const Label = "org.wsconverge.testenv"

const (
	startTimeout = 2 * time.Minute
	probeTimeout = 10 * time.Second
)

var envOnce sync.Once

// setupEnv sets the testcontainers variables this machine needs, unless
// the caller set them. It runs before any testcontainers call.
func setupEnv() {
	envOnce.Do(func() {
		setDefault := func(k, v string) {
			if _, ok := os.LookupEnv(k); !ok {
				_ = os.Setenv(k, v)
			}
		}
		setDefault("TESTCONTAINERS_RYUK_DISABLED", "true")
		setDefault("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	})
}

// docker is the result of probing for a Docker engine, once per process.
var docker struct {
	once sync.Once
	err  error
}

// dockerErr reports why no Docker engine answers, or nil.
func dockerErr() error {
	docker.once.Do(func() {
		setupEnv()
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		docker.err = probeDocker(ctx)
		if docker.err == nil {
			// Containers of test processes that were killed (Ryuk is off)
			// would hold CPU and memory for the rest of the machine's life.
			if gone, err := Reap(ctx); len(gone) > 0 || err != nil {
				fmt.Fprintf(os.Stderr, "testenv: removed %d containers of ended test processes %v (%v)\n", len(gone), gone, err)
			}
		}
	})
	return docker.err
}

func probeDocker(ctx context.Context) (err error) {
	defer func() {
		// testcontainers panics on some broken configurations.
		if r := recover(); r != nil {
			err = fmt.Errorf("docker client: %v", r)
		}
	}()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close() // else its keep-alive connection to the engine outlives the probe
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("docker ping: %w", err)
	}
	return nil
}

// requireReal reports whether a missing service must fail the test.
func requireReal() bool { return os.Getenv(EnvRequireReal) == "1" }

// skipOrFail ends t when no Docker engine answers (cause says why): a
// skip that says the real tier was skipped, or a failure under
// CONVERGE_REQUIRE_REAL=1.
func skipOrFail(t testing.TB, what string, cause error) {
	t.Helper()
	if requireReal() {
		t.Fatalf("%s: no Docker engine: %v (and %s=1 requires the real tier)", what, cause, EnvRequireReal)
		return
	}
	t.Skipf("no Docker engine: real tier skipped (%s: %v)", what, cause)
}

// needDocker skips or fails t unless a Docker engine answers.
func needDocker(t testing.TB, what string) {
	t.Helper()
	if err := dockerErr(); err != nil {
		skipOrFail(t, what, err)
	}
}

// imageFor picks the image of s: the variable's, else the official one when
// it is present locally, else the local stand-in when that is present, else
// the official one (testcontainers will try to pull it). note explains a
// substitution.
func imageFor(ctx context.Context, s service) (image, note string) {
	if v := os.Getenv(s.envImage); v != "" {
		return v, ""
	}
	if imagePresent(ctx, s.official) {
		return s.official, ""
	}
	if local := localImage(s); imagePresent(ctx, local) {
		return local, fmt.Sprintf("%s unset and %s not present locally: using %s (images/build.sh)", s.envImage, s.official, local)
	}
	return s.official, ""
}

func imagePresent(ctx context.Context, ref string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false
	}
	defer cli.Close() // else its keep-alive connection to the engine outlives the look-up
	_, err = cli.ImageInspect(ctx, ref)
	return err == nil
}

// logger sends testcontainers' progress lines to t's log, or nowhere for
// the shared server (which outlives any one test).
func logger(t testing.TB) testcontainers.LoggerOption {
	if t == nil {
		return testcontainers.WithLogger(tclog.NewNoopLogger())
	}
	return testcontainers.WithLogger(tclog.TestLogger(t))
}

func labels(s service) testcontainers.CustomizeRequestOption {
	l := ownerLabels()
	l[Label] = s.name
	return testcontainers.WithLabels(l)
}

// terminate stops ctr, reporting a failure on t (when given).
func terminate(t testing.TB, ctr testcontainers.Container) {
	if ctr == nil {
		return
	}
	if err := testcontainers.TerminateContainer(ctr); err != nil && t != nil {
		t.Errorf("terminate container: %v", err)
	}
}
