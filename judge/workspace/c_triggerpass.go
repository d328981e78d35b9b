package workspace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// triggerPass: SPEC 3, "monitor:trigger": "On receiving any, the
// HealthMonitor runs a pass at its next step (it may observe every
// workspace, not only the one named)."
//
// Judged on the leader's subscription and steps. A monitor:trigger
// published successfully (and not dropped by the bus: a bus.DropMessages
// fault swallows the next N successful publishes) while the leader holds a
// subscription to the channel (a successful bus.Subscribe naming it, made
// since it last took the lead) is a message the leader receives; a pass
// (the leader's instances.List, failed or not: every pass begins with one
// container listing, SPEC 4.1) must then come no later than its next step.
// A step is a successful check of the leader's lock at a time later than
// the message and than the previous step (SPEC 3.1: every step begins with
// one; checks before actuator calls share their step's instant): a second
// such step with no pass since the message is a step that ignored it. A
// leadership change, a crash, a fault aimed at the leader (a killed
// session, a lost answer) and a failed call of the leader (a failed read
// skips the HealthMonitor's tick, SPEC 3 "Failures") excuse the pass owed.
// Virtual time only: a real runtime receives a message after the bus's
// latency, which a step's timing does not show.
type triggerPass struct {
	base
	leader string
	// subscribed: the leader holds a subscription to monitor:trigger.
	subscribed bool
	// drop: successful publishes the bus will still swallow.
	drop int
	// owed: the first trigger the leader received and has not yet
	// observed after (zero seq: none); steps: the leader's steps since,
	// at stepAt the latest.
	owedAt  time.Time
	owedSeq int64
	owedID  string
	steps   int
	stepAt  time.Time
}

func (*triggerPass) Name() string     { return "trigger-pass" }
func (*triggerPass) Contract() string { return "3" }

func (c *triggerPass) reset() {
	c.subscribed = false
	c.owedSeq, c.steps = 0, 0
}

func (c *triggerPass) Observe(_ *State, e *history.Event, r *Report) {
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader = e.Instance
			c.reset()
		} else if e.Instance == c.leader {
			c.leader = ""
			c.reset()
		}
		return
	case history.KindCrash:
		if e.Instance == c.leader {
			c.leader = ""
			c.reset()
		}
		return
	case history.KindFault:
		if e.Method == FDropMsgs {
			n, err := strconv.Atoi(strings.TrimSpace(e.Args))
			if err != nil || n < 1 {
				n = 1
			}
			c.drop += n
			return
		}
		if e.Instance != "" && e.Instance == c.leader {
			c.owedSeq = 0 // a killed session, a lost answer: excused
		}
		return
	case history.KindCall:
	default:
		return
	}
	if e.Method == MPublish && e.Err == "" {
		if c.drop > 0 {
			c.drop--
			return // swallowed by the bus
		}
		if e.Args == specMonitorTrigger && c.leader != "" && c.subscribed && c.owedSeq == 0 {
			c.owedAt, c.owedSeq, c.owedID, c.steps, c.stepAt = e.At, e.Seq, e.Result, 0, e.At
		}
	}
	if c.leader == "" || e.Instance != c.leader {
		return
	}
	switch {
	case leftLead(e):
		c.reset()
	case e.Method == MSubscribe && e.Err == "" && subscribesTo(e.Args, specMonitorTrigger):
		c.subscribed = true
	case e.Method == MInstancesList:
		if c.owedSeq != 0 {
			r.Exercise()
			c.owedSeq = 0
		}
	case e.Err != "":
		c.owedSeq = 0 // the leader's tick may have been skipped
	case e.Method == MLockCheck && c.owedSeq != 0 && e.At.After(c.stepAt):
		c.steps++
		c.stepAt = e.At
		if c.steps >= 2 {
			r.Exercise()
			r.Flag(c.owedID, e.At, fmt.Sprintf("the leader %s received monitor:trigger (payload %q) at %s and stepped twice since without an observation pass (SPEC 3: a pass at its next step)",
				c.leader, c.owedID, stamp(c.owedAt)), c.owedSeq, e.Seq)
			c.owedSeq = 0
		}
	}
}

// MSubscribe is a bus subscription; its Args join the channels with ",".
const MSubscribe = "bus.Subscribe"

// subscribesTo reports whether a subscription's channels (joined by ",")
// include ch.
func subscribesTo(channels, ch string) bool {
	for _, c := range strings.Split(channels, ",") {
		if strings.TrimSpace(c) == ch {
			return true
		}
	}
	return false
}

// recoveryTrigger: SPEC 3, "monitor:trigger": "the API publishes one
// after a recovery (4.3)", its payload the workspace id as plain text.
// Judged on the administrator's applied writes (a recovery: the only
// write of component admin, C3) and the bus.Publish calls on
// monitor:trigger: a publish of the id (failed ones included, the trigger
// being a hint) by the writing process, or by any process that never took
// part in the election (the API's), follows the write within one step
// (NowSlack). A lost answer to the write excuses it: its writer does not
// know it applied.
type recoveryTrigger struct {
	// owed: workspace → the recovery owing a trigger.
	owed map[string]*history.Event
	// coordinators: instances that took part in the election.
	coordinators map[string]bool
}

func (*recoveryTrigger) Name() string     { return "recovery-trigger" }
func (*recoveryTrigger) Contract() string { return "3" }

func (c *recoveryTrigger) Observe(_ *State, e *history.Event, r *Report) {
	if c.owed == nil {
		c.owed, c.coordinators = map[string]*history.Event{}, map[string]bool{}
	}
	c.expire(e.Instance, e.At, r)
	switch {
	case e.Kind == history.KindLeader && e.Instance != "":
		c.coordinators[e.Instance] = true
	case e.Kind == history.KindCall && (e.Method == MTryAcquire || e.Method == MLockCheck) && e.Instance != "":
		c.coordinators[e.Instance] = true
	case e.Kind == history.KindFault && e.Method == FLostResp && e.Workspace != "":
		if o := c.owed[e.Workspace]; o != nil && o.Instance == e.Instance {
			delete(c.owed, e.Workspace)
		}
	case e.Kind == history.KindCall && e.Method == MPublish && e.Args == specMonitorTrigger:
		if o := c.owed[e.Result]; o != nil && (e.Instance == o.Instance || !c.coordinators[e.Instance]) {
			r.Exercise()
			delete(c.owed, e.Result)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Err == "" && e.Component == contracts.CompAdmin && e.Workspace != "":
		if _, ok := c.owed[e.Workspace]; !ok {
			c.owed[e.Workspace] = e
		}
	}
}

// expire judges the recoveries of inst (every one when inst is empty)
// whose step is over by now: the writer recorded something more than
// NowSlack after the write, or the run ended.
func (c *recoveryTrigger) expire(inst string, now time.Time, r *Report) {
	var ids []string
	for id, o := range c.owed {
		if (inst == "" || o.Instance == inst) && now.Sub(o.At) > NowSlack {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		o := c.owed[id]
		delete(c.owed, id)
		r.Exercise()
		r.Flag(id, o.At, fmt.Sprintf("the administrator's recovery of %s (by %s) was not followed by a publish of monitor:trigger (payload %s) (SPEC 3: the API publishes one after a recovery)", id, o.Instance, id), o.Seq)
	}
}

func (c *recoveryTrigger) Finish(_ *State, f *Final, r *Report) {
	c.expire("", f.End.Add(NowSlack+time.Nanosecond), r)
}
