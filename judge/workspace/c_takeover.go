package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// TakeoverBound is how soon after the leader lock is freed some live
// coordinator instance must hold it again: SPEC 7's failover target ("a
// few seconds", the TCP timeout of the leader's session, which in the
// simulator ends at once) read as the idle period of SPEC 3, the longest
// period of any component that runs more often than the TTL Manager.
// Whatever interval a standby chooses to retry at (SPEC 3), a coordinator
// that leaves the lock free longer than that meets no reading of "a few
// seconds".
const TakeoverBound = specPeriodIdle

// takeover: C10, "When the holder's session ends another takes over
// without intervention", with SPEC 3 ("A failure … of its lock session
// … makes the instance give up leadership at once; it then reconnects
// and competes for the lock again") and SPEC 7's failover target. Once
// the lock is free (its holder's session lost, a release), while some
// coordinator instance is alive, an acquisition follows within
// TakeoverBound. Counted from the latest of: the lock becoming free, an
// instance starting again (a restart), and a lock try that failed (the
// DB refused it: nobody could take the lock meanwhile). Not judged while
// every instance the history knows of is down. Virtual time only: a real
// session ends at a TCP timeout the history does not show.
type takeover struct {
	init bool
	// free: the lock is free, since the time below; flagged: that free
	// period has been flagged.
	free    bool
	since   time.Time
	freeSeq int64
	flagged bool
	// up: coordinator instances the history knows of, alive or not.
	up map[string]bool
}

func (*takeover) Name() string     { return "c10-takeover" }
func (*takeover) Contract() string { return "C10" }

func (c *takeover) alive() bool {
	for _, ok := range c.up {
		if ok {
			return true
		}
	}
	return false
}

func (c *takeover) Observe(s *State, e *history.Event, r *Report) {
	if !c.init {
		c.init, c.up = true, map[string]bool{}
	}
	c.judge(e.At, e.Seq, r)
	switch e.Kind {
	case history.KindLeader:
		if e.Instance != "" {
			if _, known := c.up[e.Instance]; !known {
				c.up[e.Instance] = true
			}
		}
		switch e.Method {
		case "acquire":
			if c.free && !c.flagged {
				r.Exercise()
			}
			c.free, c.flagged = false, false
		case "lost", "release":
			if s.Leader.Holder == e.Instance && !c.free {
				c.free, c.since, c.freeSeq, c.flagged = true, e.At, e.Seq, false
			}
		}
	case history.KindCrash:
		switch e.Method {
		case "crash":
			c.up[e.Instance] = false
		case "restart":
			c.up[e.Instance] = true
			c.later(e.At)
		}
	case history.KindCall:
		switch e.Method {
		case MTryAcquire, MLockCheck, MRelease:
			if _, known := c.up[e.Instance]; !known && e.Instance != "" {
				c.up[e.Instance] = true
			}
			if e.Method == MTryAcquire && e.Err != "" {
				c.later(e.At)
			}
		}
	}
}

// later moves the start of the free period's count to at.
func (c *takeover) later(at time.Time) {
	if c.free && at.After(c.since) {
		c.since = at
	}
}

// judge flags a free period that has lasted past the bound by now.
func (c *takeover) judge(now time.Time, seq int64, r *Report) {
	if !c.free || c.flagged || !c.alive() || !now.After(c.since.Add(TakeoverBound)) {
		return
	}
	c.flagged = true
	r.Exercise()
	r.Flag("", now, fmt.Sprintf("the leader lock was free from %s to %s (%s) with a coordinator instance alive and no lock try failing: nobody took over (C10: another takes over without intervention; SPEC 7: failover in a few seconds)",
		stamp(c.since), stamp(now), now.Sub(c.since)), c.freeSeq, seq)
}

func (c *takeover) Finish(_ *State, f *Final, r *Report) {
	if c.init {
		c.judge(f.End, 0, r)
	}
}
