package httpapi

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$`)
	helpLine   = regexp.MustCompile(`^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$`)
	typeLine   = regexp.MustCompile(`^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$`)
)

// scrape reads /metrics and returns each sample's value by "name{labels}",
// checking that every line is a HELP, a TYPE or a sample of a declared
// family.
func scrape(t *testing.T, e *env) map[string]float64 {
	t.Helper()
	r := e.call(http.MethodGet, "/metrics", "", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", r.header.Get("Content-Type"))
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
	require.Equal(t, 1.0, s[`converge_http_requests_total{route="/api/v1/workspaces",method="POST",status="201"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{route="/api/v1/workspaces/{id}",method="GET",status="200"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{route="/api/v1/workspaces/{id}",method="GET",status="404"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{route="/api/v1/workspaces",method="GET",status="401"}`])
	require.Equal(t, 1.0, s[`converge_http_requests_total{route="unmatched",method="GET",status="404"}`])
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
	retryable, terminal := contracts.FailurePatch(&starting, contracts.CodeImagePullFailed, "pull failed", nil, t0)
	require.False(t, terminal)
	lost, terminal := contracts.FailurePatch(&starting, contracts.CodeChecksumMismatch, "bad sum", nil, t0)
	require.True(t, terminal)
	starting.OpStartedAt = t0
	timedOut := contracts.ErrorEntryPatch(&starting, contracts.TimeoutInfo(&starting, t0.Add(time.Hour)))
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
		"claim":               {rec, contracts.ClaimCond(contracts.OpStarting), contracts.ClaimPatch(&w, contracts.OpStarting, t0, "op"), want{contracts.OpStarting, OpStarted, true}},
		"completion":          {rec, opCond, contracts.CompletePatch(&starting), want{contracts.OpStarting, OpCompleted, true}},
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
	m.ObserveWrite(rec, opCond, contracts.CompletePatch(&starting), false)
	require.Zero(t, m.completed.With("STARTING").Value(), "a write whose condition failed counts nothing")
	m.ObserveWrite(rec, opCond, contracts.CompletePatch(&starting), true)
	m.ObserveWrite(rec, opCond, lost, true)
	m.ObserveWrite(rec, opCond, retryable, true)
	require.Equal(t, 1.0, m.completed.With("STARTING").Value())
	require.Equal(t, 1.0, m.failed.With("STARTING").Value())
	require.Equal(t, 1.0, m.attempts.With("STARTING").Value())
}
