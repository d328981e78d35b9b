package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// stepEnds reports whether e ends, for its instance inst, the step the
// due-time checkers are reading: the instance crashes, its lead ends (a
// leadership event, a release, a failed lock check, a write refused as
// fenced), its lock try's answer was lost (it leads unawares), or a fault
// names it (a killed session, a deposition, a lost answer: it may cut the
// step short). SPEC 3: "(unless it gives up leadership within that
// step)".
func stepEnds(e *history.Event, inst string) bool {
	if e.Instance != inst {
		return e.Kind == history.KindFault && e.Method == FDepose
	}
	switch e.Kind {
	case history.KindCrash, history.KindFault:
		return true
	case history.KindLeader:
		return e.Method != "acquire"
	}
	return leftLead(e) || refusedAsFenced(e)
}

// gcListing reports whether e is a listing of archives/, the start of an
// Archive GC pass (SPEC 4.5, step 1).
func gcListing(e *history.Event) bool {
	return e.Kind == history.KindCall && e.Method == MObjList && strings.HasPrefix(specArchivePrefix, e.Args)
}

// firstStep: SPEC 3, "Due times": "A leadership begins with every
// component due: the step in which an instance acquires the lock runs all
// five (unless it gives up leadership within that step)."
//
// The acquisition step of an instance is its events at the instant of a
// recorded acquisition (a step takes no virtual time, DR411). Judged for
// the three components whose tick always leaves an event, each by the
// first thing SPEC says the tick does: the HealthMonitor's container
// listing (4.1, instances.List), the Archive GC's listing of archives/
// (4.5, objects.List) and the EventListener's LISTEN (4.6: it "listens
// from its first step as leader"; feed.Listen), the last only when the
// instance was not already listening (DR562). A failed listing is the
// tick all the same (3, "Failures"). The StateReconciler and the TTL
// Manager begin with a read of the rows, which the history records only
// when it fails: not judged here (DR561), but by their effects in
// first-step-reconciler and first-step-ttl (firstStepRows, DR600). A step that ends the lead, a crash, a
// fault naming the instance (or a deposition) and a lock try whose answer
// was lost excuse the step.
type firstStep struct {
	base
	// listening: instances with a LISTEN since they last gave the lead up
	// or crashed.
	listening map[string]bool
	cur       *acqStep
}

// acqStep is an acquisition step being read.
type acqStep struct {
	inst    string
	at      time.Time
	seq     int64
	ended   bool
	listens bool // the instance was listening before
	seen    [3]bool
}

// firstStepComponents names the components firstStep judges, in the order
// of acqStep.seen.
var firstStepComponents = [3]string{
	"HealthMonitor (a container listing, SPEC 4.1)",
	"Archive GC (a listing of archives/, SPEC 4.5)",
	"EventListener (a LISTEN, SPEC 4.6)",
}

func (*firstStep) Name() string     { return "first-step-components" }
func (*firstStep) Contract() string { return "3" }

func (c *firstStep) Observe(_ *State, e *history.Event, r *Report) {
	if c.listening == nil {
		c.listening = map[string]bool{}
	}
	if c.cur != nil && e.At.After(c.cur.at) {
		c.judge(r)
	}
	if st := c.cur; st != nil {
		if stepEnds(e, st.inst) {
			st.ended = true
		}
		if e.Instance == st.inst && e.Kind == history.KindCall {
			switch {
			case e.Method == MInstancesList:
				st.seen[0] = true
			case gcListing(e):
				st.seen[1] = true
			case e.Method == MListen:
				st.seen[2] = true
			}
		}
	}
	switch {
	case e.Instance == "":
	case e.Kind == history.KindLeader && e.Method == "acquire":
		c.cur = &acqStep{inst: e.Instance, at: e.At, seq: e.Seq, listens: c.listening[e.Instance]}
	case e.Kind == history.KindCrash, leftLead(e), refusedAsFenced(e):
		delete(c.listening, e.Instance)
	case e.Kind == history.KindCall && e.Method == MListen && e.Err == "":
		c.listening[e.Instance] = true
	}
}

// judge ends the acquisition step being read.
func (c *firstStep) judge(r *Report) {
	st := c.cur
	c.cur = nil
	if st.ended {
		return
	}
	r.Exercise()
	var missing []string
	for i, ok := range st.seen {
		if !ok && (i != 2 || !st.listens) {
			missing = append(missing, firstStepComponents[i])
		}
	}
	if len(missing) == 0 {
		return
	}
	r.Flag("", st.at, fmt.Sprintf("%s acquired the leader lock at %s and its step there showed no tick of the %s: the step in which an instance acquires the lock runs all five components (SPEC 3, \"Due times\")",
		st.inst, stamp(st.at), strings.Join(missing, ", nor of the ")), st.seq)
}

