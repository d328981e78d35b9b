package scenarios

import (
	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// OpEvent is one operation transition of one workspace.
type OpEvent struct {
	// What: "claim", "complete", "error".
	What     string
	Op       contracts.Operation
	Instance string
	Epoch    int64
	Seq      int64
}

// Trace is one workspace's story, read from applied writes.
type Trace struct {
	Ops      []OpEvent
	Observed []contracts.ObservedStatus
	Writers  []contracts.Writer
}

// OpSummary renders the operation transitions as "claim PROVISIONING",
// "complete PROVISIONING", "error STARTING", ….
func (t Trace) OpSummary() []string {
	out := make([]string, 0, len(t.Ops))
	for _, o := range t.Ops {
		out = append(out, o.What+" "+string(o.Op))
	}
	return out
}

// Completed lists the operations that completed, in order.
func (t Trace) Completed() []contracts.Operation {
	var out []contracts.Operation
	for _, o := range t.Ops {
		if o.What == "complete" {
			out = append(out, o.Op)
		}
	}
	return out
}

// TraceOf replays the applied writes of workspace id.
func TraceOf(events []history.Event, id string) Trace {
	var t Trace
	op := contracts.OpNone
	for _, e := range events {
		if e.Workspace != id {
			continue
		}
		switch e.Kind {
		case history.KindInsert:
			if e.Row != nil {
				t.Observed = append(t.Observed, e.Row.ObservedStatus)
			}
		case history.KindWrite:
			if !e.Applied || e.Patch == nil {
				continue
			}
			t.Writers = append(t.Writers, contracts.Writer{Component: e.Component, Instance: e.Instance, Epoch: e.Epoch})
			p := e.Patch
			if p.ObservedStatus.Set && (len(t.Observed) == 0 || t.Observed[len(t.Observed)-1] != p.ObservedStatus.V) {
				t.Observed = append(t.Observed, p.ObservedStatus.V)
			}
			if !p.Operation.Set || p.Operation.V == op {
				continue
			}
			ev := OpEvent{Instance: e.Instance, Epoch: e.Epoch, Seq: e.Seq}
			switch {
			case p.Operation.V != contracts.OpNone:
				ev.What, ev.Op = "claim", p.Operation.V
			case p.ErrorInfo.Set && p.ErrorInfo.V != nil && p.ErrorInfo.V.IsTerminal:
				ev.What, ev.Op = "error", op
			default:
				ev.What, ev.Op = "complete", op
			}
			t.Ops = append(t.Ops, ev)
			op = p.Operation.V
		}
	}
	return t
}

// Calls lists the provider calls (history.KindCall) on workspace id whose
// method is one of methods (all when none given), in order.
func Calls(events []history.Event, id string, methods ...string) []history.Event {
	var out []history.Event
	for _, e := range events {
		if e.Kind != history.KindCall || e.Workspace != id {
			continue
		}
		if len(methods) == 0 {
			out = append(out, e)
			continue
		}
		for _, m := range methods {
			if e.Method == m {
				out = append(out, e)
				break
			}
		}
	}
	return out
}
