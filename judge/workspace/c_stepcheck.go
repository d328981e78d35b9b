package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// stepCheck: SPEC 3, "Steps": "In each step it first checks its lock (or,
// as a standby, tries to acquire it), then runs every component that is
// due", with SPEC 3.1: "The leader checks its lock session at every step,
// before any component runs". On virtual time a step is an instance's
// events at one instant (DR411): the first event of a component
// (eventComponent) in a step of a leading instance comes after its
// successful lock check, or its acquisition, at that instant. A step cut
// by a crash or a lost lease begins again at the next acquisition; a
// leader whose answer to a lock try was lost learns it leads at a later
// try the history does not show, and that step is taken for its
// acquisition.
type stepCheck struct {
	base
	// leader: the instance that holds the lock as far as the history
	// shows; checked: the instant of its latest successful check or
	// acquisition; judged: the instant already judged (one flag a step).
	leader  string
	checked time.Time
	judged  time.Time
	ok      bool
	// unaware: the leader's answer to a lock try was lost; its next try,
	// which the history does not show, is its acquisition
	// (tookLeadUnawares).
	unaware bool
}

func (*stepCheck) Name() string     { return "step-check" }
func (*stepCheck) Contract() string { return "3" }

func (c *stepCheck) Observe(_ *State, e *history.Event, r *Report) {
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			c.leader, c.checked, c.ok, c.unaware = e.Instance, e.At, true, false
		} else if e.Instance == c.leader {
			c.leader, c.ok = "", false
		}
		return
	case history.KindFault:
		if tookLeadUnawares(e) && e.Instance == c.leader {
			c.unaware = true
		}
		return
	case history.KindCrash:
		if e.Instance == c.leader {
			c.leader, c.ok = "", false
		}
		return
	}
	if c.leader == "" || e.Instance != c.leader {
		return
	}
	if e.Kind == history.KindCall && e.Method == MLockCheck {
		if e.Err == "" {
			c.checked, c.ok = e.At, true
		} else {
			c.ok = false // it stops every component (SPEC 3.1)
		}
		return
	}
	if eventComponent(e) == "" || c.judged.Equal(e.At) {
		return
	}
	c.judged = e.At
	if c.unaware {
		// The step of its unrecorded acquisition.
		c.checked, c.ok, c.unaware = e.At, true, false
	}
	if !c.ok {
		return // after a failed check: gives-up-at-once judges it
	}
	r.Exercise()
	if !c.checked.Equal(e.At) {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("the leader %s ran its %s at %s without checking its lock in that step first (its last check or acquisition at %s): every step begins with a check of the lock, before any component runs (SPEC 3, 3.1)",
			c.leader, eventComponent(e), stamp(e.At), stamp(c.checked)), e.Seq)
	}
}
