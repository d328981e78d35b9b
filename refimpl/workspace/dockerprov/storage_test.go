package dockerprov

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/refimpl/testenv"
)

const testBucket = "converge-archives"

// s3Env is one MinIO server shared by the subtests of a test.
type s3Env struct {
	tp  *testProvider
	mc  *minio.Client
	cfg S3
}

// newS3Env starts MinIO (testenv) and a provider whose storage jobs run on
// the host network, so the endpoint MinIO publishes on the host reaches it
// from inside the job container as it is.
func newS3Env(t *testing.T) *s3Env {
	t.Helper()
	if testing.Short() {
		t.Skip("real tier (Docker, MinIO): skipped with -short")
	}
	endpoint, access, secret := testenv.MinIO(t)
	mc, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	require.NoError(t, err)
	ctx := ctxFor(t, time.Minute)
	exists, err := mc.BucketExists(ctx, testBucket)
	require.NoError(t, err)
	if !exists {
		require.NoError(t, mc.MakeBucket(ctx, testBucket, minio.MakeBucketOptions{}))
	}
	cfg := S3{Endpoint: endpoint, AccessKey: access, SecretKey: secret, Bucket: testBucket}
	tp := newProvider(t, func(c *Config) {
		c.S3 = cfg
		c.JobNetwork = "host"
	})
	return &s3Env{tp: tp, mc: mc, cfg: cfg}
}

func (e *s3Env) object(t *testing.T, key string) ([]byte, bool) {
	t.Helper()
	obj, err := e.mc.GetObject(t.Context(), testBucket, key, minio.GetObjectOptions{})
	require.NoError(t, err)
	defer func() { _ = obj.Close() }()
	data, err := io.ReadAll(obj)
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return nil, false
	}
	require.NoError(t, err)
	return data, true
}

