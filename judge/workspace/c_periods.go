package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// MInstancesList is a listing of the containers: every observation pass
// of the HealthMonitor makes one (SPEC 4.1, 5.1: every container in one
// call).
const MInstancesList = "instances.List"

// PeriodTolerance is the slack allowed over an adaptive period: half the
// period plus a second (a loop's tick, a pass timed from its end rather
// than its start).
func PeriodTolerance(period time.Duration) time.Duration { return period/2 + time.Second }

// PeriodNotice is how long a fleet state must have lasted before a pass
// is expected to follow it: an idle coordinator polls every PeriodIdle, so
// it may learn of a new operation or divergence only that late.
var PeriodNotice = specPeriodIdle + PeriodTolerance(specPeriodIdle)

// periods: SPEC 3's adaptive periods. The leader's observation passes
// (its instances.List calls, failed ones included) come at most every 2 s
// (plus tolerance) while a
// workspace has had an operation in progress, every 5 s while a healthy,
// non-deleted workspace has had desired ≠ observed, and no more often than
// every PeriodIdle/2 while the fleet has had neither, no monitor:trigger
// was published and none of the leader's calls failed (a failed
// observation may be tried again sooner; listings less than a second
// apart are one pass). Every period, the idle 30 s included, is also an
// upper bound judged at the leader's steps (its successful lock checks,
// which SPEC 3.1 puts at the start of every step): a leader that steps
// twice past its next pass's due time without making it is flagged,
// whether or not it ever made a pass. A harness that moves the clock on
// without stepping anyone leaves no step behind, so it is never mistaken
// for a coordinator that slept — "has had"
// meaning continuously since at least PeriodNotice
// before the previous pass, so that a coordinator that was idle has had a
// pass in which to notice. Judged on the history: instances.List calls by
// the lock holder, the rows replayed from the writes; a gap that spans a
// leadership change or a crash is not judged. (The reconciler shares the
// period, but a successful read of the DB leaves no event to time it by.)
type periods struct {
	base
	init   bool
	leader string
	// last is the leader's previous pass in this term (zero: none).
	last    time.Time
	lastSeq int64
	// disturbed is the last time the leader could have lost track of the
	// fleet: a failed DB call, a lost DB answer, a leadership change.
	disturbed time.Time
	// busySince and divergedSince: since when each workspace has had an
	// operation in progress, or has diverged (specFleet).
	busySince, divergedSince map[string]time.Time
	// idleSince is since when no workspace has been busy or diverged
	// (zero: not idle); trigger is the last monitor:trigger published;
	// failed is the leader's last failed call (an observation that fails
	// may be tried again at once).
	idleSince, trigger, failed time.Time
	// overdue is the leader's first step (a successful lock check) at
	// which its next pass was already due (zero: none since the last pass
	// or disturbance); flagged: that gap has been flagged.
	overdue    time.Time
	overdueSeq int64
	flagged    bool
}

// SamePass is how close two listings of the leader are taken for one
// observation pass.
const SamePass = time.Second

func (*periods) Name() string     { return "adaptive-periods" }
func (*periods) Contract() string { return "3" }

func (c *periods) Observe(s *State, e *history.Event, r *Report) {
	if !c.init {
		c.init = true
		c.busySince, c.divergedSince = map[string]time.Time{}, map[string]time.Time{}
	}
	if e.Kind == history.KindCall && e.Method == MPublish && strings.HasPrefix(e.Args, specMonitorTrigger) {
		c.trigger = e.At
	}
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader = e.Instance
		} else if e.Instance == c.leader {
			c.leader = ""
		}
		c.disturb(e.At)
	case history.KindCrash:
		if e.Instance == c.leader {
			c.disturb(e.At)
		}
	case history.KindFault:
		if e.Instance != "" && e.Instance == c.leader {
			c.disturb(e.At) // a lost answer, a killed session, a crash planned
		}
	case history.KindWrite, history.KindInsert:
		if c.leader != "" && e.Instance == c.leader && e.Err != "" {
			// A write the DB failed is a failed call of the leader: the
			// idle floor is lifted, and its tick may have been skipped.
			c.failed = e.At
			c.disturb(e.At)
		}
	case history.KindCall:
		if c.leader == "" || e.Instance != c.leader {
			return
		}
		if e.Err != "" {
			c.failed = e.At
		}
		if strings.HasPrefix(e.Method, "store.") && (e.Err != "" || e.Method == MTryAcquire || e.Method == MRelease) {
			// The DB failed the leader, or it stepped down: its ticks
			// may have been skipped, its view of the fleet is stale.
			c.disturb(e.At)
			return
		}
		if e.Method == MLockCheck && e.Err == "" {
			c.step(e, r)
			return
		}
		if e.Method != MInstancesList {
			return
		}
		if !c.last.IsZero() && !c.flagged {
			c.judge(e, r)
		}
		c.last, c.lastSeq = e.At, e.Seq
		c.overdue, c.flagged = time.Time{}, false
	}
}

func (c *periods) disturb(at time.Time) {
	c.last, c.disturbed = time.Time{}, at
	c.overdue, c.flagged = time.Time{}, false
}

