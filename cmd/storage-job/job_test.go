package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

var sampleTree = map[string]string{
	"README.md":              "# hello\n",
	"project/main.go":        "package main\n",
	"project/build.sh":       "+x#!/bin/sh\necho hi\n",
	"project/empty-dir/":     "",
	"project/deep/a/b/c.txt": strings.Repeat("c", 100_000),
	"project/link":           "->main.go",
	".config/app.toml":       "k = 1\n",
	"zero":                   "",
}

// normalized is what a tree becomes once archived: directories 0755, files
// 0755 when executable else 0644.
func normalized(snap map[string]string) map[string]string {
	out := make(map[string]string, len(snap))
	for p, d := range snap {
		fields := strings.Fields(d)
		switch fields[0] {
		case "dir":
			d = "dir 755"
		case "file":
			perm, _ := strconv.ParseUint(fields[1], 8, 32)
			mode := "644"
			if perm&0o111 != 0 {
				mode = "755"
			}
			d = strings.Join(append([]string{"file", mode}, fields[2:]...), " ")
		}
		out[p] = d
	}
	return out
}

func TestArchiveThenRestoreRoundTrip(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, sampleTree)

	res := h.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, "stdout %s\nstderr %s", res.stdout, res.stderr)
	require.Contains(t, res.lastLine(), "archived ")
	require.Equal(t, []string{testKey, testKey + ".meta"}, h.store.callsOf("put"), ".meta is uploaded last")
	data := h.store.objects[testKey]
	sum := sha256.Sum256(data)
	meta, err := archive.ParseMeta(h.store.objects[testKey+".meta"])
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), meta.SHA256)
	require.True(t, strings.HasPrefix(string(h.store.objects[testKey+".meta"]), "sha256:"+meta.SHA256+"\n"),
		"the checksum line comes first, as in the original format")
	want, err := archive.MetaOf(data)
	require.NoError(t, err)
	require.Equal(t, want, meta, "the .meta declares what the archive unpacks to")
	require.NoError(t, archive.VerifyMeta(data, h.store.objects[testKey+".meta"]))

	// The restore target holds stale entries of every kind, some clashing.
	dst := t.TempDir()
	outside := t.TempDir()
	writeTree(t, dst, map[string]string{
		"README.md":              "old readme, longer than the new one\n",
		"stale.txt":              "remove me",
		"stale-dir/x/y.txt":      "remove me too",
		"project/main.go/":       "", // a directory where a file belongs
		"project/deep/":          "",
		"project/deep/a/old.txt": "gone",
		"project/link":           "main.go.old",
		"project/empty-dir":      "a file where a directory belongs",
		".config":                "->" + outside, // a link where a directory belongs
		"zero":                   "->/etc/passwd",
	})
	require.NoError(t, os.Chmod(filepath.Join(dst, "project", "deep"), 0o700))

	res = h.run(t, "restore", dst)
	require.Equal(t, archive.ExitOK, res.status, "stdout %s\nstderr %s", res.stdout, res.stderr)
	require.Contains(t, res.lastLine(), "restored ")
	require.Equal(t, normalized(snapshot(t, src)), snapshot(t, dst))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was written through the stale link")
	entries, err = os.ReadDir(h.tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "scratch files are removed")

	// Archiving the restored tree again gives the same bytes.
	h2 := newHarness(t)
	res = h2.run(t, "archive", dst)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Equal(t, data, h2.store.objects[testKey])
}

func TestRestoreIntoEmptyVolume(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	require.Equal(t, archive.ExitOK, h.run(t, "archive", src).status)
	dst := t.TempDir()
	res := h.run(t, "restore", dst)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Equal(t, normalized(snapshot(t, src)), snapshot(t, dst))
}

func TestArchiveOfEmptyVolumeRestoresEmpty(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, archive.ExitOK, h.run(t, "archive", t.TempDir()).status)
	dst := t.TempDir()
	writeTree(t, dst, map[string]string{"x/y": "z"})
	res := h.run(t, "restore", dst)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Empty(t, snapshot(t, dst))
}

func TestArchiveSkipsWhenArchiveAndMetaExist(t *testing.T) {
	h := newHarness(t)
	h.store.objects[testKey] = []byte("existing")
	h.store.objects[testKey+".meta"] = []byte("sha256:whatever")
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	res := h.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Contains(t, res.lastLine(), "skipped")
	require.Empty(t, h.store.callsOf("put"))
	require.Equal(t, "existing", string(h.store.objects[testKey]))
}

func TestArchiveRedoesAnUncommittedArchive(t *testing.T) {
	h := newHarness(t)
	h.store.objects[testKey] = []byte("half an upload")
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	res := h.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Equal(t, []string{testKey, testKey + ".meta"}, h.store.callsOf("put"))
	require.NoError(t, archive.VerifyMeta(h.store.objects[testKey], h.store.objects[testKey+".meta"]))
}

func TestArchiveRemovesLeftoverStaging(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "a", stagingPrefix + "123/junk": "junk"})
	require.Equal(t, archive.ExitOK, h.run(t, "archive", src).status)
	files, err := archive.Unpack(h.store.objects[testKey])
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"a.txt": []byte("a")}, files)
}

