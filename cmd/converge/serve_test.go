package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/fakes"
)

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mapEnv is a serve environment reading variables from vars.
func mapEnv(t *testing.T, vars map[string]string) serveEnv {
	t.Helper()
	return serveEnv{
		getenv:   func(k string) string { return vars[k] },
		hostname: func() (string, error) { return "box-1", nil },
		backends: func(serveConfig) backends {
			t.Error("backends must not be opened")
			return realBackends{}
		},
	}
}

func TestServeHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := runServe(t.Context(), []string{"--help"}, &out, &errb, mapEnv(t, nil))
	require.Equal(t, exitOK, code)
	for _, name := range []string{"--listen", "LISTEN_ADDR", "--instance", "--fake", "DATABASE_URL", "REDIS_URL",
		"S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_BUCKET", "DOCKER_HOST", "CONVERGE_TOKENS"} {
		require.Contains(t, out.String(), name)
	}
	code, stdout, _ := invoke(t, "help", "serve")
	require.Equal(t, exitOK, code)
	require.Equal(t, serveUsage, stdout)
}

func TestServeConfigProblemsNameTheirSource(t *testing.T) {
	vars := map[string]string{
		"LISTEN_ADDR":     "localhost",
		"CONVERGE_TOKENS": "tok1=alice,tok1=bob",
		"DATABASE_URL":    "mysql://u:hunter2@db/x",
		"S3_ENDPOINT":     "ftp://key:hunter3@s3",
		"S3_SECRET_KEY":   "hunter4",
		"S3_BUCKET":       "Bad_Bucket",
		"DOCKER_HOST":     "tcp://",
		"LOG_LEVEL":       "loud",
	}
	var out, errb bytes.Buffer
	code := runServe(t.Context(), []string{"--instance", "-x", "--log-format", "xml", "--shutdown-timeout", "0s"}, &out, &errb, mapEnv(t, vars))
	require.Equal(t, exitUsage, code)
	msg := errb.String()
	for _, want := range []string{
		`LISTEN_ADDR: "localhost" is not host:port`,
		`--instance: "-x" must be`,
		`--log-format: "xml": want auto, json or text`,
		`LOG_LEVEL: "loud": want debug`,
		`--shutdown-timeout: "0s": want a positive duration`,
		`CONVERGE_TOKENS: entry 2 repeats the token`,
		`DATABASE_URL: scheme "mysql": want one of postgres, postgresql`,
		`REDIS_URL: required unless --fake is given`,
		`S3_ENDPOINT: want http(s)://host[:port] or host:port`,
		`S3_ACCESS_KEY: required unless --fake is given`,
		`S3_BUCKET: "Bad_Bucket" is not a bucket name`,
		`DOCKER_HOST: no host in the tcp URL`,
	} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, "S3_SECRET_KEY", "a valid variable is not reported")
	for _, secret := range []string{"hunter2", "hunter3", "hunter4", "tok1"} {
		require.NotContains(t, msg, secret, "problems never repeat a secret")
	}
	require.Empty(t, out.String())
}

func TestServeConfigSources(t *testing.T) {
	vars := map[string]string{
		"LISTEN_ADDR":       "0.0.0.0:9000",
		"CONVERGE_INSTANCE": "from-env",
		"CONVERGE_TOKENS":   "a=alice,b=bob:admin",
		"DATABASE_URL":      "postgres://u:p@db:5432/converge?sslmode=disable",
		"REDIS_URL":         "redis://cache:6379/0",
		"S3_ENDPOINT":       "minio:9000",
		"S3_ACCESS_KEY":     "ak",
		"S3_SECRET_KEY":     "sk",
		"S3_BUCKET":         "ws-archives",
		"LOG_FORMAT":        "text",
	}
	cfg, help, problems := parseServeConfig([]string{"--listen", "127.0.0.1:0"}, mapEnv(t, vars))
	require.False(t, help)
	require.Empty(t, problems)
	require.Equal(t, "127.0.0.1:0", cfg.listen, "a flag wins over its variable")
	require.Equal(t, "from-env", cfg.instance)
	require.Equal(t, "text", cfg.logFormat)
	require.Equal(t, 10*time.Second, cfg.shutdownTimeout)
	require.Equal(t, map[string]string{"a": "alice", "b": "bob"}, cfg.tokens)
	require.Equal(t, map[string]bool{"bob": true}, cfg.admins)
	require.Equal(t, s3Config{endpoint: "minio:9000", accessKey: "ak", secretKey: "sk", bucket: "ws-archives"}, cfg.s3)
	require.Equal(t, defaultDockerHost, cfg.dockerHost)

	// Defaults; --fake needs only the tokens.
	cfg, _, problems = parseServeConfig([]string{"--fake"}, mapEnv(t, map[string]string{"CONVERGE_TOKENS": "t=u"}))
	require.Empty(t, problems)
	require.Equal(t, "127.0.0.1:8080", cfg.listen)
	require.Equal(t, "box-1", cfg.instance)
	require.Equal(t, "auto", cfg.logFormat)
	require.True(t, cfg.fake)

	_, _, problems = parseServeConfig([]string{"--fake"}, mapEnv(t, nil))
	require.Equal(t, []string{"CONVERGE_TOKENS: required: the API's bearer tokens, e.g. tok1=alice,tok2=bob:admin"}, problems)
	_, _, problems = parseServeConfig([]string{"--fake", "extra"}, mapEnv(t, nil))
	require.Equal(t, []string{`unexpected argument "extra"`}, problems)
	_, _, problems = parseServeConfig([]string{"--nope"}, mapEnv(t, nil))
	require.Len(t, problems, 1)
	require.Contains(t, problems[0], "-nope")
}

