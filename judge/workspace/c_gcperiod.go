package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// specGCPeriod is SPEC 3's "Archive GC | every hour" (4.5: "Each hourly
// pass").
const specGCPeriod = time.Hour

// gcPeriod: SPEC 3's table, "Archive GC | every hour", and 4.5, "Each hourly
// pass: 1. Lists every object under archives/". A pass begins with a
// listing of the bucket (objects.List by the leader; listings less than
// GCNextPass apart are one pass, paged). While an instance leads, nothing
// disturbing it, a pass comes within the period plus its tolerance
// (PeriodTolerance) of the previous one, or of the leadership's start: a
// second step of the leader (a successful lock check at a new instant)
// past that time with no pass is flagged. Nor does the GC pass more often
// than every half period while none of the leader's calls failed (a
// failed listing or query skips the pass, 4.5, and a GC may try again
// sooner). A crash, a leadership change, a fault aimed at the leader and a
// failed DB call of the leader start the count again.
type gcPeriod struct {
	base
	leader string
	// from: the last pass, or the leadership's start or last disturbance
	// (pass false).
	from     time.Time
	fromSeq  int64
	pass     bool
	lastStep time.Time
	// overdue: the leader's first step past the due time; flagged: this
	// gap was flagged.
	overdue    time.Time
	overdueSeq int64
	flagged    bool
	// failed: the leader's last failed call.
	failed time.Time
}

func (*gcPeriod) Name() string     { return "gc-period" }
func (*gcPeriod) Contract() string { return "3" }

func (c *gcPeriod) restart(e *history.Event) {
	c.from, c.fromSeq, c.pass = e.At, e.Seq, false
	c.overdue, c.flagged = time.Time{}, false
}

func (c *gcPeriod) Observe(_ *State, e *history.Event, r *Report) {
	leader := c.leader != "" && e.Instance == c.leader
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader = e.Instance
			c.restart(e)
		} else if leader {
			c.leader = ""
		}
		return
	case history.KindCrash, history.KindFault:
		if leader {
			c.restart(e)
			c.failed = e.At
		}
		return
	case history.KindWrite, history.KindInsert:
		if leader && e.Err != "" {
			c.failed = e.At
			c.restart(e)
		}
		return
	case history.KindCall:
	default:
		return
	}
	if !leader {
		return
	}
	if e.Err != "" {
		c.failed = e.At
	}
	switch {
	case leftLead(e) || (strings.HasPrefix(e.Method, "store.") && e.Err != ""):
		c.restart(e)
	case e.Method == MLockCheck && e.Err == "" && e.At.After(c.lastStep):
		c.lastStep = e.At
		c.step(e, r)
	case e.Method == MObjList:
		c.listing(e, r)
	}
}

// listing is a listing of the bucket by the leader: a pass, unless it
// pages the pass before.
func (c *gcPeriod) listing(e *history.Event, r *Report) {
	if c.pass && e.At.Sub(c.from) < GCNextPass {
		return
	}
	if c.pass && !c.flagged {
		r.Exercise()
		if gap := e.At.Sub(c.from); gap < specGCPeriod/2 && c.failed.Before(c.from) {
			r.Flag("", e.At, fmt.Sprintf("the Archive GC of %s passed at %s and again at %s, %s later, none of its calls failing: it runs every hour (SPEC 3, 4.5)",
				c.leader, stamp(c.from), stamp(e.At), gap), c.fromSeq, e.Seq)
		}
	}
	c.from, c.fromSeq, c.pass = e.At, e.Seq, true
	c.overdue, c.flagged = time.Time{}, false
}

// step judges a step of the leader against the pass it owes.
func (c *gcPeriod) step(e *history.Event, r *Report) {
	if c.flagged || c.from.IsZero() {
		return
	}
	due := c.from.Add(specGCPeriod + PeriodTolerance(specGCPeriod))
	if !e.At.After(due) {
		return
	}
	if c.overdue.IsZero() {
		c.overdue, c.overdueSeq = e.At, e.Seq
		return
	}
	c.flagged = true
	r.Exercise()
	since := "its last pass"
	if !c.pass {
		since = "its leadership began or was last disturbed"
	}
	r.Flag("", e.At, fmt.Sprintf("the leader %s stepped at %s and again at %s with no Archive GC pass (a listing of the bucket) since %s at %s: it runs every hour (SPEC 3, 4.5)",
		c.leader, stamp(c.overdue), stamp(e.At), since, stamp(c.from)), c.fromSeq, c.overdueSeq, e.Seq)
}
