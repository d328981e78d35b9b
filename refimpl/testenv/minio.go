package testenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	image, note := imageFor(ctx, minioService)
	if note != "" {
		t.Log(note)
	}
	// The module runs "server /data" and waits on /minio/health/live.
	ctr, err := tcminio.Run(ctx, image,
		logger(t),
		labels(minioService),
		tcminio.WithUsername(minioAccessKey),
		tcminio.WithPassword(minioSecretKey),
	)
	if ctr != nil {
		t.Cleanup(func() { terminate(t, ctr) })
	}
	if err != nil {
		t.Fatalf("start minio (%s): %v", image, err)
	}
	endpoint, err = ctr.ConnectionString(ctx)
	if err != nil {
		t.Fatalf("minio endpoint: %v", err)
	}
	// /minio/health/live answers before the server takes requests ("Server
	// not initialized yet"); /minio/health/ready answers once it does.
	if err := waitHTTP(ctx, "http://"+endpoint+"/minio/health/ready"); err != nil {
		t.Fatalf("minio not ready: %v", err)
	}
	return endpoint, ctr.Username, ctr.Password
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
			resp.Body.Close()
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
