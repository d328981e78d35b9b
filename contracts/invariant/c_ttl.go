package invariant

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
	onBehalfOf = "on behalf of "
)

// ttlRules: SPEC 4.4. A desired-state change the TTL Manager asks for is
// made only when its rule holds on the row and on the activity keys as
// they stood: STANDBY for an idle RUNNING workspace (no connection, no
// idle timer, untouched past its standby TTL); PENDING for a STANDBY one
// its user left there, untouched past its archive TTL.
type ttlRules struct {
	base
	conns map[string]int64     // workspace → ws_conn counter
	idle  map[string]time.Time // workspace → idle timer expiry (zero: none)
}

func (*ttlRules) Name() string     { return "ttl" }
func (*ttlRules) Contract() string { return "4.4" }

func (c *ttlRules) Observe(s *State, e *history.Event, r *Report) {
	if c.conns == nil {
		c.conns, c.idle = map[string]int64{}, map[string]time.Time{}
	}
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
		want, ok := contracts.TTLDecision(w, act, e.At)
		if !ok || want != e.Patch.DesiredState.V {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("TTL set desired %s although the rule does not hold (observed %s, health %s, operation %s, desired %s, %s since last access, %d connection(s), idle timer %v)",
				e.Patch.DesiredState.V, w.ObservedStatus, w.HealthStatus, w.Operation, w.DesiredState, e.At.Sub(w.LastAccessAt), act.Connections, act.IdleTimerSet), e.Seq)
		}
	}
}
