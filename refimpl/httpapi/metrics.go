package httpapi

import (
	"context"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/httpapi/promtext"
)

// Metrics is the process's metrics registry with the families the API and
// the coordinator feed. It is safe for concurrent use.
type Metrics struct {
	reg *promtext.Registry

	requests *promtext.CounterVec   // route, method, status
	latency  *promtext.HistogramVec // route
	streams  promtext.Gauge

	steps     promtext.Histogram
	leader    promtext.Gauge
	started   *promtext.CounterVec // operation
	completed *promtext.CounterVec // operation
	failed    *promtext.CounterVec // operation
	attempts  *promtext.CounterVec // operation (failed attempts that will be retried)
}

// NewMetrics registers converge's metric families on a new registry.
func NewMetrics() *Metrics {
	reg := promtext.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: reg.Counter("converge_http_requests_total",
			"HTTP requests served, by route template, method and status code.", "route", "method", "status"),
		latency: reg.Histogram("converge_http_request_duration_seconds",
			"Time to answer an HTTP request, by route template (event streams excluded).", promtext.DefBuckets, "route"),
		streams: reg.Gauge("converge_sse_streams",
			"Event streams currently open.").With(),
		steps: reg.Histogram("converge_coordinator_step_duration_seconds",
			"Time one coordinator step took (leadership check and the components due).", promtext.DefBuckets).With(),
		leader: reg.Gauge("converge_coordinator_leader",
			"1 while this process's coordinator instance leads, else 0.").With(),
		started: reg.Counter("converge_operations_started_total",
			"Operations claimed by this process's StateReconciler, by kind.", "operation"),
		completed: reg.Counter("converge_operations_completed_total",
			"Operations completed (observed done) by this process's StateReconciler, by kind.", "operation"),
		failed: reg.Counter("converge_operations_failed_total",
			"Operations that ended in ERROR (a terminal error), by kind.", "operation"),
		attempts: reg.Counter("converge_operation_attempts_failed_total",
			"Failed actuator attempts recorded for a retry, by operation kind.", "operation"),
	}
	m.leader.Set(0)
	for _, op := range contracts.AllOperations[1:] {
		for _, v := range []*promtext.CounterVec{m.started, m.completed, m.failed, m.attempts} {
			v.With(string(op))
		}
	}
	return m
}

// Registry is the underlying registry, for a process's own extra metrics.
func (m *Metrics) Registry() *promtext.Registry { return m.reg }

func (m *Metrics) observeRequest(route, method string, status int, took time.Duration, timed bool) {
	m.requests.With(route, method, strconv.Itoa(status)).Inc()
	if timed {
		m.latency.With(route).Observe(took.Seconds())
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
	if !ok {
		return
	}
	switch ev {
	case OpStarted:
		m.started.With(string(op)).Inc()
	case OpCompleted:
		m.completed.With(string(op)).Inc()
	case OpFailed:
		m.failed.With(string(op)).Inc()
	case OpAttemptFailed:
		m.attempts.With(string(op)).Inc()
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
