package testenv

import (
	"context"
	"errors"
	"fmt"

	"github.com/testcontainers/testcontainers-go"
)

// Services are PostgreSQL, Redis and MinIO started as containers outside
// any test (converge serve --dev): the same images and waits as the tests
// use, the local images when there is no registry.
type Services struct {
	DatabaseURL string
	RedisURL    string
	// S3Endpoint is host:port; the bucket is the caller's to create.
	S3Endpoint  string
	S3AccessKey string
	S3SecretKey string

	ctrs []testcontainers.Container
}

// StartServices starts the three services, or none: on an error, what was
// started is terminated. Close terminates them.
func StartServices(ctx context.Context) (s *Services, err error) {
	if err := dockerErr(); err != nil {
		return nil, fmt.Errorf("no Docker engine answers: %w", err)
	}
	// started is what to terminate on an error: the named result is nil
	// by then (every error path returns nil), and terminating through it
	// panicked and left the containers started so far running.
	started := &Services{}
	s = started
	defer func() {
		if err != nil {
			_ = started.Close(context.WithoutCancel(ctx))
		}
	}()
	keep := func(c testcontainers.Container) {
		if c != nil {
			started.ctrs = append(started.ctrs, c)
		}
	}
	dsn, pg, err := startPostgres(ctx, nil)
	keep(pg)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s.DatabaseURL = dsn
	redisURL, rd, err := startRedis(ctx, nil)
	keep(rd)
	if err != nil {
		return nil, fmt.Errorf("start redis: %w", err)
	}
	s.RedisURL = redisURL
	endpoint, mn, err := startMinIO(ctx, nil)
	keep(mn)
	if err != nil {
		return nil, fmt.Errorf("start minio: %w", err)
	}
	s.S3Endpoint, s.S3AccessKey, s.S3SecretKey = endpoint, minioAccessKey, minioSecretKey
	return s, nil
}

// Close terminates the services' containers.
func (s *Services) Close(ctx context.Context) error {
	var errs []error
	for i := len(s.ctrs) - 1; i >= 0; i-- {
		if err := testcontainers.TerminateContainer(s.ctrs[i], testcontainers.StopContext(ctx)); err != nil {
			errs = append(errs, err)
		}
	}
	s.ctrs = nil
	return errors.Join(errs...)
}

// DockerErr reports why no Docker engine answers, or nil.
func DockerErr() error { return dockerErr() }
