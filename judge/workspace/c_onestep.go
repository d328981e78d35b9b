package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// oneStep: SPEC 4.2, "For one row, the first step that applies decides",
// and the steps that follow it: step 1 (a DELETED row's operation is
// completed, else ended in ERROR, else continued at step 3; "nothing new is
// claimed on it"), step 2 (a row in ERROR with another operation in
// progress enters ERROR), step 3 ("Check completion first (4.2.2), then the
// timeout (4.2.3), then resume or retry (4.2.2, 4.2.4); otherwise wait.
// Never plan another operation"), steps 4 and 5 (an idle row gets nothing
// or a claim, and only a claim that applies is executed). One tick of the
// StateReconciler takes, on each row, the one step that applies to the row
// as the tick read it, and nothing after it:
//
//   - after the tick completes a row's operation or enters ERROR on it (an
//     applied write of the leader's reconciler that sets operation NONE),
//     it neither writes that row again (a claim of the next operation, a
//     failure record, a stamp) nor makes an actuator call on it: the
//     completion or the entry was the step that applied, and the next one
//     is the next tick's to choose from the row as it then reads it;
//   - it never tries to claim (a write setting an operation, applied or
//     not) a row whose operation was in progress as the step began (steps
//     1 to 3);
//   - it makes no actuator call on a row whose first applicable step is a
//     write alone: the completion of an operation whose completion
//     condition holds (checked first, step 1 and step 3), the ERROR entry of
//     a row in ERROR (step 1 and step 2), the Timeout entry of an operation
//     past its timeout (4.2.3, checked before resume and retry);
//   - it makes no actuator call on a row that had no operation as the step
//     began unless it applied a claim on it earlier in the step (step 4:
//     nothing; step 5: "If the claim applies, execute the operation in the
//     same tick").
//
// A tick is a step of the leader (its events at one instant, DR411) in
// which it made a StateReconciler write (or one on its behalf) or an
// actuator call: under the simulator an instance's steps are at least
// 100 ms apart (SPEC 3, "Steps"), and a step runs each component that is
// due once, so one instant holds at most one tick of the leader. The
// row's state as read is the state before the leader's first event on it
// in the step, and is judged only when no other writer wrote the row at
// that instant (as in reconcile-tick-rows); the first rule needs no state.
// Not judged: a step in which the leadership changed, the leader crashed,
// gave the lead up or was struck by a fault, or one of its reads failed;
// a tick that claims and then completes the same row, or resumes and then
// completes it (the table shows the completion condition only after the
// tick's own calls and writes: whether completing at once is a second step
// is not something SPEC's sentences settle, DR394).
type oneStep struct {
	steps leaderSteps
	// read: each row the leader's reconciler acted on in this step, as the
	// step found it (before the reconciler's first event on it).
	read map[string]contracts.Workspace
	// others: rows a writer other than the leader's reconciler wrote at
	// this instant (the row as read is not known).
	others map[string]bool
	// decided: the leader's applied completion or ERROR entry on a row in
	// this step (its event), and the operation it ended.
	decided   map[string]*history.Event
	decidedOp map[string]contracts.Operation
	// acts: the leader's reconciler events on rows in this step, in order.
	acts []*history.Event
}

func (*oneStep) Name() string     { return "reconcile-one-step" }
func (*oneStep) Contract() string { return "4.2" }

// perRow reports whether e is one of the leader's handlings of a row by its
// StateReconciler: a write of it or on its behalf (applied or not), or an
// actuator call (failed ones included).
func perRow(e *history.Event) bool {
	if e.Workspace == "" {
		return false
	}
	switch e.Kind {
	case history.KindWrite:
		return reconcilerEvent(e)
	case history.KindCall:
		return Actuator(e.Method)
	}
	return false
}

func (c *oneStep) Observe(s *State, e *history.Event, r *Report) {
	if c.read == nil {
		c.read, c.others = map[string]contracts.Workspace{}, map[string]bool{}
		c.decided, c.decidedOp = map[string]*history.Event{}, map[string]contracts.Operation{}
	}
	if c.steps.ended(e) {
		c.finish(r)
		c.steps.begin(e.At)
		clear(c.read)
		clear(c.others)
		clear(c.decided)
		clear(c.decidedOp)
		c.acts = c.acts[:0]
	}
	leader := c.steps.leader
	if !c.steps.observe(e) {
		// Another instance's write, or an event the leader's steps do not
		// read further.
		if (e.Kind == history.KindWrite || e.Kind == history.KindInsert) && e.Workspace != "" {
			c.others[e.Workspace] = true
		}
		return
	}
	if e.Instance != leader || leader == "" || !perRow(e) {
		if (e.Kind == history.KindWrite || e.Kind == history.KindInsert) && e.Workspace != "" {
			c.others[e.Workspace] = true
		}
		return
	}
	id := e.Workspace
	w := s.Row(id)
	if w == nil {
		return
	}
	if _, ok := c.read[id]; !ok {
		c.read[id] = w.Clone()
	}
	ev := *e
	c.acts = append(c.acts, &ev)
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && c.decided[id] == nil {
		if tr := classify(w, e.Patch); tr == tComplete || tr == tError {
			c.decided[id], c.decidedOp[id] = &ev, w.Operation
		}
	}
}

