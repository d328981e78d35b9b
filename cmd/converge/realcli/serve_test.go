package realcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/cmd/converge/cli"
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/contracttest"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/dockerprov"
)

// Tokens of the serve tests (httpapi.MinTokenLength characters at least).
const (
	tokA       = "tok-alice-0123456"
	tokR       = "tok-root-01234567"
	testTokens = "tok-user-01234567=u"
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
	code, out, _ := invoke(t, "serve", "--help")
	require.Equal(t, cli.ExitOK, code)
	for _, s := range serveSettings {
		require.Contains(t, out, s.env, "every variable is listed")
		if s.flag != "" {
			require.Contains(t, out, "--"+s.flag)
		}
	}
	require.Contains(t, out, "CONVERGE_STORAGE_JOB_IMAGE")
	require.Contains(t, out, "--max-running-per-user")
	require.Contains(t, out, "--pull-images")
}

// serveCmd runs the serve command line with env.
func serveCmd(t *testing.T, env serveEnv, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	return run(t.Context(), env, append([]string{"serve"}, args...), stdout, stderr)
}

// resolveServe parses args and resolves the configuration with env.
func resolveServe(t *testing.T, env serveEnv, args ...string) (serveConfig, []string) {
	t.Helper()
	c := newConfig(cli.Env{Stdout: io.Discard, Stderr: io.Discard}, env)
	cmd := c.serveCommand()
	require.NoError(t, cmd.ParseFlags(args))
	o := &serveOptions{values: map[string]*string{}, bools: map[string]*bool{}, flags: cmd.Flags()}
	for _, st := range serveSettings {
		if st.flag == "" {
			continue
		}
		f := cmd.Flags().Lookup(st.flag)
		if st.boolean {
			v := f.Value.String() == "true"
			o.bools[st.env] = &v
		} else {
			v := f.Value.String()
			o.values[st.env] = &v
		}
	}
	return o.resolve(env.getenv, env.hostname)
}

