package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Metrics is the process's metrics registry (prometheus/client_golang) with
// the families the API and the coordinator feed, plus the Go runtime's
// (go_*) and the process's (process_*) collectors. It is safe for
// concurrent use.
//
// Every label takes its values from a fixed set, so no client can grow the
// number of series: route is the route template (or "unmatched"), method
// one of the standard HTTP methods or "OTHER", status a code this API
// answers with, operation an operation kind.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	requests *prometheus.CounterVec   // route, method, status
	latency  *prometheus.HistogramVec // route
	streams  prometheus.Gauge

	steps     prometheus.Histogram
	leader    prometheus.Gauge
	started   *prometheus.CounterVec // operation
	completed *prometheus.CounterVec // operation
	failed    *prometheus.CounterVec // operation
	attempts  *prometheus.CounterVec // operation (failed attempts that will be retried)
}

// NewMetrics registers converge's metric families, and the Go and process
// collectors, on a new registry.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	f := promauto{reg}
	m := &Metrics{
		reg: reg,
		requests: f.counterVec("converge_http_requests_total",
			"HTTP requests served, by route template, method and status code.", "route", "method", "status"),
		latency: f.histogramVec("converge_http_request_duration_seconds",
			"Time to answer an HTTP request, by route template (event streams excluded).", "route"),
		streams: f.gauge("converge_sse_streams", "Event streams currently open."),
		steps: f.histogram("converge_coordinator_step_duration_seconds",
			"Time one coordinator step took (leadership check and the components due)."),
		leader: f.gauge("converge_coordinator_leader", "1 while this process's coordinator instance leads, else 0."),
		started: f.counterVec("converge_operations_started_total",
			"Operations claimed by this process's StateReconciler, by kind.", "operation"),
		completed: f.counterVec("converge_operations_completed_total",
			"Operations completed (observed done) by this process's StateReconciler, by kind.", "operation"),
		failed: f.counterVec("converge_operations_failed_total",
			"Operations that ended in ERROR (a terminal error), by kind.", "operation"),
		attempts: f.counterVec("converge_operation_attempts_failed_total",
			"Failed actuator attempts recorded for a retry, by operation kind.", "operation"),
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	for _, op := range contracts.AllOperations[1:] {
		for _, v := range []*prometheus.CounterVec{m.started, m.completed, m.failed, m.attempts} {
			v.WithLabelValues(string(op))
		}
	}
	return m
}

// promauto registers new collectors on one registry.
type promauto struct{ reg *prometheus.Registry }

func (f promauto) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(v)
	return v
}

func (f promauto) histogramVec(name, help string, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.DefBuckets}, labels)
	f.reg.MustRegister(v)
	return v
}

func (f promauto) histogram(name, help string) prometheus.Histogram {
	v := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.DefBuckets})
	f.reg.MustRegister(v)
	return v
}

func (f promauto) gauge(name, help string) prometheus.Gauge {
	v := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(v)
	return v
}

// Registry is the underlying registry, for a process's own extra metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ServeHTTP serves the registry in the Prometheus exposition format.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

// knownMethods are the method label's values besides methodOther.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true,
	http.MethodOptions: true, http.MethodTrace: true,
}

// methodOther is the method label of every non-standard method.
const methodOther = "OTHER"

// methodLabel maps a request method to its label value: a standard method
// as it is, anything else to "OTHER".
func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return methodOther
}

func (m *Metrics) observeRequest(route, method string, status int, took time.Duration, timed bool) {
	m.requests.WithLabelValues(route, methodLabel(method), strconv.Itoa(status)).Inc()
	if timed {
		m.latency.WithLabelValues(route).Observe(took.Seconds())
	}
}

// ObserveStep records one coordinator step; its signature is
// runner.Config.OnStep's.
func (m *Metrics) ObserveStep(took time.Duration, leader bool) {
	m.steps.Observe(took.Seconds())
	if leader {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// OpEvent is what a StateReconciler write did to an operation.
type OpEvent string

// Operation events.
const (
	OpStarted       OpEvent = "started"
	OpCompleted     OpEvent = "completed"
	OpFailed        OpEvent = "failed"         // entered ERROR
	OpAttemptFailed OpEvent = "attempt_failed" // a retryable failure recorded
)

// ClassifyWrite reads an operation event off a write: a StateReconciler
// write that sets operation to a kind is a claim (started); one that sets
// it back to NONE with a terminal error_info is an ERROR entry (failed),
// otherwise a completion of the operation its condition names; one that
// records a non-terminal error_info without touching operation is a failed
// attempt. ok is false for every other write.
func ClassifyWrite(w contracts.Writer, cond contracts.Cond, p contracts.Patch) (op contracts.Operation, ev OpEvent, ok bool) {
	if w.Component != contracts.CompStateReconciler {
		return "", "", false
	}
	info := p.ErrorInfo.V
	switch {
	case p.Operation.Set && p.Operation.V != contracts.OpNone:
		return p.Operation.V, OpStarted, true
	case p.Operation.Set && p.ErrorInfo.Set && info != nil && info.IsTerminal:
		op = info.Operation
		if cond.Operation.Set && cond.Operation.V != contracts.OpNone {
			op = cond.Operation.V
		}
		return op, OpFailed, op != "" && op != contracts.OpNone
	case p.Operation.Set:
		if cond.Operation.Set && cond.Operation.V != contracts.OpNone {
			return cond.Operation.V, OpCompleted, true
		}
	case p.ErrorInfo.Set && info != nil && !info.IsTerminal:
		op = info.Operation
		if cond.Operation.Set && cond.Operation.V != contracts.OpNone {
			op = cond.Operation.V
		}
		return op, OpAttemptFailed, op != "" && op != contracts.OpNone
	}
	return "", "", false
}

// ObserveWrite counts the operation event of an applied write.
func (m *Metrics) ObserveWrite(w contracts.Writer, cond contracts.Cond, p contracts.Patch, applied bool) {
	if !applied {
		return
	}
	op, ev, ok := ClassifyWrite(w, cond, p)
	if !ok || !op.Valid() {
		return
	}
	switch ev {
	case OpStarted:
		m.started.WithLabelValues(string(op)).Inc()
	case OpCompleted:
		m.completed.WithLabelValues(string(op)).Inc()
	case OpFailed:
		m.failed.WithLabelValues(string(op)).Inc()
	case OpAttemptFailed:
		m.attempts.WithLabelValues(string(op)).Inc()
	}
}

// InstrumentStore wraps a coordinator's store so that its StateReconciler's
// writes (Update) feed the operation counters. UpdateMany and MarkObserved
// pass through: only the HealthMonitor uses them, and its writes carry no
// operation events.
func (m *Metrics) InstrumentStore(s ports.Store) ports.Store { return meteredStore{Store: s, m: m} }

type meteredStore struct {
	ports.Store
	m *Metrics
}

func (s meteredStore) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	ok, err := s.Store.Update(ctx, w, id, cond, p)
	if err == nil {
		s.m.ObserveWrite(w, cond, p, ok)
	}
	return ok, err
}
