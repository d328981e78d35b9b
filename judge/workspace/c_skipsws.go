package workspace

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// skipsWorkspace: SPEC 4.2: "Each tick reads the reconcile selection (1.1)
// and handles each row on its own, in id order ... For one row, the first
// step that applies decides", step 3: "An operation in progress. Check
// completion first (4.2.2), then the timeout (4.2.3), then resume or retry
// (4.2.2, 4.2.4); otherwise wait"; with SPEC 3 ("A failure that concerns
// one workspace skips that workspace for this tick") and 1.1 (the reconcile
// selection holds every row whose operation is not NONE). A tick that
// leaves out a row its selection holds is seen when the step that applies
// to the row calls for an act whatever else the tick does.
//
// reconcile-tick-rows judges the acts owed whatever the time (claims,
// completions, ERROR entries); this checker judges the two acts of step 3
// that depend on the time and on the leader's own calls, both knowable from
// the history on virtual time:
//
//   - the timeout: a row whose operation is in progress, whose completion
//     condition does not hold, that is not in ERROR, and for which
//     now − op_started_at exceeds the operation's timeout (4.2.3) is owed
//     its Timeout ERROR entry: a write of the StateReconciler on it in
//     the tick;
//   - the resume (4.2.2, "Resuming"): a leader that sees an operation in
//     progress it has not itself invoked since it became leader invokes
//     its actuator calls. Owed, in the tick, an actuator call on the
//     workspace when the leader has made none on it (failed ones count)
//     since the later of its acquisition and op_started_at ("an
//     invocation counts for the claim it was made under"), unless a
//     recorded failure's 30 s spacing still runs (error_info not terminal,
//     now − occurred_at < 30 s: "A resume honours the retry spacing"),
//     or the leader's own actuator call on it failed less than 30 s ago
//     (the record of that failure may have failed), or the operation is a
//     STARTING on a row observed PENDING ("neither resumed nor retried",
//     C6), or an ARCHIVING whose steps have nothing to call (archive_key
//     already the expected key of op_id and observed PENDING or DELETED).
//
// The situation counted: a row owed either act at a judged tick, or the
// act itself (a Timeout entry, the leader's first actuator call on an
// operation claimed before it took the lead).
//
// A tick is a step of the leader (its events at one instant, DR411) in
// which it made a StateReconciler write (or one on its behalf) or an
// actuator call. Not owed, as in reconcile-tick-rows: a row any writer
// touched at that instant, a row a failure of the leader concerned (a
// failed write or call on it, a lost answer). Not judged: a step in which
// the leadership changed, the leader crashed, gave the lead up or was
// struck by a fault, or one of its reads failed (the whole tick may have
// been skipped).
type skipsWorkspace struct {
	steps leaderSteps
	// wrote: rows the leader's reconciler wrote at the step's instant;
	// called: rows the leader made an actuator call on.
	wrote, called map[string]bool
	// invoked: workspace → the leader's last actuator call on it.
	invoked map[string]time.Time
	// callFailed: instance → workspace → its last failed actuator call on
	// it, whoever led.
	callFailed map[string]map[string]time.Time
}

func (*skipsWorkspace) Name() string     { return "skips-workspace" }
func (*skipsWorkspace) Contract() string { return "4.2" }

func (c *skipsWorkspace) Observe(s *State, e *history.Event, r *Report) {
	if c.steps.ended(e) {
		c.finish(s, r)
		c.steps.begin(e.At)
		clear(c.wrote)
		clear(c.called)
	}
	if c.wrote == nil {
		c.wrote, c.called = map[string]bool{}, map[string]bool{}
		c.invoked, c.callFailed = map[string]time.Time{}, map[string]map[string]time.Time{}
	}
	if e.Kind == history.KindCall && Actuator(e.Method) && e.Err != "" && e.Instance != "" {
		if c.callFailed[e.Instance] == nil {
			c.callFailed[e.Instance] = map[string]time.Time{}
		}
		c.callFailed[e.Instance][e.Workspace] = e.At
	}
	if e.Kind == history.KindLeader && e.Method == "acquire" {
		clear(c.invoked)
	}
	if !c.steps.observe(e) {
		return
	}
	switch {
	case e.Kind == history.KindWrite && reconcilerEvent(e):
		c.wrote[e.Workspace] = true
		if row := s.Row(e.Workspace); row != nil && e.Patch != nil && classify(row, e.Patch) == tError &&
			e.Patch.ErrorInfo.V.Reason == contracts.ReasonTimeout {
			r.Exercise() // the situation, met: a Timeout entry
		}
	case e.Kind == history.KindCall && Actuator(e.Method):
		c.called[e.Workspace] = true
		if w := s.Row(e.Workspace); w != nil && w.Operation != contracts.OpNone && w.OpStartedAt.Before(c.steps.since) {
			if at, ok := c.invoked[e.Workspace]; !ok || at.Before(c.steps.since) {
				r.Exercise() // the situation, met: a resume
			}
		}
		c.invoked[e.Workspace] = e.At
	}
}

