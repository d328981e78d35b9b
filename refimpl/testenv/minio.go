package testenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/testcontainers/testcontainers-go"
	tcminio "github.com/testcontainers/testcontainers-go/modules/minio"
)

const (
	minioAccessKey = "converge"
	minioSecretKey = "converge-secret"
)

// MinIO starts a MinIO server for t and returns its endpoint (host:port)
// and root credentials; the container is terminated when t ends. With
// CONVERGE_MINIO_ENDPOINT set it returns that endpoint with
// CONVERGE_MINIO_ACCESS_KEY and CONVERGE_MINIO_SECRET_KEY and starts
// nothing.
func MinIO(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	if v := os.Getenv(EnvMinioEndpoint); v != "" {
		return v, os.Getenv(EnvMinioAccessKey), os.Getenv(EnvMinioSecretKey)
	}
	needDocker(t, "minio")
	endpoint, ctr, err := startMinIO(context.Background(), t)
	if ctr != nil {
		t.Cleanup(func() { terminate(t, ctr) })
	}
	if err != nil {
		t.Fatalf("start minio: %v", err)
	}
	return endpoint, minioAccessKey, minioSecretKey
}

// startMinIO runs a MinIO container with the package's root credentials
// and waits until it serves S3 requests. t (nil outside tests) receives
// testcontainers' log.
func startMinIO(ctx context.Context, t testing.TB) (string, testcontainers.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	image, note := imageFor(ctx, minioService)
	if note != "" && t != nil {
		t.Log(note)
	}
	// The module runs "server /data" and waits on /minio/health/live.
	ctr, err := tcminio.Run(ctx, image,
		logger(t),
		labels(minioService),
		tcminio.WithUsername(minioAccessKey),
		tcminio.WithPassword(minioSecretKey),
	)
	if ctr == nil {
		return "", nil, fmt.Errorf("run %s: %w", image, err)
	}
	if err != nil {
		return "", ctr, fmt.Errorf("run %s: %w", image, err)
	}
	endpoint, err := ctr.ConnectionString(ctx)
	if err != nil {
		return "", ctr, fmt.Errorf("minio endpoint: %w", err)
	}
	// /minio/health/live, and even /minio/health/ready, can answer before
	// the server takes S3 requests ("Server not initialized yet"): wait
	// until a real request (ListBuckets) succeeds.
	if err := waitHTTP(ctx, "http://"+endpoint+"/minio/health/ready"); err != nil {
		return "", ctr, fmt.Errorf("minio not ready: %w", err)
	}
	if err := waitS3(ctx, endpoint, minioAccessKey, minioSecretKey); err != nil {
		return "", ctr, fmt.Errorf("minio not serving S3: %w", err)
	}
	return endpoint, ctr, nil
}

// waitS3 polls ListBuckets until it succeeds or ctx ends.
func waitS3(ctx context.Context, endpoint, access, secret string) error {
	cl, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	if err != nil {
		return err
	}
	for {
		_, err := cl.ListBuckets(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("list buckets: %w (last: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitHTTP polls url until it answers 200 or ctx ends.
func waitHTTP(ctx context.Context, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %v)", url, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
