package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// TTLPeriodLate is how long, all along a run, a TTL rule may hold before
// the TTL Manager has applied it: its 60 s period plus that period's
// tolerance (PeriodTolerance), as the adaptive periods are judged.
var TTLPeriodLate = specTTLPeriod + PeriodTolerance(specTTLPeriod)

// specTTLPeriod is SPEC 3's "TTL Manager | every 60 s".
const specTTLPeriod = time.Minute

// ttlPeriod: SPEC 3's table, "TTL Manager | every 60 s | asks the API
// service layer for lower desired states when TTLs expire (4.4)". The ttl
// checker judges the rule of each change, and whether one is made at the
// end of a run; this judges the period all along the run: once a TTL rule
// (specTTL, on the replayed row and activity keys) has held for
// TTLPeriodLate (the period and its tolerance), the TTL Manager, having run at least once
// meanwhile, has applied it. Counted, like the ttl checker's end-of-run
// rule, from the latest of the TTL's expiry, the idle timer's expiry, the
// row's last change, its activity keys' last change, a flush of the keys
// and a change of leadership or a crash (nothing is owed while no
// instance leads: the count starts at the next acquisition); and, since a tick or a workspace
// the TTL Manager could not read is skipped (SPEC 3, "Failures"; 4.4
// "never stop a workspace on a guess"), from any failed call, lost answer
// or fault of a coordinator instance.
type ttlPeriod struct {
	rules *ttlRules
	// disturbed: the last failure of a coordinator instance.
	disturbed time.Time
	// next: when the rows are next looked at (once per virtual second).
	next time.Time
	// flagged: rows already flagged, until they change.
	flagged map[string]time.Time
	// coordinators: instances that took part in the election.
	coordinators map[string]bool
	// leader: the instance that leads ("" while none does: no TTL
	// Manager runs, and nothing is owed until one acquires).
	leader string
}

func (*ttlPeriod) Name() string     { return "ttl-period" }
func (*ttlPeriod) Contract() string { return "3" }

func (c *ttlPeriod) Observe(s *State, e *history.Event, r *Report) {
	if c.rules == nil {
		c.rules = &ttlRules{changed: map[string]time.Time{}}
		c.rules.init()
		c.flagged, c.coordinators = map[string]time.Time{}, map[string]bool{}
	}
	if !e.At.Before(c.next) {
		c.judge(s, e.At, e.Seq, r)
		c.next = e.At.Add(time.Second)
	}
	c.rules.follow(e)
	c.rules.track(e)
	switch e.Kind {
	case history.KindLeader:
		c.coordinators[e.Instance] = true
		if e.Method == "acquire" {
			c.leader, c.disturbed = e.Instance, e.At
		} else if e.Instance == c.leader {
			c.leader = ""
		}
	case history.KindCrash:
		if e.Instance == c.leader {
			c.leader = ""
		}
	case history.KindCall:
		if e.Method == MTryAcquire || e.Method == MLockCheck {
			c.coordinators[e.Instance] = true
		}
		if e.Err != "" && c.coordinators[e.Instance] {
			c.disturbed = e.At
		}
	case history.KindWrite, history.KindInsert:
		if e.Err != "" && c.coordinators[e.Instance] {
			c.disturbed = e.At
		}
		if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.DesiredState.Set &&
			(e.Args == onBehalfOf+string(contracts.CompTTLManager) || e.Component == contracts.CompTTLManager) {
			r.Exercise()
		}
	case history.KindFault:
		if e.Instance != "" {
			c.disturbed = e.At
		}
	}
}

// judge flags each row whose TTL rule has held past TTLPeriodLate by
// now, while an instance leads.
func (c *ttlPeriod) judge(s *State, now time.Time, seq int64, r *Report) {
	if c.leader == "" {
		return
	}
	for _, w := range sortedRows(s) {
		if _, ok := specTTLOfRow(w, now); !ok {
			continue // the keys could only hold it off
		}
		act := contracts.Activity{Connections: c.rules.conns[w.ID]}
		exp, timer := c.rules.idle[w.ID]
		if timer && now.Before(exp) {
			act.IdleTimerSet = true
		}
		want, ok := specTTL(w, act, now)
		if !ok {
			continue
		}
		ttl := time.Duration(w.StandbyTTLSeconds) * time.Second
		if want == contracts.DesiredPending {
			ttl = time.Duration(w.ArchiveTTLSeconds) * time.Second
		}
		since := w.LastAccessAt.Add(ttl)
		for _, t := range []time.Time{c.rules.changed[w.ID], c.rules.calm, c.disturbed} {
			if t.After(since) {
				since = t
			}
		}
		if timer && exp.After(since) {
			since = exp
		}
		if now.Sub(since) <= TTLPeriodLate {
			continue
		}
		if at, done := c.flagged[w.ID]; done && !c.rules.changed[w.ID].After(at) {
			continue
		}
		c.flagged[w.ID] = now
		r.Exercise()
		r.Flag(w.ID, now, fmt.Sprintf("the TTL rule for desired %s has held since %s (%s: observed %s, desired %s, last access %s, %d connection(s), idle timer %v) and the TTL Manager, which runs every 60 s, has not applied it",
			want, stamp(since), now.Sub(since).Round(time.Second), w.ObservedStatus, w.DesiredState, stamp(w.LastAccessAt), act.Connections, act.IdleTimerSet), seq)
	}
}

func (c *ttlPeriod) Finish(s *State, f *Final, r *Report) {
	if c.rules != nil {
		c.judge(s, f.End, 0, r)
	}
}