func (e *s3Env) put(t *testing.T, key string, data []byte) {
	t.Helper()
	_, err := e.mc.PutObject(t.Context(), testBucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	require.NoError(t, err)
}

// TestArchiveAndRestore runs the storage job against MinIO.
func TestArchiveAndRestore(t *testing.T) {
	e := newS3Env(t)
	tp := e.tp

	t.Run("round trip byte for byte", func(t *testing.T) {
		ctx := ctxFor(t, 3*time.Minute)
		id, opID := newID(t), "op-"+randomHex(t, 4)
		require.NoError(t, tp.Provision(ctx, id))
		want := map[string][]byte{
			"notes.txt":            []byte("hello\n"),
			"projects/app/main.go": []byte("package main\n"),
			"bin/blob":             bytes.Repeat([]byte{0, 1, 2, 3, 254, 255}, 50_000),
			"empty":                {},
		}
		for p, b := range want {
			require.NoError(t, tp.WriteFile(ctx, id, p, b))
		}
		got, err := tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got)

		key, err := tp.Archive(ctx, id, opID)
		require.NoError(t, err)
		require.Equal(t, contracts.ArchiveKey(id, opID), key)
		data, ok := e.object(t, key)
		require.True(t, ok, "archive uploaded")
		meta, ok := e.object(t, contracts.MetaKey(key))
		require.True(t, ok, ".meta uploaded")
		require.NoError(t, archive.VerifyMeta(data, meta))
		files, err := archive.Unpack(data)
		require.NoError(t, err)
		require.Equal(t, want, files, "the archive holds the volume")

		// Same op_id: same key, nothing uploaded again even if the volume
		// changed meanwhile.
		require.NoError(t, tp.WriteFile(ctx, id, "later.txt", []byte("after the archive")))
		again, err := tp.Archive(ctx, id, opID)
		require.NoError(t, err)
		require.Equal(t, key, again)
		data2, _ := e.object(t, key)
		require.Equal(t, data, data2, "a complete archive is not uploaded again")

		require.NoError(t, tp.DeleteVolume(ctx, id), "the job container is gone, so is every claim on the volume")
		require.False(t, tp.volumeExists(t, id))
		require.NoError(t, tp.Provision(ctx, id))
		got, err = tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Empty(t, got, "a new volume is empty")

		marker, err := tp.Restore(ctx, id, key)
		require.NoError(t, err)
		require.Equal(t, key, marker)
		got, err = tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got, "restored byte for byte")

		// Restoring over a changed volume makes it equal to the archive.
		require.NoError(t, tp.WriteFile(ctx, id, "extra/file", []byte("not in the archive")))
		_, err = tp.Restore(ctx, id, key)
		require.NoError(t, err)
		got, err = tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got, "extra files are removed")

		// The workspace can use the restored home.
		require.NoError(t, tp.Start(ctx, id, agentImage()))
		addr, err := tp.Endpoint(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want["projects/app/main.go"], agentGet(t, addr, "projects/app/main.go"))
		agentPut(t, addr, "projects/app/new.txt", []byte("the home is writable after a restore"))

		_, err = tp.Archive(ctx, id, "op-while-running")
		requireCode(t, err, contracts.CodeVolumeInUse)
		_, err = tp.Restore(ctx, id, key)
		requireCode(t, err, contracts.CodeVolumeInUse)
		_, ok = e.object(t, contracts.ArchiveKey(id, "op-while-running"))
		require.False(t, ok, "no job ran while the workspace ran")
	})

	t.Run("missing archive", func(t *testing.T) {
		ctx := ctxFor(t, 2*time.Minute)
		id := newID(t)
		require.NoError(t, tp.Provision(ctx, id))
		key := contracts.ArchiveKey(id, "never-archived")
		_, err := tp.Restore(ctx, id, key)
		pe := requireCode(t, err, contracts.CodeArchiveNotFound)
		require.Equal(t, key, pe.Context["archive_key"])

		_, err = tp.Restore(ctx, id, "not/an/archive/key")
		requireCode(t, err, contracts.CodeArchiveNotFound)
	})

	t.Run("missing meta", func(t *testing.T) {
		ctx := ctxFor(t, 2*time.Minute)
		id := newID(t)
		require.NoError(t, tp.Provision(ctx, id))
		key := contracts.ArchiveKey(id, "no-meta")
		data, err := archive.Pack(map[string][]byte{"f": []byte("x")})
		require.NoError(t, err)
		e.put(t, key, data)
		_, err = tp.Restore(ctx, id, key)
		requireCode(t, err, contracts.CodeMetaNotFound)
	})

	t.Run("corrupted archive", func(t *testing.T) {
		ctx := ctxFor(t, 2*time.Minute)
		id, opID := newID(t), "op-corrupt"
		require.NoError(t, tp.Provision(ctx, id))
		require.NoError(t, tp.WriteFile(ctx, id, "precious.txt", []byte("the original")))
		key, err := tp.Archive(ctx, id, opID)
		require.NoError(t, err)

		other, err := archive.Pack(map[string][]byte{"precious.txt": []byte("something else")})
		require.NoError(t, err)
		e.put(t, key, other)
		require.NoError(t, tp.WriteFile(ctx, id, "precious.txt", []byte("current")))

		_, err = tp.Restore(ctx, id, key)
		pe := requireCode(t, err, contracts.CodeChecksumMismatch)
		require.Equal(t, key, pe.Context["archive_key"])
		reason, terminal := contracts.Classify(pe.Code)
		require.Equal(t, contracts.ReasonDataLost, reason)
		require.True(t, terminal)
		got, err := tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, map[string][]byte{"precious.txt": []byte("current")}, got, "a failed restore leaves the volume alone")
	})

	t.Run("decompression bomb", func(t *testing.T) {
		ctx := ctxFor(t, 2*time.Minute)
		id := newID(t)
		require.NoError(t, tp.Provision(ctx, id))
		require.NoError(t, tp.WriteFile(ctx, id, "precious.txt", []byte("current")))
		bomb, err := os.ReadFile("../../../contracts/archive/testdata/sparse-bomb-20GiB.tar.zst")
		require.NoError(t, err)
		key := contracts.ArchiveKey(id, "op-bomb")
		e.put(t, key, bomb)
		e.put(t, contracts.MetaKey(key), []byte(archive.Checksum(bomb))) // a valid, original-format .meta
		_, err = tp.Restore(ctx, id, key)
		requireCode(t, err, contracts.CodeTarExtractFailed)
		got, err := tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, map[string][]byte{"precious.txt": []byte("current")}, got, "nothing of the 20 GiB was written")
	})

	t.Run("over the restore quota", func(t *testing.T) {
		ctx := ctxFor(t, 2*time.Minute)
		id := newID(t)
		require.NoError(t, tp.Provision(ctx, id))
		require.NoError(t, tp.WriteFile(ctx, id, "big.bin", bytes.Repeat([]byte("x"), 4096)))
		key, err := tp.Archive(ctx, id, "op-quota")
		require.NoError(t, err)
		require.NoError(t, tp.WriteFile(ctx, id, "big.bin", []byte("current")))
		// The same deployment (its managed value) with a smaller quota.
		small := newProvider(t, func(c *Config) {
			c.S3, c.JobNetwork = e.cfg, "host"
			c.RestoreMaxBytes = 1024
			c.ManagedValue = tp.cfg.ManagedValue
		})
		_, err = small.Restore(ctx, id, key)
		pe := requireCode(t, err, contracts.CodeDiskFull)
		reason, terminal := contracts.Classify(pe.Code)
		require.Equal(t, contracts.ReasonActionFailed, reason)
		require.True(t, terminal, "an administrator decides")
		got, err := tp.ReadFiles(ctx, id)
		require.NoError(t, err)
		require.Equal(t, map[string][]byte{"big.bin": []byte("current")}, got)
		_, err = tp.Restore(ctx, id, key)
		require.NoError(t, err, "within the default quota it restores")
	})

	t.Run("missing volume", func(t *testing.T) {
		ctx := ctxFor(t, time.Minute)
		id := newID(t)
		_, err := tp.Archive(ctx, id, "op")
		requireCode(t, err, contracts.CodeVolumeNotFound)
		_, err = tp.Restore(ctx, id, contracts.ArchiveKey(id, "op"))
		requireCode(t, err, contracts.CodeVolumeNotFound)
		_, err = tp.Restore(ctx, id, "garbage")
		requireCode(t, err, contracts.CodeVolumeNotFound)
		require.False(t, tp.volumeExists(t, id), "no job created the volume")
	})
}

