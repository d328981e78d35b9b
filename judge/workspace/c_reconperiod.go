package workspace

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// reconcilePeriod: SPEC 3, the StateReconciler's own adaptive period ("2 s,
// 5 s or 30 s", "computed from the rows as last read, ignoring DELETED
// rows": 2 s while some row has an operation in progress, 5 s while some
// row diverges, 30 s otherwise), with SPEC 4.2: each tick reads the
// reconcile selection and handles every row, so a row that calls for a
// write of the reconciler (a claim by 4.2.1's table, the completion or
// the ERROR entry of steps 1 to 3: owedWrite) gets one at the first tick
// after it came to call for it.
//
// A successful read of the DB leaves no event, so a tick shows only by
// what it does. The checker bounds, for each row that calls for a write,
// the time by which a tick must have come, from what the history shows of
// the fleet (the rows replayed from the writes, specFleet) and of the
// reconciler's ticks (a step of the leader with a StateReconciler write,
// one on its behalf, or an actuator call):
//   - whatever the fleet, the period is at most the idle one: a tick comes
//     within PeriodNotice (30 s plus its tolerance) of the row calling for
//     it, or of the leadership's start or last disturbance;
//   - once the fleet has had an operation in progress (a divergence) for
//     PeriodNotice without a break, the reconciler has read it so, and
//     ticks every 2 s (5 s) plus tolerance from then on;
//   - a tick the history shows, taken while the fleet had been busy
//     (active) since before its instant, read it busy (active): the next
//     ticks come every 2 s (5 s) plus tolerance from that tick on.
//
// The earliest of these is the row's due time. Judged at the leader's
// steps (its successful lock checks at a new instant, SPEC 3.1): a second
// step past the due time with the row still calling for the write and no
// reconciler event on it is flagged. Not owed: a claim SPEC leaves
// optional (optionalClaim). A failure of the leader on the row (a failed
// write or actuator call) is its tick's skip of the row, and counts as
// one; any failed DB call, lost answer, fault aimed at the leader, crash
// or leadership change restarts every bound (the tick may have been
// skipped, the period read from a stale view).
type reconcilePeriod struct {
	init   bool
	leader string
	// disturbed: the leadership's start or the leader's last disturbance.
	disturbed time.Time
	// tick: the leader's latest tick the history shows since disturbed.
	tick time.Time
	// lastStep: the leader's latest step (successful lock check).
	lastStep time.Time
	// busy and active: rows with an operation in progress, and rows busy
	// or diverging (specFleet); busySince and activeSince: since when the
	// fleet has had one without a break (zero: none).
	busy, active           map[string]bool
	busySince, activeSince time.Time
	owed                   map[string]*owedRow
}

// owedRow is a row calling for a reconciler write since since.
type owedRow struct {
	since    time.Time
	sinceSeq int64
	what     string
	// overdue: the leader's first step past the due time; flagged: this
	// episode was flagged.
	overdue    time.Time
	overdueSeq int64
	flagged    bool
}

func (*reconcilePeriod) Name() string     { return "reconcile-period" }
func (*reconcilePeriod) Contract() string { return "3" }

func (c *reconcilePeriod) start() {
	if !c.init {
		c.init = true
		c.busy, c.active, c.owed = map[string]bool{}, map[string]bool{}, map[string]*owedRow{}
	}
}

func (c *reconcilePeriod) disturb(at time.Time) {
	c.disturbed, c.tick = at, time.Time{}
	for _, o := range c.owed {
		o.overdue = time.Time{}
	}
}

// touch records the reconciler's handling of id at e (a write, a call, a
// failure concerning it): a row still owed is owed anew from then.
func (c *reconcilePeriod) touch(id string, e *history.Event, r *Report) {
	o := c.owed[id]
	if o == nil {
		return
	}
	if !o.flagged && e.At.After(o.since) {
		r.Exercise()
	}
	*o = owedRow{since: e.At, sinceSeq: e.Seq, what: o.what}
}

