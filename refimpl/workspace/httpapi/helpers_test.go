package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/api"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const (
	alice = "tok-alice"
	bob   = "tok-bob"
	carol = "tok-carol"
	root  = "tok-root"
)

// env is an HTTP API on the fakes, served by a real HTTP server.
type env struct {
	t       *testing.T
	world   *wsfakes.World
	srv     *httptest.Server
	metrics *Metrics
}

func newEnv(t *testing.T, tweak ...func(*Config)) *env {
	t.Helper()
	world := wsfakes.NewWorld(wsfakes.NewClock(t0), history.NewRecorder())
	deps := world.Deps("api")
	deps.IDs = wsfakes.NewIDs(7)
	deps.Limits = contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3}
	done := make(chan struct{})
	cfg := Config{
		API:         api.New(deps),
		Tokens:      map[string]string{alice: "alice", bob: "bob", carol: "carol", root: "root"},
		Admins:      map[string]bool{"root": true},
		Bus:         deps.Bus,
		Clock:       world.Clock,
		Metrics:     NewMetrics(),
		Heartbeat:   time.Hour,
		StreamsDone: done,
	}
	for _, f := range tweak {
		f(&cfg)
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: ends open streams
	return &env{t: t, world: world, srv: srv, metrics: cfg.Metrics}
}

// reply is a response read in full.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic map.
func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// errorOf returns the "error" object of an error reply, checking its shape.
func (r reply) errorOf(t *testing.T, status int, code string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "no error object in %s", r.body)
	require.Equal(t, code, e["code"])
	require.NotEmpty(t, e["message"])
	return e
}

// call sends a request; body "" sends none, and a body is sent as JSON
// unless headers say otherwise.
func (e *env) call(method, path, token, body string, headers ...string) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// create makes a workspace for token and returns its id.
func (e *env) create(token, body string) string {
	e.t.Helper()
	r := e.call(http.MethodPost, "/api/v1/workspaces", token, body)
	require.Equal(e.t, http.StatusCreated, r.status, "body: %s", r.body)
	id, _ := r.json(e.t)["id"].(string)
	require.NotEmpty(e.t, id)
	return id
}

// setRow forces columns owned by the coordinator, as it would write them.
func (e *env) setRow(id string, comp contracts.Component, p contracts.Patch) {
	e.t.Helper()
	ok, err := e.world.Store.Update(e.t.Context(), contracts.Writer{Component: comp}, id, contracts.Cond{}, p)
	require.NoError(e.t, err)
	require.True(e.t, ok)
}

func (e *env) row(id string) contracts.Workspace {
	e.t.Helper()
	w, err := e.world.Store.Get(e.t.Context(), id)
	require.NoError(e.t, err)
	return w
}

func running() contracts.Patch {
	return contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}
}