// TestJobTimeout: a job that outlives JobTimeout is killed and removed,
// and the failure is a retried one. The job has no network, so its first
// S3 call fails and it sleeps 5 s before retrying: longer than the limit.
func TestJobTimeout(t *testing.T) {
	tp := newProvider(t, func(c *Config) {
		c.S3 = S3{Endpoint: "127.0.0.1:9", AccessKey: "k", SecretKey: "secret", Bucket: testBucket}
		c.JobNetwork = "none"
		c.JobTimeout = 1500 * time.Millisecond
	})
	ctx := ctxFor(t, time.Minute)
	id := newID(t)
	require.NoError(t, tp.Provision(ctx, id))

	start := time.Now()
	_, err := tp.Archive(ctx, id, "op")
	pe := requireCode(t, err, CodeStorageJobFailed)
	require.Less(t, time.Since(start), 4*time.Second, "the job was not waited for")
	require.Equal(t, 1.5, pe.Context["timeout_seconds"])
	reason, terminal := contracts.Classify(pe.Code)
	require.Equal(t, contracts.ReasonActionFailed, reason)
	require.False(t, terminal)

	_, err = tp.cli.ContainerInspect(ctx, jobName(id), client.ContainerInspectOptions{})
	require.True(t, cerrdefs.IsNotFound(err), "the job container is removed: %v", err)
	require.NoError(t, tp.DeleteVolume(ctx, id), "nothing holds the volume any more")
}

// TestProvisionRefusesForeignVolume: a volume of the right name that the
// provider did not label would be invisible to ListVolumes; Provision says
// so instead of succeeding.
func TestProvisionRefusesForeignVolume(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, time.Minute)
	id := newID(t)
	tp.foreignVolume(t, ctx, id)

	requireCode(t, tp.Provision(ctx, id), contracts.CodeVolumeCreateFailed)
	vols, err := tp.ListVolumes(ctx)
	require.NoError(t, err)
	require.Empty(t, vols)
}
