package workspace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Bus methods and the flush fault the TTL checker follows.
const (
	MBusIncr   = "bus.Incr"
	MBusDecr   = "bus.Decr"
	MBusSet    = "bus.Set"
	MBusDel    = "bus.Del"
	FFlushBus  = "bus.FlushAll"
	onBehalfOf = history.OnBehalfPrefix
)

// ttlRules: SPEC 4.4. A desired-state change the TTL Manager asks for is
// made only when its rule holds on the row and on the activity keys as
// they stood: STANDBY for an idle RUNNING workspace (no connection, no
// idle timer, untouched past its standby TTL); PENDING for a STANDBY one
// its user left there, untouched past its archive TTL.
//
// And it is made (the TTL Manager runs every 60 s): at the end of a run
// whose faults stopped, no workspace's rule has held for longer than
// TTLLate on the final row and activity keys, counted from the latest of
// its TTL's expiry, the row's last change, its activity keys' last
// change, the end of the faults and the last change of leadership.
type ttlRules struct {
	activityKeys
	// changed is, per workspace, the last change of its row or of its
	// activity keys; calm is the last flush of the keys or change of
	// leadership (a failed lock check or a release ends one, SPEC 3.1).
	changed map[string]time.Time
	calm    time.Time
}

// TTLLate is how long a TTL rule may hold before the TTL Manager, which
// runs every 60 s (SPEC 3), has applied it: two of its periods and a
// second.
const TTLLate = 2*time.Minute + time.Second

func (*ttlRules) Name() string     { return "ttl" }
func (*ttlRules) Contract() string { return "4.4" }

func (c *ttlRules) Observe(s *State, e *history.Event, r *Report) {
	if c.changed == nil {
		c.init()
		c.changed = map[string]time.Time{}
	}
	c.follow(e)
	c.track(e)
	switch {
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.DesiredState.Set &&
		(e.Args == onBehalfOf+string(contracts.CompTTLManager) || e.Component == contracts.CompTTLManager):
		w := s.Row(e.Workspace)
		if w == nil {
			return
		}
		r.Exercise()
		act := contracts.Activity{Connections: c.conns[w.ID]}
		if exp, ok := c.idle[w.ID]; ok && e.At.Before(exp) {
			act.IdleTimerSet = true
		}
		want, ok := specTTL(w, act, e.At)
		if !ok || want != e.Patch.DesiredState.V {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("TTL set desired %s although the rule does not hold (observed %s, health %s, operation %s, desired %s, %s since last access, %d connection(s), idle timer %v)",
				e.Patch.DesiredState.V, w.ObservedStatus, w.HealthStatus, w.Operation, w.DesiredState, e.At.Sub(w.LastAccessAt), act.Connections, act.IdleTimerSet), e.Seq)
		}
	}
}

// activityKeys follows SPEC 4.4's activity keys through the bus calls that
// set them and the flushes that drop them.
type activityKeys struct {
	conns map[string]int64     // workspace → ws_conn counter
	idle  map[string]time.Time // workspace → idle timer expiry (zero: none)
}

func (c *activityKeys) init() {
	if c.conns == nil {
		c.conns, c.idle = map[string]int64{}, map[string]time.Time{}
	}
}

// track follows the activity keys (ws_conn: counters, idle_timer: expiries)
// through the bus calls that set them and the flushes that drop them.
func (c *activityKeys) track(e *history.Event) {
	switch {
	case e.Kind == history.KindCall && e.Err == "" && (e.Method == MBusIncr || e.Method == MBusDecr):
		if id, ok := strings.CutPrefix(e.Args, "ws_conn:"); ok {
			if n, err := strconv.ParseInt(e.Result, 10, 64); err == nil {
				c.conns[id] = n
			}
		}
	case e.Kind == history.KindCall && e.Err == "" && e.Method == MBusSet:
		// Args: "key=value[ ttl=D]".
		key, rest, _ := strings.Cut(e.Args, "=")
		if id, ok := strings.CutPrefix(key, "idle_timer:"); ok {
			exp := time.Time{}.Add(1<<62 - 1) // no ttl: until deleted
			if _, ttl, has := strings.Cut(rest, " ttl="); has {
				if d, err := time.ParseDuration(ttl); err == nil {
					exp = e.At.Add(d)
				}
			}
			c.idle[id] = exp
		}
	case e.Kind == history.KindCall && e.Err == "" && e.Method == MBusDel:
		for _, key := range strings.Split(e.Args, ",") {
			if id, ok := strings.CutPrefix(key, "idle_timer:"); ok {
				delete(c.idle, id)
			}
			if id, ok := strings.CutPrefix(key, "ws_conn:"); ok {
				delete(c.conns, id)
			}
		}
	case e.Kind == history.KindFault && e.Method == FFlushBus:
		clear(c.conns)
		clear(c.idle)
	}
}

// follow notes what resets the time a TTL rule has held for.
func (c *ttlRules) follow(e *history.Event) {
	switch {
	case (e.Kind == history.KindWrite && e.Applied) || (e.Kind == history.KindInsert && e.Err == ""):
		c.changed[e.Workspace] = e.At
	case e.Kind == history.KindCall && e.Err == "" && (e.Method == MBusIncr || e.Method == MBusDecr || e.Method == MBusSet || e.Method == MBusDel):
		for _, key := range strings.Split(e.Args, ",") {
			key, _, _ = strings.Cut(key, "=")
			for _, prefix := range []string{"ws_conn:", "idle_timer:"} {
				if id, ok := strings.CutPrefix(key, prefix); ok {
					c.changed[id] = e.At
				}
			}
		}
	case e.Kind == history.KindFault && e.Method == FFlushBus, e.Kind == history.KindLeader, e.Kind == history.KindCrash,
		leftLead(e), tookLeadUnawares(e):
		c.calm = e.At
	}
}

func (c *ttlRules) Finish(s *State, f *Final, r *Report) {
	if s.Quiet.IsZero() || c.conns == nil {
		return
	}
	for _, w := range sortedRows(s) {
		act := contracts.Activity{Connections: c.conns[w.ID]}
		exp, timer := c.idle[w.ID]
		if timer && f.End.Before(exp) {
			act.IdleTimerSet = true
		}
		want, ok := specTTL(w, act, f.End)
		if !ok {
			continue
		}
		ttl := time.Duration(w.StandbyTTLSeconds) * time.Second
		if want == contracts.DesiredPending {
			ttl = time.Duration(w.ArchiveTTLSeconds) * time.Second
		}
		since := w.LastAccessAt.Add(ttl)
		for _, t := range []time.Time{c.changed[w.ID], c.calm, s.Quiet} {
			if t.After(since) {
				since = t
			}
		}
		if timer && exp.After(since) {
			since = exp
		}
		if f.End.Sub(since) <= TTLLate {
			continue
		}
		r.Exercise()
		r.Flag(w.ID, f.End, fmt.Sprintf("the TTL rule for desired %s has held since %s (%s before the end: observed %s, desired %s, last access %s, %d connection(s), idle timer %v) and the TTL Manager never applied it",
			want, stamp(since), f.End.Sub(since).Round(time.Second), w.ObservedStatus, w.DesiredState, stamp(w.LastAccessAt), act.Connections, act.IdleTimerSet))
	}
}
