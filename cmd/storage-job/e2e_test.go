package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

const (
	e2eAccessKey = "e2e-access"
	e2eSecretKey = "e2e-secret-key"
	e2eBucket    = "e2e-archives"
)

// startMinio runs the MinIO image (CONVERGE_MINIO_IMAGE, default
// converge/minio:latest) on a loopback port and returns its host:port.
func startMinio(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test against a MinIO container; skipped with -short")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed")
	}
	image := os.Getenv("CONVERGE_MINIO_IMAGE")
	if image == "" {
		image = "converge/minio:latest"
	}
	if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
		t.Skipf("image %s is missing (build it with images/build.sh minio): %v", image, err)
	}
	out, err := exec.Command("docker", "run", "-d", "-p", "127.0.0.1::9000",
		"-e", "MINIO_ROOT_USER="+e2eAccessKey, "-e", "MINIO_ROOT_PASSWORD="+e2eSecretKey,
		image, "server", "/data").Output()
	require.NoError(t, err, "docker run %s", image)
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	out, err = exec.Command("docker", "port", id, "9000/tcp").Output()
	require.NoError(t, err)
	addr := strings.TrimSpace(strings.Split(string(out), "\n")[0])
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/minio/health/live")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "minio never became live")

	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(e2eAccessKey, e2eSecretKey, "")})
	require.NoError(t, err)
	require.NoError(t, client.MakeBucket(t.Context(), e2eBucket, minio.MakeBucketOptions{}))
	return addr
}

type e2eRun struct {
	endpoint, url, secret string
	sleeps                *sleeps
}

func (e e2eRun) run(t *testing.T, mode, dataDir string) result {
	t.Helper()
	env := map[string]string{
		"JOB_MODE":      mode,
		"ARCHIVE_URL":   e.url,
		"S3_ENDPOINT":   e.endpoint,
		"S3_ACCESS_KEY": e2eAccessKey,
		"S3_SECRET_KEY": e.secret,
		"DATA_DIR":      dataDir,
		"TMPDIR":        t.TempDir(),
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	status := runWith(ctx, nil, env, &stdout, &stderr, deps{
		newStore: newS3Store,
		retry:    retryPolicy{delays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}, sleep: e.sleeps.sleep},
	})
	return result{status: status, stdout: stdout.String(), stderr: stderr.String()}
}

func TestEndToEndAgainstMinio(t *testing.T) {
	addr := startMinio(t)
	e := e2eRun{endpoint: addr, url: "s3://" + e2eBucket + "/archives/ws-e2e/op-1/home.tar.zst", secret: e2eSecretKey, sleeps: &sleeps{}}

	src := t.TempDir()
	writeTree(t, src, sampleTree)
	big := make([]byte, 20<<20) // incompressible, so the upload is multipart
	_, err := rand.Read(big)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644))

	res := e.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, "stdout %s\nstderr %s", res.stdout, res.stderr)
	require.Contains(t, res.lastLine(), "archived")

	res = e.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Contains(t, res.lastLine(), "skipped", "the second archive with the same op finds it committed")

	dst := t.TempDir()
	writeTree(t, dst, map[string]string{"stale/file": "old"})
	res = e.run(t, "restore", dst)
	require.Equal(t, archive.ExitOK, res.status, "stdout %s\nstderr %s", res.stdout, res.stderr)
	require.Equal(t, normalized(snapshot(t, src)), snapshot(t, dst))

	missing := e
	missing.url = "s3://" + e2eBucket + "/archives/ws-e2e/op-missing/home.tar.zst"
	res = missing.run(t, "restore", t.TempDir())
	require.Equal(t, archive.ExitCode(contracts.CodeArchiveNotFound), res.status, res.stdout)
	require.Equal(t, string(contracts.CodeArchiveNotFound), res.lastLine())

	wrong := e
	wrong.secret = "not-the-secret"
	wrong.sleeps = &sleeps{}
	res = wrong.run(t, "restore", t.TempDir())
	require.Equal(t, archive.ExitCode(contracts.CodeS3AccessError), res.status, res.stdout)
	require.Equal(t, string(contracts.CodeS3AccessError), res.lastLine())
	require.Empty(t, wrong.sleeps.all(), "bad credentials are not retried")

	// Nothing listens on this port: every attempt fails and is retried.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	down := e
	down.endpoint = closed
	down.sleeps = &sleeps{}
	res = down.run(t, "archive", src)
	require.Equal(t, archive.ExitCode(contracts.CodeS3AccessError), res.status, res.stdout)
	require.Len(t, down.sleeps.all(), 3, "three retries")
}