func TestServeNamesTheServiceItCannotReach(t *testing.T) {
	vars := map[string]string{
		"CONVERGE_TOKENS": "t=u", "DATABASE_URL": "postgres://u:p@127.0.0.1:1/converge?connect_timeout=2", "REDIS_URL": "redis://127.0.0.1:1",
		"S3_ENDPOINT": "http://127.0.0.1:1", "S3_ACCESS_KEY": "ak", "S3_SECRET_KEY": "sk", "S3_BUCKET": "arch",
	}
	env := mapEnv(t, vars)
	env.backends = chooseBackends
	var out, errb bytes.Buffer
	code := runServe(t.Context(), []string{"--log-format", "json"}, &out, &errb, env)
	require.Equal(t, exitFailure, code)
	require.Contains(t, errb.String(), "converge serve: connect to DATABASE_URL:")
}

// serveFake runs "serve --fake" in-process on a free port and returns its
// address, the backends it opened and a function that stops it and
// returns its exit code.
func serveFake(t *testing.T, stderr io.Writer, extra ...string) (string, *fakeBackends, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	fb := &fakeBackends{}
	env := mapEnv(t, map[string]string{"CONVERGE_TOKENS": "tok-a=alice,tok-r=root:admin"})
	env.backends = func(cfg serveConfig) backends {
		require.True(t, cfg.fake)
		return fb
	}
	addrs := make(chan string, 1)
	env.listening = func(addr string) { addrs <- addr }
	done := make(chan int, 1)
	args := append([]string{"--fake", "--listen", "127.0.0.1:0", "--instance", "test-1", "--log-format", "json"}, extra...)
	go func() { done <- runServe(ctx, args, io.Discard, stderr, env) }()
	var addr string
	select {
	case addr = <-addrs:
	case code := <-done:
		t.Fatalf("serve exited with %d before listening", code)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start listening")
	}
	stop := func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
		return -1
	}
	t.Cleanup(func() { cancel() })
	return addr, fb, stop
}

func httpDo(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(b) > 0 && b[0] == '{' {
		require.NoError(t, json.Unmarshal(b, &m))
	}
	return resp.StatusCode, m
}

func TestServeFakeAnswersAndStops(t *testing.T) {
	logs := &syncBuffer{}
	addr, fb, stop := serveFake(t, logs)
	base := "http://" + addr

	status, body := httpDo(t, http.MethodGet, base+"/healthz", "", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, map[string]any{"status": "ok"}, body)

	status, _ = httpDo(t, http.MethodGet, base+"/api/v1/workspaces", "", "")
	require.Equal(t, http.StatusUnauthorized, status)

	status, body = httpDo(t, http.MethodPost, base+"/api/v1/workspaces", "tok-a", `{"name":"dev","image_ref":"img:1"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["id"].(string)

	// The coordinator, on the fakes and the real clock, brings it up.
	require.Eventually(t, func() bool {
		status, body = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+id, "tok-a", "")
		return status == http.StatusOK && body["display_state"] == "RUNNING" && body["operation"] == "NONE"
	}, 20*time.Second, 100*time.Millisecond, "last: %v", body)
	require.Equal(t, "test-1", fb.world.Store.Holder())

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(metrics), "\nconverge_coordinator_leader 1\n")
	require.Contains(t, string(metrics), "\nconverge_operations_completed_total{operation=\"STARTING\"} 1\n")

	// An open event stream does not hold up the shutdown.
	sctx, scancel := context.WithCancel(t.Context())
	defer scancel()
	sreq, err := http.NewRequestWithContext(sctx, http.MethodGet, base+"/api/v1/workspaces/"+id+"/events", nil)
	require.NoError(t, err)
	sreq.Header.Set("Authorization", "Bearer tok-a")
	sresp, err := http.DefaultClient.Do(sreq)
	require.NoError(t, err)
	defer sresp.Body.Close()
	require.Equal(t, http.StatusOK, sresp.StatusCode)

	start := time.Now()
	require.Equal(t, exitOK, stop())
	require.Less(t, time.Since(start), 5*time.Second)
	require.Empty(t, fb.world.Store.Holder(), "the leader lock is released on shutdown")
	_, err = io.ReadAll(sresp.Body)
	require.NoError(t, err, "the event stream ended cleanly")

	// The server is gone.
	_, err = net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err)

	// Logs are JSON lines.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		require.Equal(t, "test-1", m["instance"], l)
		require.Equal(t, 1, strings.Count(l, `"instance":`), "one instance attribute per line: %s", l)
	}
	require.Contains(t, logs.String(), `"msg":"serving"`)
	require.Contains(t, logs.String(), `"msg":"stopped"`)
}

func TestServeFailsWhenTheAddressIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	env := mapEnv(t, map[string]string{"CONVERGE_TOKENS": "t=u"})
	env.backends = chooseBackends
	logs := &syncBuffer{}
	code := runServe(t.Context(), []string{"--fake", "--listen", ln.Addr().String(), "--log-format", "json"}, io.Discard, logs, env)
	require.Equal(t, exitFailure, code)
	require.Contains(t, logs.String(), "cannot listen (--listen / LISTEN_ADDR)")
}

func TestProbeHealthReportsTheFailingService(t *testing.T) {
	fb := &fakeBackends{}
	st, err := fb.open(t.Context(), serveConfig{instance: "p"}, nil)
	require.NoError(t, err)
	require.NoError(t, st.health(t.Context()))
	fb.world.SetHook(func(c fakes.Call) error {
		if c.Port == "bus" {
			return errors.New("connection refused")
		}
		return nil
	})
	require.ErrorContains(t, st.health(t.Context()), "bus: connection refused")
}
