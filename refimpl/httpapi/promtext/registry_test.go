package promtext

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func render(t *testing.T, r *Registry) string {
	t.Helper()
	var b strings.Builder
	n, err := r.WriteTo(&b)
	require.NoError(t, err)
	require.Equal(t, int64(b.Len()), n)
	return b.String()
}

func TestCountersAndGaugesAreWrittenSorted(t *testing.T) {
	r := NewRegistry()
	req := r.Counter("http_requests_total", "Requests served.", "route", "status")
	req.With("/b", "200").Add(2)
	req.With("/a", "404").Inc()
	req.With("/a", "200").Inc()
	up := r.Gauge("app_leader", "1 while leading.")
	up.With().Set(1)
	up.With().Dec()
	up.With().Add(0.5)

	require.Equal(t, `# HELP app_leader 1 while leading.
# TYPE app_leader gauge
app_leader 0.5
# HELP http_requests_total Requests served.
# TYPE http_requests_total counter
http_requests_total{route="/a",status="200"} 1
http_requests_total{route="/a",status="404"} 1
http_requests_total{route="/b",status="200"} 2
`, render(t, r))
	require.Equal(t, 2.0, req.With("/b", "200").Value())
	require.Equal(t, 0.5, up.With().Value())
}

func TestHistogramBucketsAreCumulative(t *testing.T) {
	r := NewRegistry()
	h := r.Histogram("step_seconds", "Step duration.", []float64{0.1, 1}, "kind")
	for _, x := range []float64{0.05, 0.1, 0.5, 3} {
		h.With("a").Observe(x)
	}
	require.Equal(t, uint64(4), h.With("a").Count())
	require.Equal(t, `# HELP step_seconds Step duration.
# TYPE step_seconds histogram
step_seconds_bucket{kind="a",le="0.1"} 2
step_seconds_bucket{kind="a",le="1"} 3
step_seconds_bucket{kind="a",le="+Inf"} 4
step_seconds_sum{kind="a"} 3.65
step_seconds_count{kind="a"} 4
`, render(t, r))
}

func TestEscaping(t *testing.T) {
	r := NewRegistry()
	r.Counter("x_total", "a \\ b\nc", "v").With("q\"\\\n").Inc()
	require.Equal(t, "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\nx_total{v=\"q\\\"\\\\\\n\"} 1\n", render(t, r))
}

func TestRegistrationMistakesPanic(t *testing.T) {
	r := NewRegistry()
	r.Counter("ok_total", "")
	for name, f := range map[string]func(){
		"bad name":         func() { r.Counter("1bad", "") },
		"duplicate":        func() { r.Gauge("ok_total", "") },
		"bad label":        func() { r.Counter("a_total", "", "a-b") },
		"reserved label":   func() { r.Counter("b_total", "", "__x") },
		"le on histogram":  func() { r.Histogram("h1", "", []float64{1}, "le") },
		"unsorted buckets": func() { r.Histogram("h2", "", []float64{2, 1}) },
		"repeated bucket":  func() { r.Histogram("h3", "", []float64{1, 1}) },
		"no buckets":       func() { r.Histogram("h4", "", nil) },
		"label arity":      func() { r.Counter("c_total", "", "a").With() },
		"negative counter": func() { r.Counter("d_total", "").With().Add(-1) },
	} {
		require.Panics(t, f, name)
	}
}

func TestServeHTTP(t *testing.T) {
	r := NewRegistry()
	r.Counter("hits_total", "Hits.").With().Inc()
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, ContentType, rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Body.String(), "hits_total 1\n")
}
