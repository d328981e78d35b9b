package main

import (
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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// memStore is an in-memory objectStore that records calls and can fail them.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	calls   []string
	// fail, when set, is asked before each call ("exists", "get", "put").
	fail func(op, key string) error
}

func newMemStore() *memStore { return &memStore{objects: map[string][]byte{}} }

func (m *memStore) before(op, key string) error {
	m.mu.Lock()
	m.calls = append(m.calls, op+" "+key)
	f := m.fail
	m.mu.Unlock()
	if f != nil {
		return f(op, key)
	}
	return nil
}

func (m *memStore) Exists(_ context.Context, key string) (bool, error) {
	if err := m.before("exists", key); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objects[key]
	return ok, nil
}

func (m *memStore) Get(_ context.Context, key string, w io.Writer) error {
	if err := m.before("get", key); err != nil {
		var pg *partialGet
		if errors.As(err, &pg) {
			_, _ = w.Write(pg.data)
			return &storeError{op: "get", key: key, transient: true, err: pg}
		}
		return err
	}
	m.mu.Lock()
	data, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("get %s: %w", key, errObjectNotFound)
	}
	_, err := w.Write(data)
	return err
}

func (m *memStore) Put(_ context.Context, key string, r io.Reader, size int64, _ string) error {
	if err := m.before("put", key); err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if int64(len(data)) != size {
		return fmt.Errorf("put %s: size %d, read %d", key, size, len(data))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[key] = data
	return nil
}

func (m *memStore) callsOf(op string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, c := range m.calls {
		if strings.HasPrefix(c, op+" ") {
			out = append(out, strings.TrimPrefix(c, op+" "))
		}
	}
	return out
}

// sleeps records the retry delays instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

var testDelays = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}

const (
	testBucket = "backups"
	testKey    = "archives/ws-1/op-1/home.tar.zst"
	testURL    = "s3://" + testBucket + "/" + testKey
)

// harness runs the job in-process against a memStore.
type harness struct {
	store  *memStore
	sleeps *sleeps
	tmp    string
	env    map[string]string // extra settings
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{store: newMemStore(), sleeps: &sleeps{}, tmp: t.TempDir()}
}

type result struct {
	status int
	stdout string
	stderr string
}

// lastLine is the final line of standard output.
func (r result) lastLine() string {
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

func (h *harness) run(t *testing.T, mode, dataDir string) result {
	t.Helper()
	env := map[string]string{
		"ARCHIVE_URL":   testURL,
		"S3_ENDPOINT":   "s3.test:9000",
		"S3_ACCESS_KEY": "key",
		"S3_SECRET_KEY": "secret",
		"DATA_DIR":      dataDir,
		"TMPDIR":        h.tmp,
	}
	for k, v := range h.env {
		env[k] = v
	}
	d := deps{
		newStore: func(cfg config) (objectStore, error) {
			if cfg.Bucket != testBucket {
				return nil, fmt.Errorf("unexpected bucket %q", cfg.Bucket)
			}
			return h.store, nil
		},
		retry: retryPolicy{delays: testDelays, sleep: h.sleeps.sleep},
	}
	var stdout, stderr bytes.Buffer
	status := runWith(context.Background(), []string{mode}, env, &stdout, &stderr, d)
	return result{status: status, stdout: stdout.String(), stderr: stderr.String()}
}

// writeTree creates files under dir: a path ending in "/" is a directory,
// content starting with "->" makes a symbolic link, "+x" a mode suffix
// marker makes an executable file.
func writeTree(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for p, content := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch {
		case strings.HasPrefix(content, "->"):
			require.NoError(t, os.Symlink(strings.TrimPrefix(content, "->"), full))
		case strings.HasPrefix(content, "+x"):
			require.NoError(t, os.WriteFile(full, []byte(strings.TrimPrefix(content, "+x")), 0o755))
		default:
			require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
		}
	}
}

// snapshot describes every entry under dir: kind, permission bits, and the
// content's hash or the link's target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, full)
		if err != nil || rel == "." {
			return err
		}
		fi, err := os.Lstat(full)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		default:
			data, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %o %d %s", fi.Mode().Perm(), len(data), hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// partialGet, returned by a memStore fail hook for a get, delivers data and
// then fails transiently, like a connection lost mid-download.
type partialGet struct{ data []byte }

func (p *partialGet) Error() string {
	return fmt.Sprintf("connection lost after %d bytes", len(p.data))
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
