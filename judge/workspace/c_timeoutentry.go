package workspace

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// timeoutEntry: SPEC 4.2.3, the Timeout ERROR entry itself (the timeouts
// and error-entry checkers judge when it comes; this one judges what it
// is and what it must give way to). Judged at every reconciler write that
// records an error_info with reason Timeout:
//
//   - "Completion is checked first" (and 4.2 step 3: "Check completion
//     first (4.2.2), then the timeout (4.2.3)"): a running operation whose
//     completion condition (4.2.2's column, read from the replayed table)
//     the reconciler's tick read completes; it does not time out. The
//     tick read the condition for sure when the write that made it hold
//     precedes the Timeout entry and is not the writing instance's own
//     reconciler write of that tick: a write of another instance applied
//     before this instance's leadership, hence before any read of it;
//     a HealthMonitor write of the same instance came from a component
//     that runs before the reconciler in the step, or in an earlier step
//     (SPEC 3: "runs every component that is due, in a fixed order"; a
//     HealthMonitor ordered after the reconciler writes after it). A
//     failed write or lost answer of the writing instance on the
//     workspace since the condition came to hold excuses it: its
//     completion (the last-access stamp first) may have failed there, and
//     the tick that failed skips the workspace (SPEC 3), but which tick
//     it was the history does not say.
//   - "with reason Timeout, terminal": a Timeout error_info is never
//     recorded as retryable (1.5's table: terminal at once, not retried).
//   - "context {"operation": "<op>", "elapsed_seconds": <n>}": the context
//     names the operation that timed out, and n is now − op_started_at in
//     seconds, now being the writer's clock at its step: more than the
//     timeout (the entry is made "when now − op_started_at exceeds the
//     timeout") and no more than the time from op_started_at to the
//     write; a second of rounding either way is allowed.
//
// Evidence: the StateReconciler's applied writes, the row replayed before
// each, the writes that made each row's completion condition hold (their
// writer and instance), and the writing instance's failed writes and lost
// answers.
type timeoutEntry struct {
	base
	// made: workspace → the applied write that last made its completion
	// condition hold (absent while it does not hold).
	made map[string]madeBy
	// failed: instance → workspace → the sequence number of its last
	// failed write or lost answer on it.
	failed map[string]map[string]int64
}

type madeBy struct {
	seq       int64
	at        time.Time
	instance  string
	component contracts.Component
}

func (*timeoutEntry) Name() string     { return "timeout-entry" }
func (*timeoutEntry) Contract() string { return "4.2.3" }

func (c *timeoutEntry) init() {
	if c.made == nil {
		c.made, c.failed = map[string]madeBy{}, map[string]map[string]int64{}
	}
}

func (c *timeoutEntry) Observe(s *State, e *history.Event, r *Report) {
	c.init()
	failedWrite := e.Kind == history.KindWrite && e.Err != ""
	lost := e.Kind == history.KindFault && e.Method == FLostResp
	if (failedWrite || lost) && e.Workspace != "" && e.Instance != "" {
		if c.failed[e.Instance] == nil {
			c.failed[e.Instance] = map[string]int64{}
		}
		c.failed[e.Instance][e.Workspace] = e.Seq
		return
	}
	if !reconcilerWrite(e) || !e.Patch.ErrorInfo.Set || e.Patch.ErrorInfo.V == nil || e.Patch.ErrorInfo.V.Reason != contracts.ReasonTimeout {
		return
	}
	row, info := s.Row(e.Workspace), e.Patch.ErrorInfo.V
	if row == nil {
		return
	}
	if !info.IsTerminal {
		r.Exercise()
		r.Flag(e.Workspace, e.At, fmt.Sprintf("a Timeout error_info recorded as retryable (is_terminal false) on %s: a timeout is terminal at once and never retried", row.Operation), e.Seq)
		return
	}
	if row.Operation == contracts.OpNone || classify(row, e.Patch) != tError {
		return
	}
	r.Exercise()
	op := row.Operation
	if m, ok := c.made[e.Workspace]; ok && specCompleted(row) && (m.instance != e.Instance || m.component != contracts.CompStateReconciler) {
		if c.failed[e.Instance][e.Workspace] < m.seq {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s started %s entered ERROR (Timeout) although the table showed it complete (%s) since %s, written by %s (%s) before this tick read it: completion is checked first",
				op, stamp(row.OpStartedAt), completionShown(row), stamp(m.at), m.instance, m.component), e.Seq)
		}
	}
	if msg := badTimeoutContext(op, info.Context, row.OpStartedAt, e.At); msg != "" {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s entered ERROR (Timeout) with context %v: %s", op, info.Context, msg), e.Seq)
	}
}

// AfterApply follows which write made each row's completion condition
// hold.
func (c *timeoutEntry) AfterApply(s *State, e *history.Event, _ *Report) {
	c.init()
	if e.Kind != history.KindWrite || !e.Applied || e.Patch == nil {
		return
	}
	w := s.Row(e.Workspace)
	switch {
	case w == nil || !specCompleted(w):
		delete(c.made, e.Workspace)
	case !c.holds(e.Workspace):
		c.made[e.Workspace] = madeBy{seq: e.Seq, at: e.At, instance: e.Instance, component: e.Component}
	}
}

func (c *timeoutEntry) holds(id string) bool {
	_, ok := c.made[id]
	return ok
}

// completionShown names what the row shows that completes its operation.
func completionShown(w *contracts.Workspace) string {
	s := "observed " + string(w.ObservedStatus)
	switch w.Operation {
	case contracts.OpRestoring:
		s += ", restore_marker = archive_key"
	case contracts.OpArchiving:
		s += ", archive_key = the key of op_id"
	}
	return s
}

// badTimeoutContext says what is wrong with a Timeout entry's context for
// op, started at started and entered at at, or "" when nothing is.
func badTimeoutContext(op contracts.Operation, ctx map[string]any, started, at time.Time) string {
	if got, _ := ctx["operation"].(string); got != string(op) {
		return fmt.Sprintf(`"operation" is %q, want %q`, ctx["operation"], op)
	}
	n, ok := number(ctx["elapsed_seconds"])
	if !ok {
		return fmt.Sprintf(`"elapsed_seconds" is %v, not a number of seconds`, ctx["elapsed_seconds"])
	}
	if started.IsZero() {
		return ""
	}
	lo, hi := specTimeout(op).Seconds()-1, at.Sub(started).Seconds()+1
	if n < lo || n > hi {
		return fmt.Sprintf(`"elapsed_seconds" is %s, want now - op_started_at: more than the timeout (%s) and at most the %s from op_started_at to the write`,
			strconv.FormatFloat(n, 'f', -1, 64), specTimeout(op), at.Sub(started).Round(time.Millisecond))
	}
	return ""
}

// number reads a JSON number of a context however it was decoded.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