// gcHourly: SPEC 3, "Due times": "The Archive GC is then due one hour
// after the start of its previous pass, whether that pass succeeded or
// failed (a failed pass is skipped, not retried sooner), and its next
// pass runs at the first step at or after that time: never at an earlier
// step, never at a later one."
//
// A pass starts with a listing of archives/ by the leader (4.5; listings
// at one instant are one pass, paged). A step of the leader is its
// acquisition or a successful check of its lock at a new instant (3,
// "Steps": each step first checks the lock; DR563). From a leadership's
// first pass on, the next pass is due one hour after the previous pass
// started: a pass at an earlier instant is flagged, and so is a step at or
// after the due time that ends without one, unless the step was cut short
// (stepEnds); once per gap. The count ends with the lead (a release, a failed check, a
// refused write, a crash, another's acquisition, a lost leadership): a new
// leadership starts with a first pass, which first-step-components judges.
type gcHourly struct {
	base
	leader string
	// last: the start of the leadership's last pass (zero: none yet).
	last    time.Time
	lastSeq int64
	// step: the leader's step being read; owed: it is at or past the due
	// time and has not passed yet; ended: it was cut short.
	step    time.Time
	stepSeq int64
	owed    bool
	ended   bool
	// late: a step of this gap was flagged (once per gap).
	late bool
}

func (*gcHourly) Name() string     { return "gc-hourly" }
func (*gcHourly) Contract() string { return "3" }

func (c *gcHourly) endLead() {
	c.leader, c.last, c.owed, c.late = "", time.Time{}, false, false
}

func (c *gcHourly) Observe(_ *State, e *history.Event, r *Report) {
	if c.owed && e.At.After(c.step) {
		c.owed = false
		if !c.ended && !c.late {
			c.late = true
			r.Exercise()
			due := c.last.Add(specGCPeriod)
			r.Flag("", c.step, fmt.Sprintf("the Archive GC of %s last passed at %s, so its next pass was due at %s, and the leader's step at %s, the first at or after that time, ran none: it runs at the first step at or after its due time, never later (SPEC 3, \"Due times\")",
				c.leader, stamp(c.last), stamp(due), stamp(c.step)), c.lastSeq, c.stepSeq)
		}
	}
	if c.leader == "" {
		if e.Kind == history.KindLeader && e.Method == "acquire" {
			c.leader = e.Instance
			c.newStep(e)
		}
		return
	}
	switch {
	case e.Kind == history.KindLeader && e.Method == "acquire":
		c.endLead()
		c.leader = e.Instance
		c.newStep(e)
		return
	case stepEnds(e, c.leader):
		c.ended = true
		if e.Kind != history.KindFault || e.Method == FDepose || tookLeadUnawares(e) || e.Method == "store.KillSession" {
			c.endLead()
		}
		return
	case e.Instance != c.leader:
		return
	case e.Kind == history.KindCall && e.Method == MLockCheck && e.Err == "" && e.At.After(c.step):
		c.newStep(e)
	case gcListing(e):
		c.listing(e, r)
	}
}

// newStep begins a step of the leader at e.
func (c *gcHourly) newStep(e *history.Event) {
	c.step, c.stepSeq, c.ended = e.At, e.Seq, false
	c.owed = !c.last.IsZero() && !e.At.Before(c.last.Add(specGCPeriod))
}

// listing is a listing of archives/ by the leader.
func (c *gcHourly) listing(e *history.Event, r *Report) {
	if c.last.Equal(e.At) {
		return // the same pass, paged
	}
	if !c.last.IsZero() {
		r.Exercise()
		if due := c.last.Add(specGCPeriod); e.At.Before(due) {
			r.Flag("", e.At, fmt.Sprintf("the Archive GC of %s passed at %s and again at %s, before its due time %s: the next pass is due one hour after the start of the previous one, whether it succeeded or failed, never at an earlier step (SPEC 3, \"Due times\")",
				c.leader, stamp(c.last), stamp(e.At), stamp(due)), c.lastSeq, e.Seq)
		}
	}
	c.last, c.lastSeq, c.owed, c.late = e.At, e.Seq, false, false
}
