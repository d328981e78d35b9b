package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// invokeOnce: SPEC 4.2.2, "Resuming after a crash or failover: a leader
// that has not itself invoked the actuator calls of an in-progress
// operation since it became leader invokes them (they are idempotent);
// after that it only checks completion and timeout, except for retries
// (4.2.4)". Within one claim of an operation and one leadership of an
// instance, an actuator call is made again only as a retry: after a
// failed actuator call on the workspace, or one whose answer a fault
// replaced. A reconciler that calls start (or archive, or delete_volume)
// again at every tick while it waits for the observation passes every
// other rule, since the calls are idempotent.
//
// What may make a correct leader invoke again is excused: a leadership
// ends at an acquisition, a release or a failed lock check (and a lock
// taken with its answer lost); a failed DB call or a lost DB answer of
// the instance, or a fault aimed at it, may have left a write undone
// that the leader then makes again with its calls (the marker of a
// restore, archive_key), so its record starts afresh.
//
// Evidence: actuator calls with their instance, leadership epoch and
// error; lost answers; reconciler writes that claim or end an operation;
// leadership events; the instance's failed DB calls and faults.
type invokeOnce struct {
	base
	// calls: workspace → method → the instance's last successful call
	// of it under the current claim.
	calls map[string]map[string]invokeRec
}

type invokeRec struct {
	instance string
	epoch    int64
	seq      int64
}

func (*invokeOnce) Name() string     { return "invoke-once" }
func (*invokeOnce) Contract() string { return "4.2.2" }

func (c *invokeOnce) forget(instance string) {
	for _, m := range c.calls {
		for k, rec := range m {
			if rec.instance == instance {
				delete(m, k)
			}
		}
	}
}

func (c *invokeOnce) Observe(s *State, e *history.Event, r *Report) {
	if c.calls == nil {
		c.calls = map[string]map[string]invokeRec{}
	}
	switch {
	case e.Kind == history.KindLeader, leftLead(e), tookLeadUnawares(e):
		c.forget(e.Instance)
		return
	case e.Kind == history.KindFault:
		if e.Method == FLostResp && Actuator(e.Args) && e.Workspace != "" {
			delete(c.calls, e.Workspace)
		}
		if e.Instance != "" {
			c.forget(e.Instance) // a lost DB answer (store.*) among them
		}
		return
	case e.Err != "" && (e.Kind == history.KindWrite || (e.Kind == history.KindCall && strings.HasPrefix(e.Method, "store."))):
		c.forget(e.Instance)
		return
	case reconcilerWrite(e):
		if classify(s.Row(e.Workspace), e.Patch) != tNone {
			delete(c.calls, e.Workspace)
		}
		return
	case e.Kind != history.KindCall || !Actuator(e.Method) || e.Workspace == "":
		return
	}
	if e.Err != "" {
		delete(c.calls, e.Workspace) // the next call is a retry
		return
	}
	epoch := s.Leader.EpochOf[e.Instance]
	row := s.Row(e.Workspace)
	if epoch == 0 || row == nil || row.Operation == contracts.OpNone {
		return
	}
	r.Exercise()
	m := c.calls[e.Workspace]
	if m == nil {
		m = map[string]invokeRec{}
		c.calls[e.Workspace] = m
	}
	if prev, ok := m[e.Method]; ok && prev.instance == e.Instance && prev.epoch == epoch {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s of %s invoked again by %s (after call #%d succeeded) with no failure between: after invoking an operation's calls a leader only checks completion and timeout, except for retries",
			e.Method, row.Operation, e.Instance, prev.seq), prev.seq, e.Seq)
	}
	m[e.Method] = invokeRec{instance: e.Instance, epoch: epoch, seq: e.Seq}
}
