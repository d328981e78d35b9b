package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts/history"
)

// idOrder: SPEC 4.2: "Each tick reads the reconcile selection (1.1) and
// handles each row on its own, in id order". A tick of the leader's
// StateReconciler acts on its rows one after another, the lower id first:
// once it has acted on a row, it does not act on a row of a lower id.
//
// Judged per step of the leader on virtual time (its events at one
// instant, DR411), with reconcile-tick-rows' step tracker: a step in
// which the leader's StateReconciler acted is one of its ticks. Acting on
// a row ("handling" it, as far as the history shows) is a StateReconciler
// write of the leader on the row or one made on its behalf (the
// last-access stamp), applied or not, failed or not, and an actuator call
// on the workspace, failed or not. Reads leave no event, and a
// monitor:trigger publish is not taken as a row's (SPEC 3 only has it
// follow the write). A reconciler event on a row after one on a row of a
// higher id in the same step is flagged.
//
// SPEC 3 runs every due component once per step, and the reconciler's
// period is at least 2 s, so a step holds one tick; but a second tick at
// the same instant would start again from the lowest id. Such a tick acts
// on a row only if the row differs from what the first tick read, or the
// first tick's act on it failed (it decides from the row, the time and
// what the leader invoked, C1): so a row is excused, from then on in the
// step, once a failure of the leader concerned it (a failed write or
// call, a lost answer; a failure's record may also come late), once
// another process wrote it at that instant (an API request, an
// administrator: it may have landed after the tick read the row), and
// once another component of the leader wrote it after the reconciler first
// acted in the step (component-order judges that). Not judged, as in
// reconcile-tick-rows: a step in which the leadership changed, the leader
// crashed, gave the lead up or was struck by a fault, or one of its reads
// failed (a restarted process may begin a new tick at the same instant).
//
// Ids are compared in the order of SPEC 1.1's uuid column: the canonical
// text of a uuid sorts as its bytes do once lowercased; other ids (hand-
// built histories) sort as strings.
type idOrder struct {
	steps leaderSteps
	// rows: rows the leader's reconciler acted on at the step's instant.
	rows map[string]bool
	// top, topSeq: the highest id acted on so far in the step, and its
	// event.
	top    string
	topSeq int64
	// excused: rows a later tick at the same instant may act on again.
	excused map[string]bool
	// late: rows acted on after a higher id, in the order met.
	late []lateRow
}

// lateRow is a row the step's reconciler acted on after a higher id.
type lateRow struct {
	id, above     string
	seq, aboveSeq int64
	what          string
}

func (*idOrder) Name() string     { return "reconcile-id-order" }
func (*idOrder) Contract() string { return "4.2" }

func (c *idOrder) Observe(_ *State, e *history.Event, r *Report) {
	if c.steps.ended(e) {
		c.finish(r)
		c.steps.begin(e.At)
		c.reset()
	}
	if c.rows == nil {
		c.rows, c.excused = map[string]bool{}, map[string]bool{}
	}
	t := &c.steps
	id := e.Workspace
	// Before observe: whether a failure of the leader concerned the row
	// earlier in the step (observe marks e's own failure).
	failedBefore := id != "" && t.failed[id]
	if !t.observe(e) {
		// Not a write or call of the leader: another process's write (or
		// insert) may have landed after the tick read the row.
		if id != "" && (e.Kind == history.KindWrite || e.Kind == history.KindInsert) {
			c.excused[id] = true
		}
		return
	}
	if id == "" {
		return
	}
	handles := (e.Kind == history.KindWrite && reconcilerEvent(e)) || (e.Kind == history.KindCall && Actuator(e.Method))
	if !handles {
		if (e.Kind == history.KindWrite || e.Kind == history.KindInsert) && len(c.rows) > 0 {
			c.excused[id] = true // another component of the leader, after the reconciler began
		}
		return
	}
	if failedBefore {
		c.excused[id] = true
	}
	if c.top != "" && idLess(id, c.top) && !c.excused[id] && !c.lateAlready(id) {
		c.late = append(c.late, lateRow{id: id, above: c.top, seq: e.Seq, aboveSeq: c.topSeq, what: handlingWhat(e)})
	}
	if c.top == "" || idLess(c.top, id) {
		c.top, c.topSeq = id, e.Seq
	}
	c.rows[id] = true
	if e.Err != "" {
		c.excused[id] = true // its record, or another tick's retry, may follow
	}
}

func (c *idOrder) lateAlready(id string) bool {
	for _, l := range c.late {
		if l.id == id {
			return true
		}
	}
	return false
}

func (c *idOrder) reset() {
	clear(c.rows)
	clear(c.excused)
	c.top, c.topSeq, c.late = "", 0, c.late[:0]
}

// finish judges the step just ended.
func (c *idOrder) finish(r *Report) {
	t := &c.steps
	if !t.judged() || len(c.rows) < 2 {
		return
	}
	r.Exercise() // a tick that acted on two rows or more
	for _, l := range c.late {
		r.Flag(l.id, t.instant, fmt.Sprintf("the StateReconciler of %s acted on %s (%s) at %s after acting on %s in the same tick: a tick handles its rows in id order, and %s comes first (SPEC 4.2)",
			t.leader, l.id, l.what, stamp(t.instant), l.above, l.id), l.aboveSeq, l.seq)
	}
}

// handlingWhat names the act e is on its row.
func handlingWhat(e *history.Event) string {
	what := e.Method
	if e.Kind == history.KindWrite {
		what = "a write"
		if e.Patch != nil && e.Patch.Operation.Set {
			what = "a write setting operation " + string(e.Patch.Operation.V)
		} else if e.Args != "" {
			what = "a write " + e.Args
		}
	}
	if e.Err != "" {
		what += ", failed"
	}
	return what
}

// idLess reports whether workspace id a comes before b in id order: the
// order of SPEC 1.1's uuid column, which is the order of a uuid's
// canonical text in lower case; ids that are not both uuids compare as
// strings.
func idLess(a, b string) bool {
	if isUUIDText(a) && isUUIDText(b) {
		return strings.ToLower(a) < strings.ToLower(b)
	}
	return a < b
}

// isUUIDText reports whether s is a uuid in its canonical text form
// (8-4-4-4-12 hexadecimal digits).
func isUUIDText(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F') {
				return false
			}
		}
	}
	return true
}

func (c *idOrder) Finish(_ *State, _ *Final, r *Report) {
	if c.steps.init {
		c.finish(r)
	}
}
