package workspace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// tickRows: SPEC 3, "Failures": "A failure that concerns one workspace
// skips that workspace for this tick" (and only that one: "a failure of a
// component's whole tick (a listing or a query) skips the tick"), with
// SPEC 4.2: "Each tick reads the reconcile selection (1.1) and handles
// each row on its own", step 5 "Claim it". A tick of the StateReconciler
// that ran claims, in that tick, every row that calls for a claim, whatever
// befell the other rows.
//
// Judged per step of the leader on virtual time (a step takes no time, so
// a step is the leader's events at one instant). A step in which the
// leader made a StateReconciler write (or one on its behalf) or an
// actuator call is one in which the reconciler ticked and read the
// selection. Every row that, as the step began, had no operation and for
// which 4.2.1's table (TableChoice) gives an operation the reconciler must
// claim is owed a claim attempt (a write setting the operation, applied or
// not) in that step; every row whose operation is in progress and whose
// completion condition holds, or which is in ERROR, is owed the write
// that completes the operation or enters ERROR (steps 1 to 3: completion
// first; owedWrite). Not owed, since the tick may have read the row
// otherwise or may leave it: a row any writer touched at that instant (its
// state as read is not known), a row a failure of the leader concerned (a
// failed write or call on it, a lost answer), a claim SPEC leaves optional
// (DELETING of a soft-deleted row in ERROR, which may be spaced; RESTORING
// of an unrestored STANDBY row whose desired state is STANDBY). Not
// judged: a step in which the leadership changed, the leader crashed,
// gave the lead up or was struck by a fault, or one of its reads failed
// (the whole tick may have been skipped).
type tickRows struct {
	steps leaderSteps
	// claimed: rows the leader tried to claim at the step's instant.
	claimed map[string]bool
}

// leaderSteps follows the leader's steps on virtual time: a step takes no
// time, so a step is the leader's events at one instant (DR411). It notes
// what a tick judged per step must know: whether the leader's
// StateReconciler acted (a write of it or on its behalf, an actuator
// call), whether the step was disturbed (the leadership changed, the
// leader crashed, gave the lead up or was struck by a fault, or one of its
// reads failed: the whole tick may have been skipped), which rows anyone
// wrote, and which rows a failure of the leader concerned.
type leaderSteps struct {
	init    bool
	leader  string
	since   time.Time // the leader's acquisition
	instant time.Time
	// What happened at instant.
	acted, disturbed bool
	// touched: rows written at instant by anyone; failed: rows a failure
	// of the leader concerned.
	touched, failed map[string]bool
	// evidence: the first reconciler event of the step.
	evidence int64
}

// ended reports whether e begins a new step, the previous one having
// ended; the caller judges that step, then calls begin.
func (t *leaderSteps) ended(e *history.Event) bool {
	if !t.init {
		t.init = true
		t.touched, t.failed = map[string]bool{}, map[string]bool{}
		t.instant = e.At
	}
	return !e.At.Equal(t.instant)
}

// begin starts the step at instant at.
func (t *leaderSteps) begin(at time.Time) {
	t.instant = at
	t.acted, t.disturbed, t.evidence = false, false, 0
	clear(t.touched)
	clear(t.failed)
}

// judged reports whether the step just ended is one to judge: the
// leader's reconciler acted in it and nothing disturbed it.
func (t *leaderSteps) judged() bool {
	return t.acted && !t.disturbed && t.leader != ""
}

// observe notes e, and reports whether it is a write or a call of the
// leader that the caller may read further (a reconciler write, an
// actuator call, or any other of its writes and calls but one that gave
// the lead up).
func (t *leaderSteps) observe(e *history.Event) bool {
	leader := t.leader != "" && e.Instance == t.leader
	switch e.Kind {
	case history.KindLeader:
		t.disturbed = true
		if e.Method == "acquire" {
			t.leader, t.since = e.Instance, e.At
		} else if leader {
			t.leader = ""
		}
	case history.KindCrash:
		if leader {
			t.disturbed, t.leader = true, ""
		}
	case history.KindFault:
		if !leader {
			return false
		}
		if e.Method == FLostResp && e.Workspace != "" {
			t.failed[e.Workspace] = true
			return false
		}
		t.disturbed = true
	case history.KindWrite, history.KindInsert:
		t.touched[e.Workspace] = true
		if !leader {
			return false
		}
		if e.Kind == history.KindWrite && reconcilerEvent(e) {
			t.note(e)
		}
		if e.Err != "" {
			t.failed[e.Workspace] = true
			if refusedAsFenced(e) {
				t.disturbed = true
			}
		}
		return true
	case history.KindCall:
		if !leader {
			return false
		}
		if leftLead(e) {
			t.disturbed = true
			return false
		}
		if Actuator(e.Method) {
			t.note(e)
		}
		if e.Err != "" {
			switch {
			case e.Workspace != "" && (Actuator(e.Method) || strings.HasPrefix(e.Method, "store.")):
				t.failed[e.Workspace] = true
			case strings.HasPrefix(e.Method, "store."):
				t.disturbed = true // a read failed: the tick may be skipped
			}
		}
		return true
	}
	return false
}

