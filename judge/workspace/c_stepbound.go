package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// StepBound is SPEC 3's longest wait between two steps of a leader: "never
// more than 2 s after the current step, since the EventListener must
// drain the feed that often (4.6)".
const StepBound = 2 * time.Second

// stepBound: SPEC 3, "Steps": "While it leads, that time [the time it
// next wants to run] is never later than the earliest due time of its
// components, and never more than 2 s after the current step … Under the
// simulator a step takes no virtual time and the next step comes at the
// named time." Judged on the leader's steps: its acquisition, then each
// successful check of its lock at a new instant (SPEC 3.1: every step
// begins with one; the checks before actuator calls share their step's
// instant). Two consecutive steps of one leadership more than StepBound
// apart, the leader neither crashed nor gave the lead up in between (nor
// was struck by a fault that may have made it: a lost answer to a check
// reads as a failed one), is a step named too late. Virtual time only: a harness that moves a real
// clock on without stepping anyone leaves no step behind.
type stepBound struct {
	base
	leader string
	// last: the leader's latest step (zero: none known).
	last    time.Time
	lastSeq int64
}

func (*stepBound) Name() string     { return "step-bound" }
func (*stepBound) Contract() string { return "3" }

func (c *stepBound) Observe(_ *State, e *history.Event, r *Report) {
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader, c.last, c.lastSeq = e.Instance, e.At, e.Seq
		} else if e.Instance == c.leader {
			c.leader, c.last = "", time.Time{}
		}
		return
	case history.KindCrash:
		if e.Instance == c.leader {
			c.leader, c.last = "", time.Time{}
		}
		return
	case history.KindFault:
		if e.Instance != "" && e.Instance == c.leader {
			// A killed session or process, a lost answer (to a lock
			// check, it reads as a failed one): it may have stepped down.
			c.leader, c.last = "", time.Time{}
		}
		return
	case history.KindCall:
	default:
		return
	}
	if e.Instance != c.leader || c.leader == "" {
		return
	}
	if leftLead(e) {
		c.leader, c.last = "", time.Time{}
		return
	}
	if e.Method != MLockCheck || e.Err != "" || c.last.IsZero() || !e.At.After(c.last) {
		return
	}
	r.Exercise()
	if gap := e.At.Sub(c.last); gap > StepBound {
		r.Flag("", e.At, fmt.Sprintf("the leader %s stepped at %s and next at %s, %s later (SPEC 3: never more than 2 s after the current step while it leads)",
			c.leader, stamp(c.last), stamp(e.At), gap), c.lastSeq, e.Seq)
	}
	c.last, c.lastSeq = e.At, e.Seq
}
