package dockerprov

import (
	"archive/tar"
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

func TestConfigDefaults(t *testing.T) {
	t.Setenv(EnvStorageJobImage, "")
	c, err := Config{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultStorageJobImage, c.StorageJobImage)
	require.Equal(t, "org.wsconverge.", c.LabelPrefix)
	require.Equal(t, "true", c.ManagedValue)
	require.Equal(t, 8080, c.AgentPort)
	require.Equal(t, "/healthz", c.HealthPath)
	require.Equal(t, "1000:1000", c.User)
	require.Equal(t, 300*time.Second, c.StartupTimeout)
	require.Equal(t, 30*time.Second, c.HealthTimeout)
	require.Equal(t, 1800*time.Second, c.JobTimeout)
	require.Equal(t, "127.0.0.1", c.healthHost())

	t.Setenv(EnvStorageJobImage, "example/job:1")
	c, err = Config{PublishIP: "0.0.0.0"}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, "example/job:1", c.StorageJobImage)
	require.Equal(t, "127.0.0.1", c.healthHost(), "an unspecified publish address is dialled on loopback")
}

func TestConfigRejectsNonsense(t *testing.T) {
	for name, c := range map[string]Config{
		"port":         {AgentPort: 70000},
		"health path":  {HealthPath: "healthz"},
		"publish ip":   {PublishIP: "localhost"},
		"user":         {User: "coder"},
		"user gid":     {User: "1000:"},
		"host network": {WorkspaceNetwork: "host"},
		"timeout":      {JobTimeout: -time.Second},
		"quota":        {RestoreMaxBytes: -1},
	} {
		_, err := c.withDefaults()
		require.Error(t, err, name)
	}
}

func TestJobEnvCarriesTheRestoreQuota(t *testing.T) {
	c, err := Config{S3: S3{Endpoint: "minio:9000", AccessKey: "a", SecretKey: "s", Bucket: "b"}}.withDefaults()
	require.NoError(t, err)
	p := &Provider{cfg: c}
	env := p.jobEnv(modeRestore, "archives/w/o/home.tar.zst")
	require.Contains(t, env, "ARCHIVE_URL=s3://b/archives/w/o/home.tar.zst")
	for _, kv := range env {
		require.NotContains(t, kv, "RESTORE_MAX", "the job's defaults unless set")
	}
	p.cfg.RestoreMaxBytes, p.cfg.RestoreMaxEntries = 1<<30, 5000
	env = p.jobEnv(modeRestore, "archives/w/o/home.tar.zst")
	require.Contains(t, env, "RESTORE_MAX_BYTES=1073741824")
	require.Contains(t, env, "RESTORE_MAX_ENTRIES=5000")
}

func TestJobErrorMapsExitStatusAndOutput(t *testing.T) {
	key := contracts.ArchiveKey("w1", "op1")
	require.Nil(t, jobError(modeArchive, key, 0, "archived 3 files\n", archive.CodeOfExit))

	for _, code := range []contracts.ErrorCode{
		contracts.CodeArchiveNotFound, contracts.CodeMetaNotFound, contracts.CodeChecksumMismatch,
		contracts.CodeS3AccessError, contracts.CodeTarExtractFailed, contracts.CodeDiskFull, contracts.CodeVolumeNotFound,
	} {
		status := archive.ExitCode(code)
		out := "error: something about " + string(code) + "\n" + string(code) + "\n"
		pe := jobError(modeRestore, key, status, out, archive.CodeOfExit)
		require.NotNil(t, pe)
		require.Equal(t, code, pe.Code)
		require.Contains(t, pe.Message, "something about "+string(code))
		reason, _ := contracts.Classify(code)
		if reason == contracts.ReasonDataLost {
			require.Equal(t, key, pe.Context["archive_key"])
		} else {
			require.Equal(t, modeRestore, pe.Context["action"])
			require.Equal(t, status, pe.Context["exit_code"])
			require.Equal(t, string(code), pe.Context["last_line"])
		}
	}

	pe := jobError(modeArchive, key, archive.ExitUsage, "error: invalid settings: S3_ENDPOINT: missing\nUSAGE\n", archive.CodeOfExit)
	require.Equal(t, CodeStorageJobFailed, pe.Code)
	require.Contains(t, pe.Message, "S3_ENDPOINT: missing")
	reason, terminal := contracts.Classify(pe.Code)
	require.Equal(t, contracts.ReasonActionFailed, reason)
	require.False(t, terminal, "a job failure without a code is retried")

	pe = jobError(modeArchive, key, 137, "", archive.CodeOfExit)
	require.Equal(t, CodeStorageJobFailed, pe.Code)
	require.Contains(t, pe.Message, "status 137: no output")
}