// step judges a step of the leader (a successful lock check, SPEC 3.1:
// every step begins with one) against the pass it owes: the next pass is
// due one period plus tolerance after the previous one (after the
// leadership began or the last disturbance, when there is none, with the
// idle period). A step past that time may be the one that makes the
// pass; a second step past it without a pass in between shows a leader
// that was running and did not observe. Judged whether or not the leader
// ever passes, and so for the idle 30 s as an upper bound too: a
// harness that moves the clock on without stepping anyone leaves no
// step behind.
func (c *periods) step(e *history.Event, r *Report) {
	if c.flagged {
		return
	}
	ref, period, why, id := c.disturbed, specPeriodIdle, "the fleet is idle (or a pass is owed since the leadership began or was last disturbed)", ""
	if !c.last.IsZero() {
		ref = c.last
		period, why, id = c.owed()
	}
	due := ref.Add(period + PeriodTolerance(period))
	if !e.At.After(due) {
		return
	}
	if c.overdue.IsZero() {
		c.overdue, c.overdueSeq = e.At, e.Seq
		return
	}
	r.Exercise()
	c.flagged = true
	seqs := []int64{c.overdueSeq, e.Seq}
	if c.lastSeq != 0 && !c.last.IsZero() {
		seqs = append([]int64{c.lastSeq}, seqs...)
	}
	r.Flag(id, e.At, fmt.Sprintf("the leader stepped at %s and again at %s without an observation pass, %s after its last one (or since %s) while %s (period %s)",
		stamp(c.overdue), stamp(e.At), e.At.Sub(ref), stamp(ref), why, period), seqs...)
}

// owed is the period the leader's next pass is held to after a pass at
// c.last: the busy or diverged one once that state has lasted
// PeriodNotice before it, else the idle one (the longest).
func (c *periods) owed() (time.Duration, string, string) {
	since := c.last.Add(-PeriodNotice)
	if !c.disturbed.After(since) {
		if w, ok := earliest(c.busySince, since); ok {
			return specPeriodBusy, "an operation is in progress", w
		}
		if w, ok := earliest(c.divergedSince, since); ok {
			return specPeriodDiverged, "a workspace's desired state differs from the observed one", w
		}
	}
	return specPeriodIdle, "the fleet is idle", ""
}

// judge checks the gap between the leader's previous pass and e. The
// shorter periods apply once the fleet state, and the leader's view of
// the DB, have lasted PeriodNotice before the previous pass.
func (c *periods) judge(e *history.Event, r *Report) {
	since := c.last.Add(-PeriodNotice)
	var (
		period  time.Duration
		why, id string
	)
	if w, ok := earliest(c.busySince, since); ok && !c.disturbed.After(since) {
		period, why, id = specPeriodBusy, "an operation is in progress", w
	} else if w, ok := earliest(c.divergedSince, since); ok && !c.disturbed.After(since) {
		period, why, id = specPeriodDiverged, "a workspace's desired state differs from the observed one", w
	} else {
		// The idle period is judged as a lower bound only: a harness
		// may move the clock on by hours over an idle fleet without
		// running anyone (the real tier's GC scenario), and nothing in
		// the history says so.
		gap := e.At.Sub(c.last)
		if c.idleSince.IsZero() || c.idleSince.After(since) || c.disturbed.After(since) || c.trigger.After(since) || !c.failed.Before(since) || gap < SamePass {
			return
		}
		r.Exercise()
		if gap < specPeriodIdle/2 {
			r.Flag("", e.At, fmt.Sprintf("%s between two observation passes of the leader while the fleet was idle (period %s)", gap, specPeriodIdle), c.lastSeq, e.Seq)
		}
		return
	}
	r.Exercise()
	gap := e.At.Sub(c.last)
	if gap > period+PeriodTolerance(period) {
		r.Flag(id, e.At, fmt.Sprintf("%s between two observation passes of the leader while %s (period %s)", gap, why, period), c.lastSeq, e.Seq)
	}
}

// earliest returns the smallest id whose time is at or before t.
func earliest(m map[string]time.Time, t time.Time) (string, bool) {
	best, ok := "", false
	for id, at := range m {
		if !at.After(t) && (!ok || id < best) {
			best, ok = id, true
		}
	}
	return best, ok
}

func (c *periods) AfterApply(s *State, e *history.Event, _ *Report) {
	if !c.init || (e.Kind != history.KindWrite && e.Kind != history.KindInsert) {
		return
	}
	w := s.Row(e.Workspace)
	var f specFleet
	if w != nil {
		f.add(w)
	}
	track(c.busySince, e.Workspace, f.busy > 0, e.At)
	track(c.divergedSince, e.Workspace, f.diverged > 0, e.At)
	switch idle := len(c.busySince) == 0 && len(c.divergedSince) == 0; {
	case !idle:
		c.idleSince = time.Time{}
	case c.idleSince.IsZero():
		c.idleSince = e.At
	}
}

func track(m map[string]time.Time, id string, on bool, at time.Time) {
	if !on {
		delete(m, id)
		return
	}
	if _, ok := m[id]; !ok {
		m[id] = at
	}
}
