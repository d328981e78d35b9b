package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func newTestServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	home := t.TempDir()
	srv := httptest.NewServer(newAgent(home, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	return srv, home
}

// do sends a request with the path exactly as given (no client-side cleaning).
func do(t *testing.T, srv *httptest.Server, method, rawPath string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL, body)
	require.NoError(t, err)
	req.URL.Opaque = rawPath // sent verbatim on the request line
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, data
}

func requireJSONError(t *testing.T, data []byte) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &e), "body %q", data)
	require.NotEmpty(t, e.Error)
	return e.Error
}

func TestHealthz(t *testing.T) {
	srv, home := newTestServer(t)
	status, body := do(t, srv, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "ok", string(body))
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	require.Empty(t, entries, "the probe leaves nothing behind")

	status, _ = do(t, srv, http.MethodPost, "/healthz", nil)
	require.Equal(t, http.StatusMethodNotAllowed, status)
}

func TestHealthzFailsWhenHomeIsMissing(t *testing.T) {
	home := filepath.Join(t.TempDir(), "absent")
	srv := httptest.NewServer(newAgent(home, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	status, body := do(t, srv, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
	requireJSONError(t, body)

	require.NoError(t, os.Mkdir(home, 0o755))
	status, _ = do(t, srv, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusOK, status, "healthy once the home can be written")
}

func TestHealthzFailsWhenHomeIsReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only directories; the permission check cannot fail")
	}
	srv, home := newTestServer(t)
	require.NoError(t, os.Chmod(home, 0o555))
	t.Cleanup(func() { _ = os.Chmod(home, 0o755) })
	status, _ := do(t, srv, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
}

func TestPutGetRoundTrip(t *testing.T) {
	srv, home := newTestServer(t)
	payload := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	status, body := do(t, srv, http.MethodPut, "/files/project/src/main.bin", bytes.NewReader(payload))
	require.Equal(t, http.StatusCreated, status, string(body))
	var info fileInfo
	require.NoError(t, json.Unmarshal(body, &info))
	require.Equal(t, fileInfo{Path: "project/src/main.bin", Size: int64(len(payload))}, info)

	onDisk, err := os.ReadFile(filepath.Join(home, "project", "src", "main.bin"))
	require.NoError(t, err)
	require.Equal(t, payload, onDisk)

	status, body = do(t, srv, http.MethodGet, "/files/project/src/main.bin", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, payload, body)

	status, body = do(t, srv, http.MethodPut, "/files/project/src/main.bin", strings.NewReader("v2"))
	require.Equal(t, http.StatusOK, status, "replacing is 200: %s", body)
	status, body = do(t, srv, http.MethodGet, "/files/project/src/main.bin", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "v2", string(body))

	status, body = do(t, srv, http.MethodPut, "/files/empty", strings.NewReader(""))
	require.Equal(t, http.StatusCreated, status, string(body))
	status, body = do(t, srv, http.MethodGet, "/files/empty", nil)
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, body)
}

func TestGetMissingIs404JSON(t *testing.T) {
	srv, _ := newTestServer(t)
	status, body := do(t, srv, http.MethodGet, "/files/nope.txt", nil)
	require.Equal(t, http.StatusNotFound, status)
	requireJSONError(t, body)
}

func TestGetDirectoryIsRefused(t *testing.T) {
	srv, home := newTestServer(t)
	require.NoError(t, os.Mkdir(filepath.Join(home, "dir"), 0o755))
	status, body := do(t, srv, http.MethodGet, "/files/dir", nil)
	require.Equal(t, http.StatusBadRequest, status)
	requireJSONError(t, body)
	status, body = do(t, srv, http.MethodPut, "/files/dir", strings.NewReader("x"))
	require.Equal(t, http.StatusConflict, status)
	requireJSONError(t, body)
}

func TestPathEscapesAreRefused(t *testing.T) {
	srv, home := newTestServer(t)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cr3t"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(home, "out")))
	require.NoError(t, os.Symlink("../../..", filepath.Join(home, "up")))

	for _, p := range []string{
		"/files/../etc/passwd",
		"/files/a/../../etc/passwd",
		"/files/..",
		"/files//etc/passwd",
		"/files/a//b",
		"/files/./a",
		"/files/a/.",
		"/files/%2e%2e/x",
		"/files/a/%2E%2E/%2E%2E/x",
		"/files/%2Fetc%2Fpasswd",
		"/files/out/secret",
		"/files/out/new",
		"/files/up/x",
	} {
		t.Run(p, func(t *testing.T) {
			status, body := do(t, srv, http.MethodPut, p, strings.NewReader("pwned"))
			require.Equal(t, http.StatusBadRequest, status, "PUT %s: %s", p, body)
			requireJSONError(t, body)
			status, body = do(t, srv, http.MethodGet, p, nil)
			require.Equal(t, http.StatusBadRequest, status, "GET %s: %s", p, body)
			requireJSONError(t, body)
		})
	}
	data, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	require.Equal(t, "s3cr3t", string(data))
	_, err = os.Stat(filepath.Join(outside, "new"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSymlinkInsideHomeIsFollowed(t *testing.T) {
	srv, home := newTestServer(t)
	require.NoError(t, os.Mkdir(filepath.Join(home, "real"), 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(home, "alias")))
	status, body := do(t, srv, http.MethodPut, "/files/alias/f.txt", strings.NewReader("in"))
	require.Equal(t, http.StatusCreated, status, string(body))
	data, err := os.ReadFile(filepath.Join(home, "real", "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "in", string(data))
}

func TestBodyLimit(t *testing.T) {
	srv, home := newTestServer(t)
	big := bytes.Repeat([]byte("x"), maxBody+1)
	status, body := do(t, srv, http.MethodPut, "/files/big", bytes.NewReader(big))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	requireJSONError(t, body)

	// Without a Content-Length the limit is enforced while reading.
	status, body = do(t, srv, http.MethodPut, "/files/big", io.MultiReader(bytes.NewReader(big)))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	requireJSONError(t, body)
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	require.Empty(t, entries, "a refused upload leaves nothing behind")

	exact := bytes.Repeat([]byte("y"), maxBody)
	status, body = do(t, srv, http.MethodPut, "/files/exact", io.MultiReader(bytes.NewReader(exact)))
	require.Equal(t, http.StatusCreated, status, string(body))
}

func TestList(t *testing.T) {
	srv, home := newTestServer(t)
	status, body := do(t, srv, http.MethodGet, "/files/", nil)
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"files":[]}`, string(body))

	for p, content := range map[string]string{"b.txt": "bb", "a/z.txt": "z", "a/b/c.txt": "ccc"} {
		status, body := do(t, srv, http.MethodPut, "/files/"+p, strings.NewReader(content))
		require.Equal(t, http.StatusCreated, status, string(body))
	}
	require.NoError(t, os.Symlink("b.txt", filepath.Join(home, "link")))
	status, body = do(t, srv, http.MethodGet, "/files/", nil)
	require.Equal(t, http.StatusOK, status)
	var got listing
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, []fileInfo{
		{Path: "a/b/c.txt", Size: 3},
		{Path: "a/z.txt", Size: 1},
		{Path: "b.txt", Size: 2},
	}, got.Files)
}

func TestUnknownEndpointAndMethod(t *testing.T) {
	srv, _ := newTestServer(t)
	status, body := do(t, srv, http.MethodGet, "/nope", nil)
	require.Equal(t, http.StatusNotFound, status)
	requireJSONError(t, body)
	status, _ = do(t, srv, http.MethodDelete, "/files/x", nil)
	require.Equal(t, http.StatusMethodNotAllowed, status)
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"a", "a/b", ".bashrc", "a/.b/c", "..a", "a..", "a b"} {
		got, err := checkPath(ok)
		require.NoError(t, err, ok)
		require.Equal(t, ok, got)
	}
	for _, bad := range []string{"", "/a", "..", "../a", "a/..", "a/../b", ".", "./a", "a/./b", "a//b", "a/", "a\x00b"} {
		_, err := checkPath(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestPutBeneathAFileIsConflict(t *testing.T) {
	srv, _ := newTestServer(t)
	status, body := do(t, srv, http.MethodPut, "/files/f", strings.NewReader("file"))
	require.Equal(t, http.StatusCreated, status, string(body))
	status, body = do(t, srv, http.MethodPut, "/files/f/g", strings.NewReader("x"))
	require.Equal(t, http.StatusConflict, status, string(body))
	requireJSONError(t, body)
}