func (t *leaderSteps) note(e *history.Event) {
	if !t.acted {
		t.acted, t.evidence = true, e.Seq
	}
}

func (*tickRows) Name() string     { return "reconcile-tick-rows" }
func (*tickRows) Contract() string { return "3" }

// reconcilerEvent reports whether e is a write of the StateReconciler or
// one made on its behalf.
func reconcilerEvent(e *history.Event) bool {
	return e.Component == contracts.CompStateReconciler || e.Args == onBehalfOf+string(contracts.CompStateReconciler)
}

// optionalClaim reports whether SPEC lets the reconciler leave op unclaimed
// on w: the spaced DELETING of a soft-deleted row in ERROR (4.2 step 2),
// and the RESTORING of an unrestored STANDBY row at its desired STANDBY
// (4.2.1: "a reconciler may instead claim RESTORING").
func optionalClaim(w *contracts.Workspace, op contracts.Operation) bool {
	failing := w.HealthStatus == contracts.HealthError || (w.ErrorInfo != nil && w.ErrorInfo.IsTerminal)
	switch {
	case op == contracts.OpDeleting && failing:
		return true
	case op == contracts.OpRestoring && w.ObservedStatus == contracts.ObservedStandby && w.DesiredState == contracts.DesiredStandby:
		return true
	}
	return false
}

func (c *tickRows) Observe(s *State, e *history.Event, r *Report) {
	if c.steps.ended(e) {
		c.finish(s, r)
		c.steps.begin(e.At)
		clear(c.claimed)
	}
	if c.claimed == nil {
		c.claimed = map[string]bool{}
	}
	if c.steps.observe(e) && e.Kind == history.KindWrite && reconcilerEvent(e) &&
		e.Patch != nil && e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone {
		c.claimed[e.Workspace] = true
	}
}

// finish judges the step at the step's instant, on the rows as they stand at its
// end: a row nobody wrote at that instant is as the step found it.
func (c *tickRows) finish(s *State, r *Report) {
	t := &c.steps
	if !t.judged() {
		return
	}
	ids := make([]string, 0, len(s.Rows))
	for id := range s.Rows {
		if c.claimed[id] {
			r.Exercise() // a row claimed in a tick that was judged
			continue
		}
		if !t.touched[id] && !t.failed[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := s.Rows[id]
		if w.Operation != contracts.OpNone {
			if what := owedWrite(w); what != "" {
				r.Exercise()
				r.Flag(id, t.instant, fmt.Sprintf("the StateReconciler of %s ticked at %s but did not %s %s of %s, which its row called for (observed %s, health %s): each tick handles every row, a failure on one skipping only that one (SPEC 3, 4.2)",
					t.leader, stamp(t.instant), what, w.Operation, id, w.ObservedStatus, w.HealthStatus), t.evidence)
			}
			continue
		}
		op := TableChoice(w)
		if op == contracts.OpNone || optionalClaim(w, op) {
			continue
		}
		r.Exercise()
		r.Flag(id, t.instant, fmt.Sprintf("the StateReconciler of %s ticked at %s but did not claim %s on %s, which its row called for (observed %s, desired %s): each tick handles every row, a failure on one skipping only that one (SPEC 3, 4.2)",
			t.leader, stamp(t.instant), op, id, w.ObservedStatus, w.DesiredState), t.evidence)
	}
}

// owedWrite is what SPEC 4.2's steps 1 to 3 have a tick write on a row
// whose operation is in progress, whatever the time: "complete" when its
// completion condition holds (4.2.2, checked first), "end in ERROR" when
// the workspace is in ERROR (step 2, step 1 for a DELETED row whose
// operation has not completed), "" when the tick may only wait, resume or
// retry (which depend on the time and on what the leader invoked).
func owedWrite(w *contracts.Workspace) string {
	inError := w.HealthStatus == contracts.HealthError || (w.ErrorInfo != nil && w.ErrorInfo.IsTerminal)
	done := specCompleted(w)
	switch {
	case w.ObservedStatus == contracts.ObservedDeleted && done:
		return "complete"
	case w.ObservedStatus == contracts.ObservedDeleted && inError:
		return "end in ERROR"
	case inError && !(w.Deleted() && w.Operation == contracts.OpDeleting):
		return "end in ERROR"
	case done:
		return "complete"
	}
	return ""
}

func (c *tickRows) Finish(s *State, _ *Final, r *Report) {
	if c.steps.init {
		c.finish(s, r)
	}
}
