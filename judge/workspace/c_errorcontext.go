package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/history"
)

// errorContextCode: SPEC 1.5's context member, "for a failed actuator
// call it includes code, the provider code", as 4.2.4 records a failed
// attempt ("a context that includes the provider code"). A reconciler
// write that records the failure of an actuator call that carried a
// provider code (its error begins with it, "CODE: message", SPEC 5) has
// error_info.context.code equal to that code.
//
// The write is tied to the call by failureTie, as error-reason ties it:
// the writer's own latest failed actuator call on the workspace (or the
// error a fault gave it in place of the answer, which is what the caller
// saw), with nothing on the workspace between. Not judged: a write the
// tie does not reach (another instance's call, a call or a failed write
// since, a claim or completion since), RetryExceeded and Timeout (4.2.4
// and 4.2.3 give their own contexts), a failure without a code (1.5 names
// no code for a transport error), and a write whose reason is not the
// one 1.5 gives the code (it does not record that call's failure as
// such; error-reason flags it).
type errorContextCode struct {
	base
	tie failureTie
}

func (*errorContextCode) Name() string     { return "error-context-code" }
func (*errorContextCode) Contract() string { return "1.5" }

func (c *errorContextCode) Observe(s *State, e *history.Event, r *Report) {
	f, row, info, ok := c.tie.observe(s, e)
	if !ok {
		return
	}
	code, hasCode := specCodeOf(f.err)
	if !hasCode || info.Reason != specReasonOf(code, hasCode) {
		return
	}
	r.Exercise()
	got, present := info.Context["code"]
	if present && got == code {
		return
	}
	what := "has no code"
	if present {
		what = fmt.Sprintf("has code %v", got)
	}
	r.Flag(e.Workspace, e.At, fmt.Sprintf("failure of %s recorded (%s) after call #%d failed with code %s (%q), but its context %s: SPEC 1.5 includes code %s",
		row.Operation, info.Reason, f.seq, code, f.err, what, code), f.seq, e.Seq)
}
