package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// errorEntry: SPEC 4.2.4, 4.2.5 and the table of 1.5. A workspace enters
// ERROR for a cause, and only then: C12 counts a terminal ERROR as
// converged, so a reconciler that gives up too soon would otherwise pass
// for one that converges. Judged at each reconciler write that sets a
// terminal error_info on a workspace with an operation in progress (one
// that already carried a terminal error, the HealthMonitor's Mismatch,
// is the ERROR entry of an existing cause and is not judged):
//
//   - reason Timeout: the operation ran longer than its SPEC timeout
//     (4.2.3), counted from the op_started_at of its claim;
//   - reason RetryExceeded: at least MaxAttempts calls on the workspace
//     failed since its claim ("at most three attempts in all", and no
//     fewer);
//   - any other reason (DataLost, the administrator-only codes), unless
//     the workspace's health is ERROR (step 2's entry, whose cause is the
//     health): a call
//     on the workspace failed since its claim with a provider code that
//     1.5 makes terminal at once (its error begins with the code), or
//     MaxAttempts calls failed (a last error recorded under its own
//     reason rather than RetryExceeded is a naming matter, not an early
//     give-up).
//
// Failed calls are counted from the history: port calls and DB writes on
// the workspace by coordinator instances, whoever made them, that failed
// or whose answer a fault replaced by an error. A failed DB write counts
// (SPEC does not say whether a step of an operation that writes, as
// RESTORING stores its marker, fails the attempt when the write does),
// and so does a failed write of a failure's own record: the count may
// exceed the attempts, never fall short of them. error_count is not
// used: a DB fault may lose its increments.
type errorEntry struct {
	base
	// failed counts, per workspace with an operation, the failed calls
	// on it since its claim; atOnce notes whether one of them failed with
	// a code that is terminal at once.
	failed map[string]int
	atOnce map[string]bool
}

func (*errorEntry) Name() string     { return "error-entry" }
func (*errorEntry) Contract() string { return "4.2.4" }

func (c *errorEntry) Observe(s *State, e *history.Event, r *Report) {
	if c.failed == nil {
		c.failed, c.atOnce = map[string]int{}, map[string]bool{}
	}
	broke := (e.Kind == history.KindCall || e.Kind == history.KindWrite) && e.Err != ""
	lostAnswer := e.Kind == history.KindFault && e.Method == FLostResp // the caller saw a failure
	if (broke || lostAnswer) && e.Workspace != "" && s.Leader.EpochOf[e.Instance] > 0 {
		c.failed[e.Workspace]++
		if broke && specTerminalAtOnce(e.Err) {
			c.atOnce[e.Workspace] = true
		}
		return
	}
	if !reconcilerWrite(e) {
		return
	}
	row, p := s.Row(e.Workspace), e.Patch
	if row == nil {
		return
	}
	if classify(row, p) == tClaim {
		c.failed[e.Workspace] = 0
		delete(c.atOnce, e.Workspace)
		return
	}
	if !p.ErrorInfo.Set || p.ErrorInfo.V == nil || !p.ErrorInfo.V.IsTerminal || row.Operation == contracts.OpNone || row.Terminal() {
		return
	}
	r.Exercise()
	info, op, failed := p.ErrorInfo.V, row.Operation, c.failed[e.Workspace]
	switch info.Reason {
	case contracts.ReasonTimeout:
		if row.OpStartedAt.IsZero() {
			return // claim-op-started-at's to judge
		}
		if ran := e.At.Sub(row.OpStartedAt); ran <= specTimeout(op) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s entered ERROR (Timeout) %s after it started at %s: its timeout is %s", op, ran.Round(time.Millisecond),
				stamp(row.OpStartedAt), specTimeout(op)), e.Seq)
		}
	case contracts.ReasonRetryExceeded:
		if failed < specMaxAttempts {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s entered ERROR (RetryExceeded) after %d failed call(s) on it since its claim: %d attempts are due first", op, failed, specMaxAttempts), e.Seq)
		}
	default:
		switch {
		case row.HealthStatus == contracts.HealthError:
			// SPEC 4.2 step 2: health ERROR with an operation in
			// progress enters ERROR; its cause is the health (the
			// HealthMonitor's Mismatch, which it could not write over
			// a retryable error_info), not a call.
		case failed == 0:
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s entered ERROR (%s) with no failed call on it since its claim", op, info.Reason), e.Seq)
		case !c.atOnce[e.Workspace] && failed < specMaxAttempts:
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s entered ERROR (%s) after %d failed call(s) on it since its claim, none with a code that is terminal at once (SPEC 1.5): %d attempts are due first",
				op, info.Reason, failed, specMaxAttempts), e.Seq)
		}
	}
}