func TestRestoreFailures(t *testing.T) {
	good := func(t *testing.T) *harness {
		t.Helper()
		h := newHarness(t)
		src := t.TempDir()
		writeTree(t, src, sampleTree)
		require.Equal(t, archive.ExitOK, h.run(t, "archive", src).status)
		return h
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) *harness
		code  contracts.ErrorCode
	}{
		{"nothing uploaded", func(t *testing.T) *harness { return newHarness(t) }, contracts.CodeArchiveNotFound},
		{"meta only", func(t *testing.T) *harness {
			h := good(t)
			delete(h.store.objects, testKey)
			return h
		}, contracts.CodeArchiveNotFound},
		{"archive only", func(t *testing.T) *harness {
			h := good(t)
			delete(h.store.objects, testKey+".meta")
			return h
		}, contracts.CodeMetaNotFound},
		{"tampered archive", func(t *testing.T) *harness {
			h := good(t)
			h.store.objects[testKey][10] ^= 0xff
			return h
		}, contracts.CodeChecksumMismatch},
		{"malformed meta", func(t *testing.T) *harness {
			h := good(t)
			h.store.objects[testKey+".meta"] = []byte("md5:abc")
			return h
		}, contracts.CodeChecksumMismatch},
		{"unsafe entry", func(t *testing.T) *harness {
			h := newHarness(t)
			data := tarZst(t, &tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4}, "evil")
			h.store.objects[testKey] = data
			h.store.objects[testKey+".meta"] = []byte(archive.Checksum(data))
			return h
		}, contracts.CodeTarExtractFailed},
		{"device entry", func(t *testing.T) *harness {
			h := newHarness(t)
			data := tarZst(t, &tar.Header{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o644, Devmajor: 1, Devminor: 3}, "")
			h.store.objects[testKey] = data
			h.store.objects[testKey+".meta"] = []byte(archive.Checksum(data))
			return h
		}, contracts.CodeTarExtractFailed},
		{"sparse bomb (20 GiB in 212 bytes)", func(t *testing.T) *harness {
			h := newHarness(t)
			data, err := os.ReadFile("../../contracts/archive/testdata/sparse-bomb-20GiB.tar.zst")
			require.NoError(t, err)
			h.store.objects[testKey] = data
			h.store.objects[testKey+".meta"] = []byte(archive.Checksum(data)) // an original-format .meta
			return h
		}, contracts.CodeTarExtractFailed},
		{"archive holds more than its .meta declares", func(t *testing.T) *harness {
			h := good(t)
			meta, err := archive.ParseMeta(h.store.objects[testKey+".meta"])
			require.NoError(t, err)
			meta.Bytes -= 10
			h.store.objects[testKey+".meta"] = meta.Encode()
			return h
		}, contracts.CodeChecksumMismatch},
		{"archive holds fewer entries than its .meta declares", func(t *testing.T) *harness {
			h := good(t)
			meta, err := archive.ParseMeta(h.store.objects[testKey+".meta"])
			require.NoError(t, err)
			meta.Entries++
			h.store.objects[testKey+".meta"] = meta.Encode()
			return h
		}, contracts.CodeChecksumMismatch},
		{"over the restore quota", func(t *testing.T) *harness {
			h := good(t)
			h.env = map[string]string{"RESTORE_MAX_BYTES": "1000"}
			return h
		}, contracts.CodeDiskFull},
		{"over the entry quota", func(t *testing.T) *harness {
			h := good(t)
			h.env = map[string]string{"RESTORE_MAX_ENTRIES": "3"}
			return h
		}, contracts.CodeDiskFull},
		{"not zstd", func(t *testing.T) *harness {
			h := newHarness(t)
			data := []byte("this is not an archive")
			h.store.objects[testKey] = data
			h.store.objects[testKey+".meta"] = []byte(archive.Checksum(data))
			return h
		}, contracts.CodeChecksumMismatch},
		{"empty archive (0 bytes)", func(t *testing.T) *harness {
			h := newHarness(t)
			h.store.objects[testKey] = []byte{}
			h.store.objects[testKey+".meta"] = []byte(archive.Checksum(nil))
			return h
		}, contracts.CodeChecksumMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.setup(t)
			dst := t.TempDir()
			writeTree(t, dst, map[string]string{"keep.txt": "untouched", "d/e.txt": "e"})
			before := snapshot(t, dst)
			res := h.run(t, "restore", dst)
			require.Equal(t, archive.ExitCode(tc.code), res.status, "stdout %s", res.stdout)
			require.Equal(t, string(tc.code), res.lastLine())
			require.Contains(t, res.stdout, "error: ")
			require.Equal(t, before, snapshot(t, dst), "a failed restore leaves the volume as it was")
		})
	}
}

// tarZst packs one entry into a tar.zst, bypassing the archive package.
func tarZst(t *testing.T, hdr *tar.Header, content string) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	require.NoError(t, tw.WriteHeader(hdr))
	if content != "" {
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	return enc.EncodeAll(tb.Bytes(), nil)
}