func TestServeConfigProblemsNameTheirSource(t *testing.T) {
	vars := map[string]string{
		"LISTEN_ADDR":     "localhost",
		"CONVERGE_TOKENS": "tok1-0123456789ab=alice,tok1-0123456789ab=bob",
		"DATABASE_URL":    "mysql://u:hunter2@db/x",
		"S3_ENDPOINT":     "ftp://key:hunter3@s3",
		"S3_SECRET_KEY":   "hunter4",
		"S3_BUCKET":       "Bad_Bucket",
		"DOCKER_HOST":     "tcp://",
		"LOG_LEVEL":       "loud",
	}
	var out, errb bytes.Buffer
	code := serveCmd(t, mapEnv(t, vars), &out, &errb, "--instance=-x", "--log-format", "xml", "--shutdown-timeout", "0s", "--leader-idle-timeout", "10ms")
	require.Equal(t, cli.ExitUsage, code)
	msg := errb.String()
	for _, want := range []string{
		`LISTEN_ADDR: "localhost" is not host:port`,
		`--instance: "-x" must be`,
		`--log-format: "xml": want auto, json or text`,
		`LOG_LEVEL: "loud": want debug`,
		`--shutdown-timeout: "0s": want a positive duration`,
		`--leader-idle-timeout: "10ms": want a duration of at least 300ms`,
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
	for _, secret := range []string{"hunter2", "hunter3", "hunter4", "0123456789ab"} {
		require.NotContains(t, msg, secret, "problems never repeat a secret")
	}
	require.Empty(t, out.String())
}

func TestServeConfigSources(t *testing.T) {
	vars := map[string]string{
		"LISTEN_ADDR":       "0.0.0.0:9000",
		"CONVERGE_INSTANCE": "from-env",
		"CONVERGE_TOKENS":   "tok-alice-0123456=alice,tok-bob-012345678=bob:admin",
		"DATABASE_URL":      "postgres://u:p@db:5432/converge?sslmode=disable",
		"REDIS_URL":         "redis://cache:6379/0",
		"S3_ENDPOINT":       "minio:9000",
		"S3_ACCESS_KEY":     "ak",
		"S3_SECRET_KEY":     "sk",
		"S3_BUCKET":         "ws-archives",
		"LOG_FORMAT":        "text",
	}
	cfg, problems := resolveServe(t, mapEnv(t, vars), "--listen", "127.0.0.1:0")
	require.Empty(t, problems)
	require.Equal(t, "127.0.0.1:0", cfg.listen, "a flag wins over its variable")
	require.Equal(t, "from-env", cfg.instance)
	require.Equal(t, "text", cfg.logFormat)
	require.Equal(t, 10*time.Second, cfg.shutdownTimeout)
	require.Equal(t, time.Minute, cfg.leaderIdleTimeout)
	require.Equal(t, map[string]string{"tok-alice-0123456": "alice", "tok-bob-012345678": "bob"}, cfg.tokens)
	require.Equal(t, map[string]bool{"bob": true}, cfg.admins)
	require.Equal(t, s3Config{endpoint: "minio:9000", accessKey: "ak", secretKey: "sk", bucket: "ws-archives"}, cfg.s3)
	require.Equal(t, defaultDockerHost, cfg.dockerHost)
	require.Equal(t, contracts.DefaultLimits, cfg.limits)

	// Limits and image pulling are configurable.
	vars["CONVERGE_MAX_RUNNING_PER_USER"] = "5"
	cfg, problems = resolveServe(t, mapEnv(t, vars), "--max-running-global", "7", "--pull-images")
	require.Empty(t, problems)
	require.Equal(t, contracts.Limits{MaxRunningPerUser: 5, MaxRunningGlobal: 7}, cfg.limits)
	require.True(t, cfg.pullImages)

	// Defaults; --fake needs only the tokens.
	cfg, problems = resolveServe(t, mapEnv(t, map[string]string{"CONVERGE_TOKENS": testTokens}), "--fake")
	require.Empty(t, problems)
	require.Equal(t, "127.0.0.1:8080", cfg.listen)
	require.Equal(t, "box-1", cfg.instance)
	require.Equal(t, "auto", cfg.logFormat)
	require.True(t, cfg.fake)

	_, problems = resolveServe(t, mapEnv(t, nil), "--fake")
	require.Equal(t, []string{"CONVERGE_TOKENS: required: the API's bearer tokens, e.g. tok1=alice,tok2=bob:admin"}, problems)
	_, problems = resolveServe(t, mapEnv(t, map[string]string{"CONVERGE_TOKENS": testTokens, "CONVERGE_MAX_RUNNING_GLOBAL": "0"}), "--fake")
	require.Equal(t, []string{`CONVERGE_MAX_RUNNING_GLOBAL: "0": want a whole number from 1 to 1000000`}, problems)

	code := serveCmd(t, mapEnv(t, nil), io.Discard, io.Discard, "--fake", "extra")
	require.Equal(t, cli.ExitUsage, code)
	var errb bytes.Buffer
	code = serveCmd(t, mapEnv(t, nil), io.Discard, &errb, "--nope")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errb.String(), "--nope")
}

func TestServeNamesTheServiceItCannotReach(t *testing.T) {
	vars := map[string]string{
		"CONVERGE_TOKENS": testTokens, "DATABASE_URL": "postgres://u:p@127.0.0.1:1/converge?connect_timeout=2", "REDIS_URL": "redis://127.0.0.1:1",
		"S3_ENDPOINT": "http://127.0.0.1:1", "S3_ACCESS_KEY": "ak", "S3_SECRET_KEY": "sk", "S3_BUCKET": "arch",
	}
	env := mapEnv(t, vars)
	env.backends = chooseBackends
	var out, errb bytes.Buffer
	code := serveCmd(t, env, &out, &errb, "--log-format", "json")
	require.Equal(t, cli.ExitFailed, code)
	require.Contains(t, errb.String(), "converge serve: connect to DATABASE_URL:")
}