// finish judges the step just ended.
func (c *oneStep) finish(r *Report) {
	t := &c.steps
	if !t.judged() || len(c.acts) == 0 {
		return
	}
	exercised := map[string]bool{}
	exercise := func(id string) {
		if !exercised[id] {
			exercised[id] = true
			r.Exercise() // a row whose first applicable step was a completion or an ERROR entry
		}
	}
	flagged := map[string]bool{}
	flag := func(id, msg string, evidence ...int64) {
		if !flagged[id] {
			flagged[id] = true
			r.Flag(id, t.instant, msg, evidence...)
		}
	}
	// The rules on what the tick did after its decision, and on the rows
	// as it read them, in the order of its events.
	claimedSoFar := map[string]bool{}
	decidedSoFar := map[string]*history.Event{}
	for _, e := range c.acts {
		id := e.Workspace
		w := c.read[id]
		if d := decidedSoFar[id]; d != nil {
			exercise(id)
			flag(id, fmt.Sprintf("the StateReconciler of %s %s %s of %s at %s, then in the same tick %s: for one row the first step that applies decides, and the next step is the next tick's (SPEC 4.2)",
				t.leader, ended(d), c.decidedOp[id], id, stamp(t.instant), what(e)), d.Seq, e.Seq)
			continue
		}
		isClaim := e.Kind == history.KindWrite && e.Patch != nil && e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone
		switch {
		case isClaim && w.Operation != contracts.OpNone:
			flag(id, fmt.Sprintf("the StateReconciler of %s tried to claim %s on %s at %s while %s was in progress as the tick began (observed %s, health %s): steps 1 to 3 decide for a row with an operation in progress, and never plan another operation (SPEC 4.2)",
				t.leader, e.Patch.Operation.V, id, stamp(t.instant), w.Operation, w.ObservedStatus, w.HealthStatus), e.Seq)
		case e.Kind == history.KindCall && w.Operation == contracts.OpNone && !claimedSoFar[id]:
			flag(id, fmt.Sprintf("the StateReconciler of %s called %s on %s at %s, which had no operation as the tick began and which the tick had not claimed: an idle row gets nothing or a claim, and only a claim that applies is executed (SPEC 4.2 steps 4 and 5)",
				t.leader, e.Method, id, stamp(t.instant)), e.Seq)
		case e.Kind == history.KindCall && w.Operation != contracts.OpNone && !c.others[id]:
			if step := writeOnly(&w, t.instant.Sub(w.OpStartedAt)); step != "" {
				exercise(id)
				flag(id, fmt.Sprintf("the StateReconciler of %s called %s on %s at %s, whose first applicable step was to %s its %s (observed %s, health %s, started %s): for one row the first step that applies decides, and it makes no actuator call (SPEC 4.2 steps 1 to 3, 4.2.3)",
					t.leader, e.Method, id, stamp(t.instant), step, w.Operation, w.ObservedStatus, w.HealthStatus, stamp(w.OpStartedAt)), e.Seq)
			}
		}
		if e.Kind == history.KindWrite && e.Applied && e.Patch != nil {
			switch {
			case c.decided[id] == e:
				decidedSoFar[id] = e
				exercise(id)
			case e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone:
				claimedSoFar[id] = true
			}
		}
	}
}

// writeOnly is the step SPEC 4.2 has a tick take on w, as read, when that
// step is a write alone: "complete" when its completion condition holds,
// "end in ERROR" when it is in ERROR (steps 1 to 3, owedWrite), "end in a
// Timeout ERROR" when elapsed, the time since op_started_at, exceeds the
// operation's timeout (4.2.3, checked before resume and retry); "" when the
// tick may resume, retry or wait.
func writeOnly(w *contracts.Workspace, elapsed time.Duration) string {
	if what := owedWrite(w); what != "" {
		return what
	}
	if !w.OpStartedAt.IsZero() && elapsed > specTimeout(w.Operation) {
		return "end in a Timeout ERROR"
	}
	return ""
}

// ended says what decision d took.
func ended(d *history.Event) string {
	if d.Patch.ErrorInfo.Set && d.Patch.ErrorInfo.V != nil && d.Patch.ErrorInfo.V.IsTerminal {
		return "ended in ERROR"
	}
	return "completed"
}

// what says what e did on its row.
func what(e *history.Event) string {
	if e.Kind == history.KindCall {
		return "called " + e.Method
	}
	out := "wrote it"
	switch {
	case e.Patch != nil && e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone:
		out = "claimed " + string(e.Patch.Operation.V)
	case e.Component != contracts.CompStateReconciler:
		out = "wrote it through " + string(e.Component) + " (" + e.Args + ")"
	}
	if !e.Applied {
		out += " (not applied)"
	}
	return out
}

func (c *oneStep) Finish(_ *State, _ *Final, r *Report) {
	if c.steps.init {
		c.finish(r)
	}
}
