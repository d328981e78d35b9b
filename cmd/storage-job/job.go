package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

// stagingPrefix names restore staging directories at the top of DATA_DIR.
const stagingPrefix = ".converge-restore-"

// job is one run of the storage job.
type job struct {
	cfg   config
	store objectStore
	retry retryPolicy
	log   *slog.Logger
}

// archive uploads DATA_DIR unless the archive and its .meta already exist.
func (j *job) archive(ctx context.Context) (string, error) {
	if err := j.checkDataDir(); err != nil {
		return "", err
	}
	if err := removeLeftoverStaging(j.cfg.DataDir); err != nil {
		return "", err
	}
	haveArchive, err := j.exists(ctx, j.cfg.Key)
	if err != nil {
		return "", err
	}
	haveMeta, err := j.exists(ctx, j.cfg.metaKey())
	if err != nil {
		return "", err
	}
	if haveArchive && haveMeta {
		return fmt.Sprintf("skipped: %s and its .meta already exist", j.cfg.archiveURL()), nil
	}

	tmp, err := os.CreateTemp(j.cfg.TmpDir, "archive-*.tar.zst")
	if err != nil {
		return "", fmt.Errorf("scratch file in %s: %w", j.cfg.TmpDir, err)
	}
	defer os.Remove(tmp.Name())
	buf := bufio.NewWriterSize(tmp, 1<<20)
	meta, err := archive.PackDir(j.cfg.DataDir, buf)
	if err == nil {
		err = buf.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", j.cfg.DataDir, err)
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return "", fmt.Errorf("pack %s: %w", j.cfg.DataDir, err)
	}
	j.log.Info("packed", "data_dir", j.cfg.DataDir, "bytes", fi.Size(), "sha256", meta.SHA256,
		"file_bytes", meta.Bytes, "entries", meta.Entries)

	err = j.retry.do(ctx, j.log, "upload archive", func(ctx context.Context) error {
		f, err := os.Open(tmp.Name())
		if err != nil {
			return fmt.Errorf("reopen %s: %w", tmp.Name(), err)
		}
		defer f.Close()
		return j.store.Put(ctx, j.cfg.Key, f, fi.Size(), "application/zstd")
	})
	if err != nil {
		return "", err
	}
	// The extended .meta: the checksum, and what the archive unpacks to,
	// so a restore can refuse an archive that holds more than it says.
	metaBytes := meta.Encode()
	err = j.retry.do(ctx, j.log, "upload .meta", func(ctx context.Context) error {
		return j.store.Put(ctx, j.cfg.metaKey(), bytes.NewReader(metaBytes), int64(len(metaBytes)), "text/plain")
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("archived %s to %s (%d bytes, sha256:%s)", j.cfg.DataDir, j.cfg.archiveURL(), fi.Size(), meta.SHA256), nil
}

// restore makes DATA_DIR equal to the archive's tree.
func (j *job) restore(ctx context.Context) (string, error) {
	if err := j.checkDataDir(); err != nil {
		return "", err
	}
	if err := removeLeftoverStaging(j.cfg.DataDir); err != nil {
		return "", err
	}
	var meta bytes.Buffer
	err := j.retry.do(ctx, j.log, "download .meta", func(ctx context.Context) error {
		meta.Reset()
		return j.store.Get(ctx, j.cfg.metaKey(), &meta)
	})
	if errors.Is(err, errObjectNotFound) {
		// Which is missing: the archive itself, or only its commit marker?
		have, serr := j.exists(ctx, j.cfg.Key)
		if serr != nil {
			return "", serr
		}
		if !have {
			return "", withCode(contracts.CodeArchiveNotFound, fmt.Errorf("%s does not exist", j.cfg.archiveURL()))
		}
		return "", withCode(contracts.CodeMetaNotFound, fmt.Errorf("%s exists but its .meta does not", j.cfg.archiveURL()))
	}
	if err != nil {
		return "", err
	}

	tmp, err := os.CreateTemp(j.cfg.TmpDir, "restore-*.tar.zst")
	if err != nil {
		return "", fmt.Errorf("scratch file in %s: %w", j.cfg.TmpDir, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var sum string
	var size int64
	err = j.retry.do(ctx, j.log, "download archive", func(ctx context.Context) error {
		if err := rewind(tmp); err != nil {
			return err
		}
		h := sha256.New()
		cw := &countingWriter{w: io.MultiWriter(tmp, h)}
		if err := j.store.Get(ctx, j.cfg.Key, cw); err != nil {
			return err
		}
		sum, size = hex.EncodeToString(h.Sum(nil)), cw.n
		return nil
	})
	if errors.Is(err, errObjectNotFound) {
		return "", withCode(contracts.CodeArchiveNotFound, fmt.Errorf("%s does not exist", j.cfg.archiveURL()))
	}
	if err != nil {
		return "", err
	}
	declared, err := archive.ParseMeta(meta.Bytes())
	if err == nil {
		err = declared.VerifySum(sum)
	}
	if err != nil {
		return "", withCode(contracts.CodeChecksumMismatch, fmt.Errorf("%s: %w", j.cfg.archiveURL(), err))
	}
	j.log.Info("downloaded and verified", "archive", j.cfg.archiveURL(), "bytes", size, "sha256", sum,
		"declares_size", declared.Sized)
	lim, err := j.restoreLimits(&declared)
	if err != nil {
		return "", err
	}

	staging, err := os.MkdirTemp(j.cfg.DataDir, stagingPrefix)
	if err != nil {
		return "", fmt.Errorf("staging directory in %s: %w", j.cfg.DataDir, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", tmp.Name(), err)
	}
	if err := archive.ExtractTo(bufio.NewReaderSize(tmp, 1<<20), staging, lim); err != nil {
		_ = os.RemoveAll(staging)
		return "", withCode(extractCode(err), err)
	}
	// The archive is no longer needed: free its space before moving in.
	_ = tmp.Close()
	_ = os.Remove(tmp.Name())
	if err := syncFromStaging(j.cfg.DataDir, filepath.Base(staging)); err != nil {
		return "", withCode(contracts.CodeTarExtractFailed, fmt.Errorf("move restored tree into %s: %w", j.cfg.DataDir, err))
	}
	return fmt.Sprintf("restored %s into %s (%d bytes, sha256:%s)", j.cfg.archiveURL(), j.cfg.DataDir, size, sum), nil
}

func (j *job) exists(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := j.retry.do(ctx, j.log, "stat "+key, func(ctx context.Context) error {
		var err error
		ok, err = j.store.Exists(ctx, key)
		return err
	})
	return ok, err
}

// checkDataDir fails with VOLUME_NOT_FOUND when DATA_DIR is not a directory.
func (j *job) checkDataDir() error {
	fi, err := os.Stat(j.cfg.DataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return withCode(contracts.CodeVolumeNotFound, fmt.Errorf("DATA_DIR %s does not exist", j.cfg.DataDir))
	case err != nil:
		return fmt.Errorf("DATA_DIR %s: %w", j.cfg.DataDir, err)
	case !fi.IsDir():
		return withCode(contracts.CodeVolumeNotFound, fmt.Errorf("DATA_DIR %s is not a directory", j.cfg.DataDir))
	}
	return nil
}

// restoreLimits bounds what a restore may write: the configured quota,
// lowered to the free space of DATA_DIR's file system (the staging tree
// lives there), and what the archive's .meta declares.
func (j *job) restoreLimits(declared *archive.Meta) (archive.Limits, error) {
	lim := archive.Limits{MaxBytes: j.cfg.MaxBytes, MaxEntries: j.cfg.MaxEntries, Declared: declared}
	free, err := freeBytes(j.cfg.DataDir)
	if err != nil {
		return archive.Limits{}, fmt.Errorf("free space of %s: %w", j.cfg.DataDir, err)
	}
	if free < lim.MaxBytes {
		lim.MaxBytes = max(free, 1)
	}
	return lim, nil
}

// extractCode maps an extraction failure to its SPEC 1.5 code: an archive
// holding more than (or other than) its .meta declares lies about itself,
// and one that is no tar.zst at all (empty, not zstd, broken or
// truncated) is corrupt, so either's data is lost (CHECKSUM_MISMATCH,
// DataLost); one over the quota or the free space needs an administrator
// (DISK_FULL); anything else is a failed extraction (TAR_EXTRACT_FAILED).
func extractCode(err error) contracts.ErrorCode {
	switch {
	case errors.Is(err, archive.ErrMetaMismatch), errors.Is(err, archive.ErrCorrupt):
		return contracts.CodeChecksumMismatch
	case errors.Is(err, archive.ErrQuotaExceeded):
		return contracts.CodeDiskFull
	}
	return contracts.CodeTarExtractFailed
}

// removeLeftoverStaging deletes staging directories of interrupted restores.
func removeLeftoverStaging(dataDir string) error {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dataDir, err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), stagingPrefix) {
			if err := os.RemoveAll(filepath.Join(dataDir, e.Name())); err != nil {
				return fmt.Errorf("remove leftover staging: %w", err)
			}
		}
	}
	return nil
}

func rewind(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", f.Name(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind %s: %w", f.Name(), err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
