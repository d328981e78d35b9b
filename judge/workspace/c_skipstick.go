package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// skipsTick: SPEC 3: "Only the leader runs the five components", each at
// its period (the table: HealthMonitor "adaptive period: 2 s, 5 s or
// 30 s", Archive GC "every hour"), and "Failures": "A failure of a
// component's whole tick (a listing or a query) skips the tick" — that
// tick, not the component's next ones; with 4.1 ("A pass lists every
// workspace container once ... then reads the active selection ... If
// either listing fails, the pass ends ... and the next pass tries again")
// and 4.5 ("Each hourly pass: 1. Lists every object under archives/").
//
// Judged for the two components whose every tick leaves an event, since
// each begins with a listing: the HealthMonitor (a container listing,
// instances.List) and the Archive GC (a listing of archives/,
// objects.List). A failed or unanswered listing is a tick all the same.
// While one instance holds the lock, from its acquisition (or the
// successful check that showed it holding the lock again after a failed
// one), a tick of each comes no later than its slowest period plus the
// tolerance the periods are judged with (PeriodTolerance) after the
// previous one or the start: 30 s + 16 s for the HealthMonitor (its
// period is never longer than 30 s, whatever the fleet), 1 h + 31 min for
// the GC. The count is not restarted by a failed tick, a failed DB call or
// any outage the leader goes on leading through: a failure skips one
// tick, and the next one is due at the period all the same. It ends when
// the lead does (the leader's loss, release or failed lock check, a write
// refused as fenced, another's acquisition, a crash, a lock taken with its
// answer lost): nothing is owed while no one leads, or by an instance that
// does not know it leads. Judged at the leader's steps (its successful
// lock checks, SPEC 3.1: one begins every step): a second step past the
// due time with no tick of the component since is flagged, once per gap.
//
// adaptive-periods and gc-period judge the periods themselves, tighter,
// but restart their count at every failure of the leader (a failed read
// may leave it unaware of the fleet's state); this checker holds the
// component to the loosest period across those failures.
type skipsTick struct {
	leader string
	ticks  [2]tickGap
}

// tickGap follows one component's ticks during a leadership.
type tickGap struct {
	// last is its latest tick, or the leadership's start.
	last time.Time
	// overdue is the leader's first step past the due time (zero: none).
	overdue time.Time
	seq     int64
}

// The components skipsTick follows, their tick's listing and bound.
var skipsTickComponents = [2]struct {
	name   string
	period time.Duration
}{
	{"HealthMonitor", specPeriodIdle},
	{"Archive GC", specGCPeriod},
}

func (*skipsTick) Name() string     { return "skips-tick" }
func (*skipsTick) Contract() string { return "3" }

// tickOf says which component e is a tick of (-1: none).
func tickOf(e *history.Event) int {
	switch {
	case e.Kind == history.KindCall && e.Method == MInstancesList:
		return 0
	case e.Kind == history.KindCall && e.Method == MObjList && strings.HasPrefix(specArchivePrefix, e.Args):
		return 1
	}
	return -1
}

func (c *skipsTick) start(inst string, at time.Time) {
	c.leader = inst
	for i := range c.ticks {
		c.ticks[i] = tickGap{last: at}
	}
}

func (c *skipsTick) Observe(s *State, e *history.Event, r *Report) {
	inst := e.Instance
	switch {
	case e.Kind == history.KindLeader && e.Method == "acquire":
		c.start(inst, e.At)
		return
	case inst == "":
		return
	case e.Kind == history.KindLeader, e.Kind == history.KindCrash:
		if inst == c.leader {
			c.leader = ""
		}
		return
	case tookLeadUnawares(e), refusedAsFenced(e) && inst == c.leader:
		c.leader = ""
		return
	case e.Kind == history.KindCall && e.Method == MLockCheck:
		switch {
		case e.Err != "":
			if inst == c.leader {
				c.leader = ""
			}
		case c.leader == "" && s.Leader.Holder == inst:
			c.start(inst, e.At) // it holds the lock again
		case inst == c.leader:
			c.step(e, r)
		}
		return
	}
	if inst != c.leader {
		return
	}
	if i := tickOf(e); i >= 0 {
		g := &c.ticks[i]
		if !g.last.IsZero() {
			r.Exercise()
		}
		*g = tickGap{last: e.At}
	}
}

// step judges the leader's step at e against every component's due time.
func (c *skipsTick) step(e *history.Event, r *Report) {
	for i := range c.ticks {
		g := &c.ticks[i]
		period := skipsTickComponents[i].period
		due := g.last.Add(period + PeriodTolerance(period))
		if !e.At.After(due) {
			continue
		}
		switch {
		case g.overdue.IsZero():
			g.overdue, g.seq = e.At, e.Seq
		case e.At.After(g.overdue):
			r.Flag("", e.At, fmt.Sprintf("%s leads and stepped at %s and %s with no %s tick since %s: a tick is due at least every %s (plus %s); a failure skips one tick, not the component's next ones (SPEC 3)",
				c.leader, stamp(g.overdue), stamp(e.At), skipsTickComponents[i].name, stamp(g.last), period, PeriodTolerance(period)), g.seq, e.Seq)
			*g = tickGap{last: e.At} // once per gap
		}
	}
}

func (*skipsTick) Finish(*State, *Final, *Report) {}
