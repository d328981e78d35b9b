package testenv

import (
	"context"
	"os"
	"testing"

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
	return endpoint, ctr.Username, ctr.Password
}
