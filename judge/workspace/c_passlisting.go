package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// passListing: SPEC 3, "The HealthMonitor's period is the time between
// its passes, each of which begins with one container listing (4.1)". On
// virtual time a pass is the HealthMonitor's events of one step, an
// instance's events at one instant (DR411): its first write or
// observation note (health.pass) comes after a container listing
// (instances.List) of the same instance at that instant, and the step
// holds one listing, not two. A crash begins a new step (a new process);
// a leadership change recorded inside a step (a deposition striking in
// one of its calls) does not.
type passListing struct {
	base
	// steps: per instance, the step being read.
	steps map[string]*listingStep
}

// listingStep is a step of one instance: its instant, its container
// listings, whether the HealthMonitor has written in it, and whether it
// was flagged.
type listingStep struct {
	at       time.Time
	listings int
	firstSeq int64
	wrote    bool
	flagged  bool
}

func (*passListing) Name() string     { return "pass-listing" }
func (*passListing) Contract() string { return "3" }

func (c *passListing) Observe(_ *State, e *history.Event, r *Report) {
	if e.Instance == "" {
		return
	}
	if c.steps == nil {
		c.steps = map[string]*listingStep{}
	}
	if e.Kind == history.KindCrash {
		delete(c.steps, e.Instance)
		return
	}
	list := e.Kind == history.KindCall && e.Method == MInstancesList
	hm := (e.Kind == history.KindWrite || e.Kind == history.KindNote) && e.Component == contracts.CompHealthMonitor
	if !list && !hm {
		return
	}
	c.step(e, list, r)
}

func (c *passListing) step(e *history.Event, list bool, r *Report) {
	st := c.steps[e.Instance]
	if st == nil || !st.at.Equal(e.At) {
		st = &listingStep{at: e.At}
		c.steps[e.Instance] = st
	}
	c.judge(st, e, list, r)
}

func (*passListing) judge(c *listingStep, e *history.Event, list bool, r *Report) {
	if c.flagged {
		return
	}
	if list {
		c.listings++
		if c.listings == 1 {
			c.firstSeq = e.Seq
			return
		}
		c.flagged = true
		r.Flag("", e.At, fmt.Sprintf("%s listed the containers twice in one step at %s: a HealthMonitor pass begins with one container listing (SPEC 3, 4.1)",
			e.Instance, stamp(e.At)), c.firstSeq, e.Seq)
		return
	}
	if c.wrote {
		return
	}
	c.wrote = true
	r.Exercise()
	if c.listings == 0 {
		c.flagged = true
		r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s wrote at %s in a step with no container listing before it: each pass begins with one container listing (SPEC 3, 4.1)",
			e.Instance, stamp(e.At)), e.Seq)
	}
}