func TestFailClassifiesErrors(t *testing.T) {
	ctx := context.Background()
	refused := cerrdefs.ErrInvalidArgument.WithMessage("bad mount")
	pe := fail(ctx, contracts.CodeContainerCreate, refused, "create %s", "ws-x")
	require.Equal(t, contracts.CodeContainerCreate, pe.Code)
	require.Contains(t, pe.Message, "create ws-x: bad mount")

	pe = fail(ctx, contracts.CodeContainerCreate, cerrdefs.ErrUnavailable.WithMessage("busy"), "create")
	require.Equal(t, contracts.CodeDockerUnreachable, pe.Code)
	require.Equal(t, "docker", pe.Context["endpoint"])

	tctx, cancel := withTimeout(ctx, contracts.CodeContainerStartFailed, "start of ws-x", time.Nanosecond)
	defer cancel()
	<-tctx.Done()
	pe = fail(tctx, contracts.CodeContainerCreate, tctx.Err(), "create")
	require.Equal(t, contracts.CodeContainerStartFailed, pe.Code, "running out of our own time is the limit's code, whatever the step")
	require.Contains(t, pe.Message, "start of ws-x timed out")
	require.Equal(t, time.Nanosecond.Seconds(), pe.Context["timeout_seconds"])

	cctx, cancel2 := context.WithCancel(ctx)
	cancel2()
	pe = fail(cctx, contracts.CodeContainerStartFailed, cctx.Err(), "wait")
	require.Equal(t, contracts.CodeDockerUnreachable, pe.Code, "a caller that gave up is not the operation's failure")
}

// TestUnreachableDaemon points a provider at a socket nobody listens on:
// every call is DOCKER_UNREACHABLE, and nothing is read as absent.
func TestUnreachableDaemon(t *testing.T) {
	sock := "unix://" + filepath.Join(t.TempDir(), "docker.sock")
	_, err := New(t.Context(), Config{DockerHost: sock})
	require.Error(t, err, "New checks the daemon answers")

	cfg, err := Config{DockerHost: sock, Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	require.NoError(t, err)
	cli, err := client.New(client.WithHost(sock))
	require.NoError(t, err)
	p := &Provider{cfg: cfg, cli: cli, log: cfg.Logger}
	ctx := t.Context()

	_, err = p.List(ctx)
	requireCode(t, err, contracts.CodeDockerUnreachable)
	_, err = p.ListVolumes(ctx)
	requireCode(t, err, contracts.CodeDockerUnreachable)
	requireCode(t, p.Start(ctx, "w1", "img"), contracts.CodeDockerUnreachable)
	requireCode(t, p.Delete(ctx, "w1"), contracts.CodeDockerUnreachable)
	requireCode(t, p.Provision(ctx, "w1"), contracts.CodeDockerUnreachable)
	requireCode(t, p.DeleteVolume(ctx, "w1"), contracts.CodeDockerUnreachable)
	_, err = p.Archive(ctx, "w1", "op1")
	requireCode(t, err, contracts.CodeDockerUnreachable)
	_, err = p.Restore(ctx, "w1", contracts.ArchiveKey("w1", "op1"))
	requireCode(t, err, contracts.CodeDockerUnreachable)
}

func TestFileTarRoundTrip(t *testing.T) {
	cfg, err := Config{User: "1234:5678"}.withDefaults()
	require.NoError(t, err)
	p := &Provider{cfg: cfg}
	data, err := p.fileTar("a/b/c.txt", []byte("deep"))
	require.NoError(t, err)

	tr := tar.NewReader(bytes.NewReader(data))
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
		require.Equal(t, 1234, hdr.Uid, hdr.Name)
		require.Equal(t, 5678, hdr.Gid, hdr.Name)
	}
	require.Equal(t, []string{"a/", "a/b/", "a/b/c.txt"}, names)

	files, err := readTar(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"a/b/c.txt": []byte("deep")}, files)
}

func TestReadTarTakesDockerRelativeNames(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(hdr *tar.Header, body string) {
		hdr.Size = int64(len(body))
		require.NoError(t, tw.WriteHeader(hdr))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	write(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755}, "")
	write(&tar.Header{Typeflag: tar.TypeReg, Name: "./notes.txt", Mode: 0o644}, "hello")
	write(&tar.Header{Typeflag: tar.TypeDir, Name: "./d/", Mode: 0o755}, "")
	write(&tar.Header{Typeflag: tar.TypeReg, Name: "./d/x", Mode: 0o644}, "")
	write(&tar.Header{Typeflag: tar.TypeSymlink, Name: "./link", Linkname: "notes.txt"}, "")
	require.NoError(t, tw.Close())

	files, err := readTar(&buf)
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"notes.txt": []byte("hello"), "d/x": {}}, files)

	buf.Reset()
	tw = tar.NewWriter(&buf)
	write(&tar.Header{Typeflag: tar.TypeReg, Name: "../escape", Mode: 0o644}, "x")
	require.NoError(t, tw.Close())
	_, err = readTar(&buf)
	require.ErrorContains(t, err, "unexpected entry")
}