// serveFake runs "serve --fake" in-process on a free port and returns its
// address, the backends it opened and a function that stops it and
// returns its exit code.
func serveFake(t *testing.T, stderr io.Writer, extra ...string) (string, *fakeBackends, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	fb := &fakeBackends{}
	env := mapEnv(t, map[string]string{"CONVERGE_TOKENS": tokA + "=alice," + tokR + "=root:admin"})
	env.backends = func(cfg serveConfig) backends {
		require.True(t, cfg.fake)
		return fb
	}
	addrs := make(chan string, 1)
	env.listening = func(addr string) { addrs <- addr }
	done := make(chan int, 1)
	args := append([]string{"--fake", "--listen", "127.0.0.1:0", "--instance", "test-1", "--log-format", "json"}, extra...)
	go func() {
		done <- run(ctx, env, append([]string{"serve"}, args...), io.Discard, stderr)
	}()
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

	status, body = httpDo(t, http.MethodPost, base+"/api/v1/workspaces", tokA, `{"name":"dev","image_ref":"img:1"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["id"].(string)

	// The coordinator, on the fakes and the real clock, brings it up.
	require.Eventually(t, func() bool {
		status, body = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+id, tokA, "")
		return status == http.StatusOK && body["display_state"] == "RUNNING" && body["operation"] == "NONE"
	}, 20*time.Second, 100*time.Millisecond, "last: %v", body)
	require.Equal(t, "test-1", fb.world.Store.Holder())

	// The completion's metric is counted once its write has returned,
	// which the API may show a moment before: wait for it.
	var metrics string
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		metrics = string(b)
		return strings.Contains(metrics, "\nconverge_operations_completed_total{operation=\"STARTING\"} 1\n")
	}, 10*time.Second, 50*time.Millisecond, "STARTING's completion never counted: %s", metrics)
	require.Contains(t, metrics, "\nconverge_coordinator_leader 1\n")

	// An open event stream does not hold up the shutdown.
	sctx, scancel := context.WithCancel(t.Context())
	defer scancel()
	sreq, err := http.NewRequestWithContext(sctx, http.MethodGet, base+"/api/v1/workspaces/"+id+"/events", nil)
	require.NoError(t, err)
	sreq.Header.Set("Authorization", "Bearer "+tokA)
	sresp, err := http.DefaultClient.Do(sreq)
	require.NoError(t, err)
	defer sresp.Body.Close()
	require.Equal(t, http.StatusOK, sresp.StatusCode)

	start := time.Now()
	require.Equal(t, cli.ExitOK, stop())
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
	env := mapEnv(t, map[string]string{"CONVERGE_TOKENS": testTokens})
	env.backends = chooseBackends
	logs := &syncBuffer{}
	code := serveCmd(t, env, io.Discard, logs, "--fake", "--listen", ln.Addr().String(), "--log-format", "json")
	require.Equal(t, cli.ExitFailed, code)
	require.Contains(t, logs.String(), "cannot listen (--listen / LISTEN_ADDR)")
}

func TestProbeHealthReportsTheFailingService(t *testing.T) {
	fb := &fakeBackends{}
	st, err := fb.open(t.Context(), serveConfig{instance: "p"}, nil)
	require.NoError(t, err)
	require.NoError(t, st.health(t.Context()))
	fb.world.SetHook(func(c wsfakes.Call) error {
		if c.Port == "bus" {
			return errors.New("connection refused")
		}
		return nil
	})
	require.ErrorContains(t, st.health(t.Context()), "bus: connection refused")
}

// --fake-faults makes the fakes fail the calls it names, so ERROR and an
// administrator's recovery can be tried with nothing installed.
func TestServeFakeInjectsFaults(t *testing.T) {
	addr, _, stop := serveFake(t, io.Discard, "--fake-faults", "instances.Start=CONTAINER_CREATE_FAILED")
	base := "http://" + addr
	status, body := httpDo(t, http.MethodPost, base+"/api/v1/workspaces", tokA, `{"name":"dev","image_ref":"img:1"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["id"].(string)
	require.Eventually(t, func() bool {
		status, body = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+id, tokA, "")
		return status == http.StatusOK && body["display_state"] == "ERROR"
	}, 20*time.Second, 100*time.Millisecond, "last: %v", body)
	errView := body["error"].(map[string]any)
	require.Contains(t, errView["message"], "injected by --fake-faults")
	require.Equal(t, true, errView["terminal"], "CONTAINER_CREATE_FAILED needs an administrator")
	status, _ = httpDo(t, http.MethodPost, base+"/api/v1/workspaces/"+id+":recover", tokR, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, cli.ExitOK, stop())
}

func TestParseFakeFaults(t *testing.T) {
	fs, err := parseFakeFaults("instances.Start=CONTAINER_START_FAILED@50, storage.Archive=S3_ACCESS_ERROR")
	require.NoError(t, err)
	require.Equal(t, []fakeFault{
		{port: "instances", method: "Start", code: contracts.CodeContainerStartFailed, percent: 50},
		{port: "storage", method: "Archive", code: contracts.CodeS3AccessError, percent: 100},
	}, fs)
	for _, bad := range []string{"instances.Start", "Start=DISK_FULL", "instances.Start=NOPE", "instances.Start=DISK_FULL@0", "moon.Land=DISK_FULL"} {
		_, err := parseFakeFaults(bad)
		require.Error(t, err, bad)
	}
	code := serveCmd(t, mapEnv(t, map[string]string{"CONVERGE_TOKENS": testTokens}), io.Discard, io.Discard, "--fake-faults", "instances.Start=DISK_FULL")
	require.Equal(t, cli.ExitUsage, code, "fault injection needs --fake")
}

// devWait bounds each wait of TestServeDev on the control plane: a delete
// from RUNNING is a stop, an archive (a storage job's container) and a
// delete, each a round of Docker calls that a loaded shared engine has
// been seen to take minutes over (DR384); the waits end as soon as their
// condition holds.
const devWait = 5 * time.Minute

// serve --dev brings up PostgreSQL, Redis and MinIO and a working control
// plane on them, and prints where everything is and an admin token.
func TestServeDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containers")
	}
	if err := testenvDocker(); err != nil {
		if os.Getenv("CONVERGE_REQUIRE_REAL") == "1" {
			t.Fatalf("no Docker engine: %v (and CONVERGE_REQUIRE_REAL=1 requires the real tier)", err)
		}
		t.Skipf("no Docker engine: real tier skipped (%v)", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	env := mapEnv(t, map[string]string{"CONVERGE_STORAGE_JOB_IMAGE": os.Getenv("CONVERGE_STORAGE_JOB_IMAGE")})
	env.backends = chooseBackends
	addrs := make(chan string, 1)
	env.listening = func(addr string) { addrs <- addr }
	out, logs := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, env, []string{"serve", "--dev", "--listen", "127.0.0.1:0", "--instance", "dev-1"}, out, logs)
	}()
	var addr string
	select {
	case addr = <-addrs:
	case code := <-done:
		t.Fatalf("serve --dev exited with %d: %s", code, logs.String())
	case <-time.After(5 * time.Minute):
		t.Fatal("serve --dev did not start")
	}
	banner := out.String()
	require.Contains(t, banner, "http://"+addr+"/api/v1")
	require.Contains(t, banner, "postgres://")
	require.Contains(t, banner, "redis://")
	m := regexp.MustCompile(`token\s+(dev-[0-9a-f]+)`).FindStringSubmatch(banner)
	require.NotNil(t, m, banner)
	tok := m[1]
	lm := regexp.MustCompile(`labelled org\.wsconverge\.managed=(dev-[0-9a-f]+), removed when this process stops`).FindStringSubmatch(banner)
	require.NotNil(t, lm, banner)
	managed := lm[1]
	base := "http://" + addr
	image := os.Getenv("CONVERGE_WORKSPACE_AGENT_IMAGE")
	if image == "" {
		image = "converge/workspace-agent:dev"
	}
	status, body := httpDo(t, http.MethodPost, base+"/api/v1/workspaces", tok, `{"name":"dev","image_ref":"`+image+`"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["id"].(string)
	engine := devEngine(t, id, managed)
	require.Eventually(t, func() bool {
		status, body = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+id, tok, "")
		return status == http.StatusOK && body["display_state"] == "RUNNING" && body["operation"] == "NONE"
	}, devWait, 250*time.Millisecond, "last: %v\n%s", body, logs.String())
	require.True(t, engine.has(t), "ws-%s is RUNNING but the engine has no such container and volume", id)
	// Deleting the workspace removes its container and volume from the
	// engine: the API answers 404 as soon as the row is soft-deleted, and
	// the coordinator's DELETING operation removes both after that.
	status, _ = httpDo(t, http.MethodDelete, base+"/api/v1/workspaces/"+id, tok, "")
	require.Equal(t, http.StatusAccepted, status)
	require.Eventually(t, func() bool {
		status, _ = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+id, tok, "")
		return status == http.StatusNotFound
	}, devWait, 250*time.Millisecond)
	require.Eventually(t, func() bool { return !engine.has(t) }, devWait, 250*time.Millisecond,
		"ws-%s or its volume is still on the engine after the delete\n%s", id, logs.String())

	// A workspace still running when the process stops goes with it
	// (issue 23: its container and volume were left behind): the
	// database that knew it stops too.
	status, body = httpDo(t, http.MethodPost, base+"/api/v1/workspaces", tok, `{"name":"left","image_ref":"`+image+`"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	leftID := body["id"].(string)
	left := devEngine(t, leftID, managed)
	require.Eventually(t, func() bool {
		status, body = httpDo(t, http.MethodGet, base+"/api/v1/workspaces/"+leftID, tok, "")
		return status == http.StatusOK && body["display_state"] == "RUNNING" && body["operation"] == "NONE"
	}, devWait, 250*time.Millisecond, "last: %v\n%s", body, logs.String())
	require.True(t, left.has(t))
	cancel()
	select {
	case code := <-done:
		require.Equal(t, cli.ExitOK, code, logs.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("serve --dev did not stop")
	}
	require.Contains(t, logs.String(), "stopping PostgreSQL, Redis and MinIO")
	require.Contains(t, logs.String(), "removed the workspaces of this --dev process")
	require.False(t, left.has(t), "the running workspace's container and volume were removed with the process")
}

func testenvDocker() error { return testenv.DockerErr() }

// devObjects is what `serve --dev` put on the Docker engine for one
// workspace, seen through a provider of its own with the same managed
// label.
type devObjects struct {
	prov *dockerprov.Provider
	id   string
}

// devEngine watches workspace id's container and volume on the engine, and
// removes both when the test ends, whatever happened: a failed test leaves
// nothing running (only this workspace's objects, never another dev
// session's).
func devEngine(t *testing.T, id, managed string) devObjects {
	t.Helper()
	prov, err := dockerprov.New(t.Context(), dockerprov.Config{ManagedValue: managed})
	require.NoError(t, err)
	t.Cleanup(func() { prov.Close() })
	contracttest.CleanupWorkspace(t, prov, prov, id)
	return devObjects{prov: prov, id: id}
}

// has reports whether the workspace's container or its volume is on the
// engine.
func (d devObjects) has(t *testing.T) bool {
	t.Helper()
	ctrs, err := d.prov.List(t.Context())
	require.NoError(t, err)
	for _, c := range ctrs {
		if c.WorkspaceID == d.id {
			return true
		}
	}
	vols, err := d.prov.ListVolumes(t.Context())
	require.NoError(t, err)
	return slices.Contains(vols, d.id)
}

// Bad values are refused in every mode, --fake and --dev included (issue
// 23: --restore-max-bytes -5 was accepted), and so are short tokens: exit
// 2 and a line naming the setting.
func TestServeRefusesBadLimitsAndShortTokens(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{map[string]string{"CONVERGE_TOKENS": testTokens}, []string{"--fake", "--restore-max-bytes", "-5"}, `--restore-max-bytes: "-5": want a whole number, 0 or more`},
		{map[string]string{"CONVERGE_TOKENS": testTokens}, []string{"--dev", "--restore-max-entries=-1"}, `--restore-max-entries: "-1": want a whole number, 0 or more`},
		{map[string]string{"CONVERGE_TOKENS": "x=alice"}, []string{"--fake"}, "CONVERGE_TOKENS: entry 1: the token has 1 characters; a token needs at least 16"},
		{map[string]string{"CONVERGE_TOKENS": testTokens}, []string{"--fake", "--max-streams", "0"}, `--max-streams: "0": want a whole number from 1 to 1000000`},
		{map[string]string{"CONVERGE_TOKENS": testTokens}, []string{"--fake", "--max-streams", "100", "--max-connections", "100"}, "--max-connections: 100: must exceed the event streams' bound (100)"},
	} {
		var errb bytes.Buffer
		code := serveCmd(t, mapEnv(t, tc.vars), io.Discard, &errb, tc.args...)
		require.Equal(t, cli.ExitUsage, code, "%v: %s", tc.args, errb.String())
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		require.Contains(t, lines[0], tc.want)
		require.Len(t, lines, 2, "one line, then the pointer to --help: %s", errb.String())
	}
}

// serve bounds the event streams (issue 23: 20,000 streams exhausted the
// server): with small bounds the stream beyond them gets 429 with the
// API's JSON error, and /healthz still answers.
func TestServeCapsEventStreams(t *testing.T) {
	addr, _, stop := serveFake(t, io.Discard, "--max-streams-per-user", "1", "--max-streams", "2", "--max-connections", "16")
	base := "http://" + addr
	status, body := httpDo(t, http.MethodPost, base+"/api/v1/workspaces", tokA, `{"name":"dev","image_ref":"img:1"}`)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["id"].(string)
	open := func() *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/workspaces/"+id+"/events", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tokA)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	first := open()
	require.Equal(t, http.StatusOK, first.StatusCode)
	second := open()
	require.Equal(t, http.StatusTooManyRequests, second.StatusCode)
	require.Equal(t, "application/json; charset=utf-8", second.Header.Get("Content-Type"))
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(second.Body).Decode(&e))
	require.Equal(t, "TOO_MANY_STREAMS", e.Error.Code)
	require.NotEmpty(t, e.Error.Message)
	status, _ = httpDo(t, http.MethodGet, base+"/healthz", "", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, cli.ExitOK, stop())
}