func TestMissingDataDirIsVolumeNotFound(t *testing.T) {
	for _, mode := range []string{"archive", "restore"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(t, mode, filepath.Join(t.TempDir(), "absent"))
			require.Equal(t, archive.ExitCode(contracts.CodeVolumeNotFound), res.status)
			require.Equal(t, string(contracts.CodeVolumeNotFound), res.lastLine())
			require.Empty(t, h.store.calls, "no S3 call without a volume")
		})
	}
}

func transient(op, key string) error {
	return &storeError{op: op, key: key, transient: true, err: errors.New("connection reset by peer")}
}

func TestTransientErrorsAreRetried(t *testing.T) {
	h := newHarness(t)
	failures := 2
	h.store.fail = func(op, key string) error {
		if op == "put" && key == testKey && failures > 0 {
			failures--
			return transient(op, key)
		}
		return nil
	}
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	res := h.run(t, "archive", src)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Equal(t, []string{testKey, testKey, testKey, testKey + ".meta"}, h.store.callsOf("put"))
	require.Equal(t, testDelays[:2], h.sleeps.all())
	require.NoError(t, archive.VerifyMeta(h.store.objects[testKey], h.store.objects[testKey+".meta"]))
}

func TestRetriesRunOut(t *testing.T) {
	h := newHarness(t)
	h.store.fail = func(op, key string) error { return transient(op, key) }
	res := h.run(t, "restore", t.TempDir())
	require.Equal(t, archive.ExitCode(contracts.CodeS3AccessError), res.status)
	require.Equal(t, string(contracts.CodeS3AccessError), res.lastLine())
	require.Len(t, h.store.calls, 1+len(testDelays), "one attempt and three retries")
	require.Equal(t, testDelays, h.sleeps.all())
}

func TestPermanentErrorsAreNotRetried(t *testing.T) {
	h := newHarness(t)
	h.store.fail = func(op, key string) error {
		return &storeError{op: op, key: key, err: errors.New("InvalidAccessKeyId")}
	}
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	res := h.run(t, "archive", src)
	require.Equal(t, archive.ExitCode(contracts.CodeS3AccessError), res.status)
	require.Equal(t, string(contracts.CodeS3AccessError), res.lastLine())
	require.Len(t, h.store.calls, 1)
	require.Empty(t, h.sleeps.all())
}

func TestRetriedDownloadStartsOver(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	require.Equal(t, archive.ExitOK, h.run(t, "archive", src).status)
	// The first download of the archive delivers half the bytes, then fails.
	data := h.store.objects[testKey]
	failed := false
	h.store.fail = func(op, key string) error {
		if op == "get" && key == testKey && !failed {
			failed = true
			return &partialGet{data: data[:len(data)/2]}
		}
		return nil
	}
	dst := t.TempDir()
	res := h.run(t, "restore", dst)
	require.Equal(t, archive.ExitOK, res.status, res.stdout)
	require.Equal(t, normalized(snapshot(t, src)), snapshot(t, dst))
}

func TestUsageErrors(t *testing.T) {
	h := newHarness(t)
	var stdout, stderr bytes.Buffer
	status := runWith(t.Context(), nil, map[string]string{}, &stdout, &stderr, deps{
		newStore: func(config) (objectStore, error) { return h.store, nil },
		retry:    retryPolicy{sleep: h.sleeps.sleep},
	})
	require.Equal(t, archive.ExitUsage, status)
	out := stdout.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "USAGE", lines[len(lines)-1])
	for _, name := range []string{"JOB_MODE", "ARCHIVE_URL", "S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY"} {
		require.Contains(t, out, name)
	}
}

func TestCodeOfDiskFull(t *testing.T) {
	err := fmt.Errorf("pack: %w", &os.PathError{Op: "write", Path: "/tmp/x", Err: syscall.ENOSPC})
	code, ok := codeOf(withCode(contracts.CodeTarExtractFailed, err))
	require.True(t, ok)
	require.Equal(t, contracts.CodeDiskFull, code, "running out of space wins over the step's code")

	code, ok = codeOf(&storeError{op: "put", err: errors.New("x")})
	require.True(t, ok)
	require.Equal(t, contracts.CodeS3AccessError, code)

	_, ok = codeOf(errors.New("permission denied"))
	require.False(t, ok)
}

func TestCancelledJobFailsWithoutCode(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	h.store.fail = func(op, key string) error {
		cancel()
		return &storeError{op: op, key: key, err: context.Canceled}
	}
	var stdout, stderr bytes.Buffer
	status := runWith(ctx, []string{"archive"}, map[string]string{
		"ARCHIVE_URL": testURL, "S3_ENDPOINT": "s3.test:9000", "S3_ACCESS_KEY": "k", "S3_SECRET_KEY": "s",
		"DATA_DIR": t.TempDir(), "TMPDIR": h.tmp,
	}, &stdout, &stderr, deps{
		newStore: func(config) (objectStore, error) { return h.store, nil },
		retry:    retryPolicy{delays: testDelays, sleep: h.sleeps.sleep},
	})
	require.Equal(t, archive.ExitFailed, status)
	require.Equal(t, "FAILED", result{stdout: stdout.String()}.lastLine())
}
