package dockerprov

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/testenv"
)

// agentImage is the workspace image the tests start.
func agentImage() string {
	if v := os.Getenv("CONVERGE_WORKSPACE_AGENT_IMAGE"); v != "" {
		return v
	}
	return "converge/workspace-agent:dev"
}

// requests counts the provider's Docker API responses by "METHOD path"
// (the API version prefix stripped).
type requests struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *requests) hook(resp *http.Response) {
	if resp.Request == nil {
		return
	}
	p := resp.Request.URL.Path
	if i := strings.Index(p[1:], "/"); strings.HasPrefix(p, "/v1.") && i > 0 {
		p = p[i+1:]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = make(map[string]int)
	}
	r.n[resp.Request.Method+" "+p]++
}

func (r *requests) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key]
}

func (r *requests) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.n {
		n += c
	}
	return n
}

func (r *requests) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n = nil
}

// testProvider is a Provider on the local Docker engine whose objects carry
// a managed value of their own, removed when t ends.
type testProvider struct {
	*Provider
	reqs *requests
}

// skipOrFail ends t when the real tier cannot run, as testenv does: a skip,
// or a failure under CONVERGE_REQUIRE_REAL=1.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(testenv.EnvRequireReal) == "1" {
		t.Fatalf(format+" (and "+testenv.EnvRequireReal+"=1 requires the real tier)", args...)
	}
	t.Skipf(format, args...)
}

// newProvider makes a provider for t with short timeouts; edit adjusts its
// configuration.
func newProvider(t *testing.T, edit func(*Config)) *testProvider {
	t.Helper()
	if testing.Short() {
		t.Skip("real tier (Docker): skipped with -short")
	}
	reqs := &requests{}
	cfg := Config{
		ManagedValue: "test-" + randomHex(t, 6),
		// Budgets sized for a busy shared engine, not for the quick start a
		// test usually sees: a CI run once saw the engine stall for 90 s (DR384).
		StartupTimeout: 3 * time.Minute,
		HealthTimeout:  20 * time.Second,
		JobTimeout:     2 * time.Minute,
		PollInterval:   50 * time.Millisecond,
		ClientOptions:  []client.Opt{client.WithResponseHook(reqs.hook)},
		Logger:         slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := New(ctx, cfg)
	if err != nil {
		skipOrFail(t, "no Docker engine: real tier skipped (%v)", err)
	}
	for _, image := range []string{agentImage(), p.cfg.StorageJobImage} {
		if _, err := p.cli.ImageInspect(ctx, image); err != nil {
			_ = p.Close()
			skipOrFail(t, "image %s missing (build it with images/build.sh): %v", image, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		require.NoError(t, p.Cleanup(ctx), "cleanup")
		vols, err := p.ListVolumes(ctx)
		require.NoError(t, err)
		require.Empty(t, vols, "cleanup leaves no volume")
		insts, err := p.List(ctx)
		require.NoError(t, err)
		require.Empty(t, insts, "cleanup leaves no container")
		require.NoError(t, p.Close())
	})
	return &testProvider{Provider: p, reqs: reqs}
}

// newID is a fresh workspace id.
func newID(t *testing.T) string {
	t.Helper()
	return "t" + randomHex(t, 8)
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// ctxFor is a context bounded for one test step.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// requireCode checks that err is a ProviderError with code.
func requireCode(t *testing.T, err error, code contracts.ErrorCode) *contracts.ProviderError {
	t.Helper()
	require.Error(t, err)
	var pe *contracts.ProviderError
	require.True(t, errors.As(err, &pe), "want a *contracts.ProviderError, got %T: %v", err, err)
	require.Equal(t, code, pe.Code, "error: %v", err)
	return pe
}

// foreignVolume creates ws-{id}-home without the provider's labels (as
// the engine's mount or another tool would), removed when t ends.
func (tp *testProvider) foreignVolume(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	name := contracts.VolumeName(id)
	_, err := tp.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := tp.cli.VolumeRemove(context.Background(), name, client.VolumeRemoveOptions{Force: true})
		require.NoError(t, err)
	})
}

// volumeExists asks the daemon directly.
func (tp *testProvider) volumeExists(t *testing.T, id string) bool {
	t.Helper()
	_, err := tp.cli.VolumeInspect(t.Context(), contracts.VolumeName(id), client.VolumeInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

// containerID is the id of ws-{id}, "" when absent.
func (tp *testProvider) containerID(t *testing.T, id string) string {
	t.Helper()
	info, err := tp.cli.ContainerInspect(t.Context(), contracts.ContainerName(id), client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return ""
	}
	require.NoError(t, err)
	return info.Container.ID
}

// agentPut writes a file through the agent's HTTP API.
func agentPut(t *testing.T, addr, path string, data []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://"+addr+"/files/"+path, strings.NewReader(string(data)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	require.Contains(t, []int{http.StatusOK, http.StatusCreated}, resp.StatusCode, string(body))
}

// agentGet reads a file through the agent's HTTP API.
func agentGet(t *testing.T, addr, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/files/"+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return body
}