// serve bounds each connection as a production API server does (issue
// 23): headers over maxHeaderBytes are refused, a request must be read
// within its timeouts, an idle connection is closed; and net/http's own
// answers to requests it cannot read are the API's JSON errors, not
// text/plain. Headers within the bound are served.
func TestServeBoundsEachConnection(t *testing.T) {
	srv := newAPIServer(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	require.Equal(t, maxHeaderBytes, srv.MaxHeaderBytes)
	require.Equal(t, readHeaderTimeout, srv.ReadHeaderTimeout)
	require.Equal(t, readTimeout, srv.ReadTimeout)
	require.Equal(t, idleTimeout, srv.IdleTimeout)
	require.Positive(t, srv.ReadHeaderTimeout)
	require.Positive(t, srv.IdleTimeout)
	require.Less(t, srv.ReadHeaderTimeout, srv.ReadTimeout)
	require.Zero(t, srv.WriteTimeout, "a write timeout would cut every event stream")

	addr, _, stop := serveFake(t, io.Discard)
	exchange := func(raw string) (int, string, map[string]any) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		_, err = io.WriteString(conn, raw)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, resp.Header.Get("Content-Type"), body
	}
	codeOf := func(body map[string]any) string {
		e, ok := body["error"].(map[string]any)
		require.True(t, ok, "%v", body)
		return e["code"].(string)
	}
	status, ctype, body := exchange("GET /healthz HTTP/1.1\r\n\r\n")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "application/json; charset=utf-8", ctype)
	require.Equal(t, contracts.APIBadRequest, codeOf(body))
	status, ctype, body = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", maxHeaderBytes+8<<10) + "\r\n\r\n")
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status)
	require.Equal(t, "application/json; charset=utf-8", ctype)
	require.Equal(t, "HEADERS_TOO_LARGE", codeOf(body))
	status, _, body = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", maxHeaderBytes/2) + "\r\n\r\n")
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, cli.ExitOK, stop())
}
