package httpapi

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$`)
	helpLine   = regexp.MustCompile(`^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$`)
	typeLine   = regexp.MustCompile(`^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$`)
)

// scrape reads /metrics and returns each sample's value by "name{labels}",
// checking that every line is a HELP, a TYPE or a sample of a declared
// family.
func scrape(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	r := e.call(http.MethodGet, "/metrics", "", "")
	require.Equal(t, http.StatusOK, r.status)
	require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4"), r.header.Get("Content-Type"))
	samples := map[string]float64{}
	declared := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n") {
		if helpLine.MatchString(line) {
			continue
		}
		if m := typeLine.FindStringSubmatch(line); m != nil {
			declared[m[1]] = true
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		require.NotNil(t, m, "not a sample line: %q", line)
		family := m[1]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(family, suffix); ok && declared[base] {
				family = base
			}
		}
		require.True(t, declared[family], "sample before its TYPE: %q", line)
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, line)
		samples[m[1]+m[2]] = v
	}
	return samples
}

func TestMetricsExposition(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	e.call(http.MethodGet, "/api/v1/workspaces/"+id, alice, "")
	e.call(http.MethodGet, "/api/v1/workspaces/"+id, bob, "")
	e.call(http.MethodGet, "/api/v1/workspaces", "", "")
	e.call(http.MethodGet, "/nope", "", "")
	e.metrics.ObserveStep(30*time.Millisecond, true)
	e.metrics.ObserveStep(2*time.Second, true)

	s := scrape(t, e)
	require.Equal(t, 1.0, s[`converge_http_requests_total{method="POST",route="/api/v1/workspaces",status="201"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{method="GET",route="/api/v1/workspaces/{id}",status="200"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{method="GET",route="/api/v1/workspaces/{id}",status="404"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{method="GET",route="/api/v1/workspaces",status="401"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{method="GET",route="unmatched",status="404"}`])
	require.Equal(t, 2.0, s[`converge_http_request_duration_seconds_count{route="/api/v1/workspaces/{id}"}`])
	require.Equal(t, 1.0, s[`converge_coordinator_leader`])
	require.Equal(t, 2.0, s[`converge_coordinator_step_duration_seconds_count`])
	require.Equal(t, 1.0, s[`converge_coordinator_step_duration_seconds_bucket{le="0.05"}`])
	require.Equal(t, 2.0, s[`converge_coordinator_step_duration_seconds_bucket{le="+Inf"}`])
	require.InDelta(t, 2.03, s[`converge_coordinator_step_duration_seconds_sum`], 1e-9)
	for _, op := range contracts.AllOperations[1:] {
		for _, fam := range []string{"started", "completed", "failed"} {
			v, ok := s[`converge_operations_`+fam+`_total{operation="`+string(op)+`"}`]
			require.True(t, ok, "%s %s is exported from the start", fam, op)
			require.Zero(t, v)
		}
	}
	require.Zero(t, s[`converge_sse_streams`])

	e.metrics.ObserveStep(time.Millisecond, false)
	require.Zero(t, scrape(t, e)[`converge_coordinator_leader`])
}

func TestClassifyWrite(t *testing.T) {
	w := contracts.NewWorkspace("w1", "alice", "dev", "img", t0)
	rec := contracts.Writer{Component: contracts.CompStateReconciler, Epoch: 3}
	starting := w
	starting.Operation = contracts.OpStarting
	retryable, terminal := decide.FailurePatch(&starting, contracts.CodeImagePullFailed, "pull failed", nil, t0)
	require.False(t, terminal)
	lost, terminal := decide.FailurePatch(&starting, contracts.CodeChecksumMismatch, "bad sum", nil, t0)
	require.True(t, terminal)
	starting.OpStartedAt = t0
	timedOut := decide.ErrorEntryPatch(&starting, decide.TimeoutInfo(&starting, t0.Add(time.Hour)))
	opCond := contracts.Cond{Operation: contracts.Some(contracts.OpStarting)}

	type want struct {
		op contracts.Operation
		ev OpEvent
		ok bool
	}
	for name, c := range map[string]struct {
		w    contracts.Writer
		cond contracts.Cond
		p    contracts.Patch
		want want
	}{
		"claim":               {rec, decide.ClaimCond(contracts.OpStarting), decide.ClaimPatch(&w, contracts.OpStarting, t0, "op"), want{contracts.OpStarting, OpStarted, true}},
		"completion":          {rec, opCond, decide.CompletePatch(&starting), want{contracts.OpStarting, OpCompleted, true}},
		"retryable failure":   {rec, opCond, retryable, want{contracts.OpStarting, OpAttemptFailed, true}},
		"terminal failure":    {rec, opCond, lost, want{contracts.OpStarting, OpFailed, true}},
		"timeout":             {rec, opCond, timedOut, want{contracts.OpStarting, OpFailed, true}},
		"restore marker":      {rec, opCond, contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: "k"})}, want{}},
		"health monitor":      {contracts.Writer{Component: contracts.CompHealthMonitor}, contracts.Cond{}, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}, want{}},
		"api":                 {contracts.Writer{Component: contracts.CompAPI}, contracts.Cond{}, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)}, want{}},
		"admin recovery":      {contracts.Writer{Component: contracts.CompAdmin}, contracts.Cond{}, contracts.RecoverPatch(), want{}},
		"none without a kind": {rec, contracts.Cond{}, contracts.Patch{Operation: contracts.Some(contracts.OpNone)}, want{}},
	} {
		op, ev, ok := ClassifyWrite(c.w, c.cond, c.p)
		require.Equal(t, c.want, want{op, ev, ok}, name)
	}

	m := NewMetrics()
	m.ObserveWrite(rec, opCond, decide.CompletePatch(&starting), false)
	require.Zero(t, testutil.ToFloat64(m.completed.WithLabelValues("STARTING")), "a write whose condition failed counts nothing")
	m.ObserveWrite(rec, opCond, decide.CompletePatch(&starting), true)
	m.ObserveWrite(rec, opCond, lost, true)
	m.ObserveWrite(rec, opCond, retryable, true)
	require.Equal(t, 1.0, testutil.ToFloat64(m.completed.WithLabelValues("STARTING")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.failed.WithLabelValues("STARTING")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.attempts.WithLabelValues("STARTING")))
}

// TestMetricsIncludeRuntimeCollectors: client_golang's Go and process
// collectors are registered.
func TestMetricsIncludeRuntimeCollectors(t *testing.T) {
	s := scrape(t, newEnv(t))
	_, ok := s["go_goroutines"]
	require.True(t, ok, "go_* metrics")
	_, ok = s["process_cpu_seconds_total"]
	require.True(t, ok, "process_* metrics")
}

// TestMetricsCardinalityIsBounded: any client, unauthenticated, can send
// any method. 5,000 requests with random method names leave the number of
// series bounded (every unknown method is "OTHER"), and neither a 405 nor
// a log line repeats a huge method.
func TestMetricsCardinalityIsBounded(t *testing.T) {
	var logs strings.Builder
	var logMu sync.Mutex
	e := newEnv(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	countSeries := func() int {
		n := 0
		for k := range scrape(t, e) {
			if strings.HasPrefix(k, "converge_http_requests_total{") {
				n++
			}
		}
		return n
	}
	before := countSeries()

	r := rand.New(rand.NewPCG(8, 8))
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	paths := []string{"/healthz", "/metrics", "/api/v1/workspaces", "/nope"}
	for i := range 5000 {
		method := make([]byte, 3+r.IntN(10))
		for j := range method {
			method[j] = letters[r.IntN(len(letters))]
		}
		resp := e.call(string(method), paths[i%len(paths)], "", "")
		require.Contains(t, []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusUnauthorized}, resp.status, string(method))
	}
	after := countSeries()
	// At most one new series per route and status: OTHER.
	require.LessOrEqual(t, after-before, 2*len(paths), "series grew from %d to %d", before, after)
	body := e.call(http.MethodGet, "/metrics", "", "").body
	require.Less(t, len(body), 64<<10, "the exposition stays small")
	require.Contains(t, string(body), `method="OTHER"`)

	huge := strings.Repeat("X", 100<<10)
	resp := e.call(huge, "/healthz", "", "")
	require.Equal(t, http.StatusMethodNotAllowed, resp.status)
	require.Less(t, len(resp.body), 512, "the 405 body does not echo the method")
	require.NotContains(t, string(resp.body), "XXXX")
	require.Equal(t, "GET, HEAD", resp.header.Get("Allow"))
	logMu.Lock()
	defer logMu.Unlock()
	require.NotContains(t, logs.String(), "XXXX", "nor does the log")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