func (c *reconcilePeriod) Observe(s *State, e *history.Event, r *Report) {
	c.start()
	leader := c.leader != "" && e.Instance == c.leader
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader = e.Instance
		} else if leader {
			c.leader = ""
		}
		c.disturb(e.At)
	case history.KindCrash:
		if leader {
			c.disturb(e.At)
		}
	case history.KindFault:
		if leader {
			c.disturb(e.At)
		}
	case history.KindWrite, history.KindInsert:
		if !leader {
			return
		}
		if e.Err != "" {
			// A DB that fails a write may fail the tick's read as well.
			c.touch(e.Workspace, e, r)
			c.disturb(e.At)
			return
		}
		if e.Kind == history.KindWrite && reconcilerEvent(e) {
			c.touch(e.Workspace, e, r)
			c.tick = e.At
		}
	case history.KindCall:
		if !leader {
			return
		}
		if leftLead(e) || (strings.HasPrefix(e.Method, "store.") && (e.Err != "" || e.Method == MTryAcquire)) {
			c.disturb(e.At)
			return
		}
		if Actuator(e.Method) {
			c.touch(e.Workspace, e, r)
			c.tick = e.At
			return
		}
		if e.Method == MLockCheck && e.Err == "" && e.At.After(c.lastStep) {
			c.lastStep = e.At
			c.step(e, r)
		}
	}
}

func (c *reconcilePeriod) AfterApply(s *State, e *history.Event, _ *Report) {
	if !c.init || (e.Kind != history.KindWrite && e.Kind != history.KindInsert) || !e.Applied && e.Kind == history.KindWrite {
		return
	}
	w := s.Row(e.Workspace)
	var f specFleet
	if w != nil {
		f.add(w)
	}
	setFleet(c.busy, &c.busySince, e.Workspace, f.busy > 0, e.At)
	setFleet(c.active, &c.activeSince, e.Workspace, f.busy+f.diverged > 0, e.At)
	what := ""
	if w != nil {
		what = reconcileOwed(w)
	}
	o := c.owed[e.Workspace]
	switch {
	case what == "":
		delete(c.owed, e.Workspace)
	case o == nil:
		c.owed[e.Workspace] = &owedRow{since: e.At, sinceSeq: e.Seq, what: what}
	default:
		o.what = what
	}
}

// setFleet records whether row id counts, and keeps since the time the
// set has been non-empty without a break.
func setFleet(m map[string]bool, since *time.Time, id string, on bool, at time.Time) {
	if on {
		m[id] = true
	} else {
		delete(m, id)
	}
	switch {
	case len(m) == 0:
		*since = time.Time{}
	case since.IsZero():
		*since = at
	}
}

// reconcileOwed is the write a tick owes w whatever the time: "" when none.
func reconcileOwed(w *contracts.Workspace) string {
	if w.Operation != contracts.OpNone {
		return owedWrite(w)
	}
	op := TableChoice(w)
	if op == contracts.OpNone || optionalClaim(w, op) {
		return ""
	}
	return "claim " + string(op)
}

// due is when a tick must have handled o at the latest, and why.
func (c *reconcilePeriod) due(o *owedRow) (time.Time, string) {
	from := later(o.since, c.disturbed)
	best, why := from.Add(PeriodNotice), fmt.Sprintf("the idle period %s plus its tolerance", specPeriodIdle)
	try := func(since time.Time, period time.Duration, state string) {
		if since.IsZero() {
			return
		}
		bound := PeriodTolerance(period) + period
		if t := later(o.since, later(since, c.disturbed).Add(PeriodNotice)).Add(bound); t.Before(best) {
			best, why = t, fmt.Sprintf("%s since %s (period %s)", state, stamp(since), period)
		}
		if !c.tick.IsZero() && since.Before(c.tick) {
			if t := later(o.since, c.tick).Add(bound); t.Before(best) {
				best, why = t, fmt.Sprintf("%s since %s, which its tick at %s read (period %s)", state, stamp(since), stamp(c.tick), period)
			}
		}
	}
	try(c.activeSince, specPeriodDiverged, "a workspace busy or diverging")
	try(c.busySince, specPeriodBusy, "an operation in progress")
	return best, why
}

// step judges the leader's step at e against every owed row.
func (c *reconcilePeriod) step(e *history.Event, r *Report) {
	for _, id := range slices.Sorted(maps.Keys(c.owed)) {
		o := c.owed[id]
		if o.flagged {
			continue
		}
		due, why := c.due(o)
		if !e.At.After(due) {
			continue
		}
		if o.overdue.IsZero() {
			o.overdue, o.overdueSeq = e.At, e.Seq
			continue
		}
		r.Exercise()
		o.flagged = true
		r.Flag(id, e.At, fmt.Sprintf("%s of %s was called for since %s, and the leader %s stepped at %s and again at %s, past %s, with no StateReconciler tick handling it: with %s, the reconciler ticks by then (SPEC 3: the StateReconciler's adaptive period; 4.2: each tick handles every row)",
			o.what, id, stamp(o.since), c.leader, stamp(o.overdue), stamp(e.At), stamp(due), why), o.sinceSeq, o.overdueSeq, e.Seq)
	}
}

func (c *reconcilePeriod) Finish(*State, *Final, *Report) {}