// finish judges the step just ended on the rows as they stand at its
// end: a row nobody wrote at that instant is as the tick read it.
func (c *skipsWorkspace) finish(s *State, r *Report) {
	t := &c.steps
	if !t.judged() {
		return
	}
	ids := make([]string, 0, len(s.Rows))
	for id, w := range s.Rows {
		if w.Operation != contracts.OpNone && !t.touched[id] && !t.failed[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := s.Rows[id]
		if owedWrite(w) != "" {
			continue // reconcile-tick-rows' to judge
		}
		elapsed := t.instant.Sub(w.OpStartedAt)
		switch {
		case !w.OpStartedAt.IsZero() && elapsed > specTimeout(w.Operation):
			r.Exercise()
			if !c.wrote[id] {
				r.Flag(id, t.instant, fmt.Sprintf("the StateReconciler of %s ticked at %s and left out %s, whose %s started %s ago, past its %s timeout: the tick enters ERROR with reason Timeout (SPEC 4.2 step 3, 4.2.3)",
					t.leader, stamp(t.instant), id, w.Operation, elapsed, specTimeout(w.Operation)), t.evidence)
			}
		case c.resumeOwed(w):
			r.Exercise()
			if !c.called[id] {
				r.Flag(id, t.instant, fmt.Sprintf("the StateReconciler of %s ticked at %s and left out %s, whose %s (started %s) it had not invoked since it took the lead at %s: a leader resumes an operation it sees in progress (SPEC 4.2 step 3, 4.2.2)",
					t.leader, stamp(t.instant), id, w.Operation, stamp(w.OpStartedAt), stamp(t.since)), t.evidence)
			}
		}
	}
}

// resumeOwed reports whether the leader owes w's operation its actuator
// calls at the step's instant (SPEC 4.2.2, "Resuming").
func (c *skipsWorkspace) resumeOwed(w *contracts.Workspace) bool {
	if at, ok := c.invoked[w.ID]; ok && !at.Before(later(c.steps.since, w.OpStartedAt)) {
		return false // invoked for this claim under this leadership
	}
	at, failed := c.callFailed[c.steps.leader][w.ID]
	return resumeDue(w, c.steps.instant, at, failed)
}

// resumeDue reports whether w's operation, which the leader has not
// invoked for its claim since it took the lead, is owed its actuator calls
// at now (SPEC 4.2.2, "Resuming"): unless a recorded failure's 30 s spacing
// still runs (error_info not terminal, now − occurred_at < 30 s: "A resume
// honours the retry spacing"), or the leader's own actuator call on it
// failed less than 30 s ago (lastFail, when failed: the record of that
// failure may have failed), or it is a STARTING on a row observed PENDING
// ("neither resumed nor retried", C6), or an ARCHIVING whose steps have
// nothing to call.
func resumeDue(w *contracts.Workspace, now, lastFail time.Time, failed bool) bool {
	if w.OpStartedAt.IsZero() {
		return false
	}
	if info := w.ErrorInfo; info != nil && !info.IsTerminal && now.Sub(info.OccurredAt) < specRetryInterval {
		return false
	}
	if failed && now.Sub(lastFail) < specRetryInterval {
		return false // its own failure, whether or not the row records it, is spaced too
	}
	switch w.Operation {
	case contracts.OpStarting:
		return w.ObservedStatus != contracts.ObservedPending
	case contracts.OpArchiving:
		expected := w.OpID != "" && w.ArchiveKey == specArchiveKey(w.ID, w.OpID)
		return !expected || (w.ObservedStatus != contracts.ObservedPending && w.ObservedStatus != contracts.ObservedDeleted)
	}
	return true
}

func (c *skipsWorkspace) Finish(s *State, _ *Final, r *Report) {
	if c.steps.init {
		c.finish(s, r)
	}
}
