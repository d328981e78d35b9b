package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// errorReason: SPEC 1.5's table of provider codes and its last sentence,
// as 4.2.4 records them. A reconciler write that records the failure of
// an actuator call (a failed attempt, or the ERROR entry of a code that
// is terminal at once) names the reason 1.5 gives the call's code:
//
//   - ARCHIVE_NOT_FOUND, META_NOT_FOUND, CHECKSUM_MISMATCH: DataLost;
//   - S3_ACCESS_ERROR, K8S_API_ERROR, DOCKER_UNREACHABLE: Unreachable;
//   - VOLUME_IN_USE, and every other code: ActionFailed;
//   - a failure that carries no code (a transport error: the provider's
//     API did not answer): Unreachable.
//
// The failure is the latest actuator call on the workspace, by the
// writing instance, when it failed (its error begins with the code,
// "CODE: message", SPEC 5; an error that does not is codeless) or a
// fault replaced its answer with an error, with no actuator call on the
// workspace and no failed write of the instance on it since. A write
// recording RetryExceeded or Timeout, or written while the health is
// ERROR (4.2 step 2: its cause is the health), is not judged; whether a
// write is terminal too soon is error-entry's and retry-policy's to judge.
//
// The checker comes in three, one per kind of failure, so that each kind
// is an obligation of its own: a run that never meets a codeless failure
// or VOLUME_IN_USE has not judged how they are recorded (issue 22).
type errorReason struct {
	base
	kind reasonKind
	tie  failureTie
}

// reasonKind selects the failures an errorReason judges.
type reasonKind int

const (
	reasonCoded  reasonKind = iota // a code other than VOLUME_IN_USE
	reasonNoCode                   // no code: a transport error
	reasonInUse                    // VOLUME_IN_USE
)

// failedActuator is a failed actuator call: its instance, its error's
// text and its record.
type failedActuator struct {
	instance, err string
	seq           int64
}

func (c *errorReason) Name() string {
	switch c.kind {
	case reasonNoCode:
		return "error-reason-no-code"
	case reasonInUse:
		return "error-reason-in-use"
	}
	return "error-reason"
}
func (*errorReason) Contract() string { return "1.5" }

func (c *errorReason) Observe(s *State, e *history.Event, r *Report) {
	f, row, info, ok := c.tie.observe(s, e)
	if !ok {
		return
	}
	code, hasCode := specCodeOf(f.err)
	switch {
	case c.kind == reasonNoCode && hasCode,
		c.kind == reasonInUse && code != string(contracts.CodeVolumeInUse),
		c.kind == reasonCoded && (!hasCode || code == string(contracts.CodeVolumeInUse)):
		return
	}
	r.Exercise()
	if want := specReasonOf(code, hasCode); info.Reason != want {
		what := "with code " + code
		if !hasCode {
			what = "without a code (a transport error)"
		}
		r.Flag(e.Workspace, e.At, fmt.Sprintf("failure of %s recorded with reason %s after call #%d failed %s (%q): SPEC 1.5 makes it %s",
			row.Operation, info.Reason, f.seq, what, f.err, want), f.seq, e.Seq)
	}
}

// failureTie ties a reconciler write that records a failure in error_info
// to the failed actuator call it records, from the history alone: the
// latest actuator call on the workspace, by the writing instance, when it
// failed or a fault replaced its answer with an error, with no actuator
// call on the workspace, no failed write of that instance on it, no claim
// and no completion since. Writes it cannot tie, and those that record
// no call's failure (RetryExceeded, Timeout, a write on a row with no
// operation, already terminal, or whose health is ERROR: 4.2 step 2's
// entry, whose cause is the health), are not tied. Every checker of what
// a failed call's record holds (error-reason, error-context-code) shares
// it, so that they judge the same writes.
type failureTie struct {
	// last is, per workspace, its latest failed actuator call.
	last map[string]failedActuator
}

// observe feeds e to the tie. For a write it ties, it returns the failed
// call, the row as it stood before the write, the error_info written, and
// true.
func (t *failureTie) observe(s *State, e *history.Event) (failedActuator, *contracts.Workspace, *contracts.ErrorInfo, bool) {
	if t.last == nil {
		t.last = map[string]failedActuator{}
	}
	if e.Workspace == "" {
		return failedActuator{}, nil, nil, false
	}
	switch {
	case e.Kind == history.KindCall && Actuator(e.Method):
		if e.Err == "" {
			delete(t.last, e.Workspace)
		} else {
			t.last[e.Workspace] = failedActuator{instance: e.Instance, err: e.Err, seq: e.Seq}
		}
		return failedActuator{}, nil, nil, false
	case e.Kind == history.KindFault && e.Method == FLostResp && Actuator(e.Args):
		t.last[e.Workspace] = failedActuator{instance: e.Instance, err: e.Err, seq: e.Seq}
		return failedActuator{}, nil, nil, false
	case e.Kind == history.KindWrite && e.Err != "":
		if f, ok := t.last[e.Workspace]; ok && f.instance == e.Instance {
			delete(t.last, e.Workspace) // the attempt may count the failed write instead
		}
		return failedActuator{}, nil, nil, false
	}
	if !reconcilerWrite(e) {
		return failedActuator{}, nil, nil, false
	}
	row, p := s.Row(e.Workspace), e.Patch
	if row == nil {
		return failedActuator{}, nil, nil, false
	}
	switch classify(row, p) {
	case tClaim, tComplete:
		delete(t.last, e.Workspace)
		return failedActuator{}, nil, nil, false
	}
	f, ok := t.last[e.Workspace]
	if !ok || f.instance != e.Instance || !p.ErrorInfo.Set || p.ErrorInfo.V == nil {
		return failedActuator{}, nil, nil, false
	}
	delete(t.last, e.Workspace)
	info := p.ErrorInfo.V
	if row.Operation == contracts.OpNone || row.Terminal() || row.HealthStatus == contracts.HealthError ||
		info.Reason == contracts.ReasonRetryExceeded || info.Reason == contracts.ReasonTimeout {
		return failedActuator{}, nil, nil, false
	}
	return f, row, info, true
}
