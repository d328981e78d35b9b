package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// healthMismatchInfo: SPEC 4.1, health rule 2: "a container exists
// (running or not) and the volume does not → ERROR; if error_info is null
// the same write also sets it (the C3 exception), conditioned on
// error_info still being null: reason Mismatch, is_terminal: true, the
// row's operation and error_count, occurred_at now, context
// {"violation":"ContainerWithoutVolume","expected":"volume_exists=true",
// "actual":"false"}", with 1.5's members (a message among them, "also
// copied to error_message" by its writer, the StateReconciler: the
// HealthMonitor's exception covers error_info alone, C3).
//
// Judged on every write of the HealthMonitor, applied or not (its content
// is what the writer meant), against the row as replayed just before it:
//
//   - a write that sets error_info sets exactly that error: reason
//     Mismatch, terminal, a message, the row's operation and error_count,
//     an occurred_at (that it is now, the writer's clock at its step, is
//     now-values' to judge), the three context members; it is conditioned
//     on error_info being null, and leaves the row with health ERROR;
//   - a write that makes health ERROR on a row whose error_info is null
//     sets error_info in the same write: with error_info null, rule 1
//     (a terminal error_info) cannot be what made it ERROR, so rule 2 did.
//     Unless another write changed error_info within NowSlack before it:
//     the pass may have read the row before that write (a step lasts up
//     to NowSlack on a real clock) and seen a non-null error_info, which
//     rule 2 leaves as it is.
type healthMismatchInfo struct {
	base
	// infoAt: workspace → when an applied write last set its error_info.
	infoAt map[string]time.Time
}

// AfterApply follows the writes of error_info.
func (c *healthMismatchInfo) AfterApply(_ *State, e *history.Event, _ *Report) {
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.ErrorInfo.Set {
		if c.infoAt == nil {
			c.infoAt = map[string]time.Time{}
		}
		c.infoAt[e.Workspace] = e.At
	}
}

func (*healthMismatchInfo) Name() string     { return "health-mismatch-info" }
func (*healthMismatchInfo) Contract() string { return "4.1" }

func (c *healthMismatchInfo) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindWrite || e.Patch == nil || e.Component != contracts.CompHealthMonitor {
		return
	}
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	p := e.Patch
	setsInfo := p.ErrorInfo.Set && p.ErrorInfo.V != nil
	makesError := p.HealthStatus.Set && p.HealthStatus.V == contracts.HealthError && row.HealthStatus != contracts.HealthError
	switch {
	case setsInfo:
		r.Exercise()
		if why := badMismatchInfo(row, p.ErrorInfo.V, e); why != "" {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s set error_info %s on a row (operation %s, error_count %d): %s (SPEC 4.1, rule 2)",
				e.Instance, infoText(p.ErrorInfo.V), row.Operation, row.ErrorCount, why), e.Seq)
			return
		}
		if e.Cond == nil || !e.Cond.ErrorInfoNull {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s set error_info without conditioning its write on error_info still being null (SPEC 4.1, rule 2; C3)", e.Instance), e.Seq)
			return
		}
		if a := after(row, p, e.At); a.HealthStatus != contracts.HealthError {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s set the container-without-volume error_info but left health %s: the same write makes it ERROR (SPEC 4.1, rule 2)", e.Instance, a.HealthStatus), e.Seq)
		}
	case makesError && row.ErrorInfo == nil:
		r.Exercise()
		if at, ok := c.infoAt[e.Workspace]; ok && e.At.Sub(at) <= NowSlack {
			return
		}
		r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s made health ERROR on a row whose error_info is null without setting error_info in the same write: only rule 2 (a container without its volume) applies, and it sets the Mismatch (SPEC 4.1)",
			e.Instance), e.Seq)
	}
}

// badMismatchInfo says how info differs from the error_info SPEC 4.1's rule
// 2 writes on row at write e, or "" when it does not.
func badMismatchInfo(row *contracts.Workspace, info *contracts.ErrorInfo, e *history.Event) string {
	var bad []string
	if info.Reason != contracts.ReasonMismatch {
		bad = append(bad, fmt.Sprintf("reason %q, want Mismatch", info.Reason))
	}
	if !info.IsTerminal {
		bad = append(bad, "is_terminal false, want true")
	}
	if info.Message == "" {
		bad = append(bad, "no message")
	}
	if info.Operation != row.Operation {
		bad = append(bad, fmt.Sprintf("operation %q, want the row's %q", info.Operation, row.Operation))
	}
	if info.ErrorCount != row.ErrorCount {
		bad = append(bad, fmt.Sprintf("error_count %d, want the row's %d", info.ErrorCount, row.ErrorCount))
	}
	if info.OccurredAt.IsZero() {
		bad = append(bad, "no occurred_at")
	}
	want := map[string]string{"violation": contracts.ViolationContainerWithoutVolume, "expected": "volume_exists=true", "actual": "false"}
	for _, k := range []string{"violation", "expected", "actual"} {
		if got, _ := info.Context[k].(string); got != want[k] {
			bad = append(bad, fmt.Sprintf("context %q is %v, want %q", k, info.Context[k], want[k]))
		}
	}
	return strings.Join(bad, "; ")
}

// infoText is a short rendering of an error_info for a message.
func infoText(info *contracts.ErrorInfo) string {
	return fmt.Sprintf("{reason %s, terminal %t, operation %q, error_count %d, context %v}", info.Reason, info.IsTerminal, info.Operation, info.ErrorCount, info.Context)
}
