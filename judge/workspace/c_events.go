package workspace

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Recorded names the events checker reads (beside the leader, crash and
// write events every checker sees).
const (
	MPublish     = "bus.Publish"
	MListen      = "feed.Listen"
	MTryAcquire  = "store.TryAcquire"
	MLockCheck   = "store.Check"
	MRelease     = "store.Release"
	FDropMsgs    = "bus.DropMessages"
	FDropFeed    = "feed.Drop"
	FBreakFeed   = "feed.Break"
	FDepose      = "leader.depose"
	FCrashAtCall = "crash-at-call"
	FOutage      = "provider.outage"
	FLostWindow  = "provider.lost-responses"
	FLostResp    = "provider.lost-response"
)

// EventDeliveryBound is SPEC 4.6's delivery bound: a committed change of
// a trigger column is published within it, and so is a workspace changed
// while a listener was away, after it reconnects.
const EventDeliveryBound = 2 * time.Second

// ListenGrace and RelistenGrace: SPEC 4.6, the leader's EventListener
// listens from its first step as leader, and again by its next step once
// its listener was lost (it learns of the loss at a poll, at most 2 s
// later, and listens at the step after, at most 2 s after that). A change
// committed while the leader is not listening is owed within the bound
// like any other once those graces have passed: the bound does not depend
// on the implementation having listened.
const (
	ListenGrace   = 2 * time.Second
	RelistenGrace = 4 * time.Second
)

// ForwarderGrace is how long after a leadership change the "exactly one
// forwarder" rule waits before it applies: an instance that lost the lock
// learns it at its next lease check, and may forward what it already
// polled until then.
const ForwarderGrace = specPeriodIdle

// events: SPEC 4.6's delivery bound. While a leader's EventListener holds
// its DB session and no bus, feed or DB fault is active, (1) every
// committed change of a trigger column (observed_status, health_status,
// operation, desired_state, deleted_at, error_info) is published on
// workspace:{id} within 2 s, (2) by exactly one coordinator instance, and
// (3) after a listener reconnects, every workspace changed while it was
// away is republished within 2 s. Judged on the recorded writes (their
// values against the replayed row), bus.Publish calls, feed.Listen calls,
// leader and crash events and the faults injected: a change whose 2 s
// include any of those disturbances is not judged.
type events struct {
	init bool
	// coords are the coordinator instances (those that try the lock).
	coords map[string]bool
	// leader holds the lock; leaderEvent is the last leadership change.
	leader      string
	leaderEvent time.Time
	// leading: the leader has not given its leadership up since it
	// acquired it or last checked it successfully (leadSince); unaware:
	// an instance whose acquisition a lost answer hid from it.
	leading   bool
	leadSince time.Time
	unaware   map[string]bool
	// listenLost: when each instance's listener was last lost (the feed
	// broke, a feed call failed, its session was killed).
	listenLost map[string]time.Time
	// listening: instance → when its current listener started.
	listening map[string]time.Time
	// listened: the instance (this process) listened before; awayAt:
	// when its listener was first disturbed after its last Listen.
	listened map[string]bool
	awayAt   map[string]time.Time
	// disturbedUntil ends the fault windows on the store, feed or bus.
	disturbedUntil time.Time
	// busDrops and feedDrops count the messages and notifications the
	// injected faults will still drop.
	busDrops, feedDrops int
	// changed: workspace → its last change of a trigger column.
	changed map[string]time.Time
	pending []*delivery
}

// delivery is one publication owed.
type delivery struct {
	id        string
	at        time.Time
	seq       int64
	due       time.Time
	republish bool
	// one: the exactly-one-forwarder rule applies.
	one       bool
	disturbed bool
	delivered bool
	by        map[string]bool
}

func (*events) Name() string     { return "events" }
func (*events) Contract() string { return "4.6" }

func (c *events) Observe(s *State, e *history.Event, r *Report) {
	if !c.init {
		c.init = true
		c.coords, c.listening, c.listened = map[string]bool{}, map[string]time.Time{}, map[string]bool{}
		c.awayAt, c.changed = map[string]time.Time{}, map[string]time.Time{}
		c.unaware, c.listenLost = map[string]bool{}, map[string]time.Time{}
	}
	c.settle(e.At, false, r)
	switch e.Kind {
	case history.KindLeader:
		switch e.Method {
		case "acquire":
			c.leader, c.leading, c.leadSince = e.Instance, true, e.At
		default:
			if c.leader == e.Instance {
				c.leader, c.leading = "", false
			}
			c.away(e.At, e.Instance)
		}
		c.leaderEvent = e.At
		c.disturb()
	case history.KindCrash:
		if e.Instance == c.leader {
			c.leading = false
		}
		c.away(e.At, e.Instance)
		delete(c.listening, e.Instance)
		if e.Method == "restart" {
			delete(c.listened, e.Instance)
			delete(c.awayAt, e.Instance)
		}
		c.disturb()
	case history.KindFault:
		c.fault(e)
	case history.KindInsert:
		if e.Err == "" && c.feedDrops > 0 {
			c.feedDrops-- // an insert's notification took the drop
		}
	case history.KindWrite:
		if e.Applied && e.Patch != nil && e.Err == "" {
			if row := s.Row(e.Workspace); row != nil && triggerChange(row, e.Patch) {
				c.change(e)
			}
		}
	case history.KindCall:
		c.call(e)
	}
}

// settle judges every delivery due before now (all of them at the end).
func (c *events) settle(now time.Time, all bool, r *Report) {
	kept := c.pending[:0]
	for _, d := range c.pending {
		if !all && !now.After(d.due) {
			kept = append(kept, d)
			continue
		}
		if d.disturbed || (all && now.Before(d.due)) {
			continue
		}
		r.Exercise()
		what := "a change of a trigger column"
		if d.republish {
			what = "a workspace changed while the listener was away"
		}
		switch {
		case !d.delivered:
			r.Flag(d.id, d.at, fmt.Sprintf("%s was not published on %s within %s", what, specChannel(d.id), EventDeliveryBound), d.seq)
		case d.one && len(d.by) > 1:
			r.Flag(d.id, d.at, fmt.Sprintf("%s was published by %d coordinator instances (%s), not exactly one", what, len(d.by), strings.Join(sortedKeys(d.by), ", ")), d.seq)
		}
	}
	c.pending = kept
}

// disturb marks every pending delivery as not judged.
func (c *events) disturb() {
	for _, d := range c.pending {
		d.disturbed = true
	}
}

// away notes that the listener of inst (every listener when inst is "")
// lost, or may have lost, its session at at: its leadership ended, its
// process crashed, its DB session was killed, the feed broke, or one of
// its feed calls failed.
func (c *events) away(at time.Time, inst string) {
	for l := range c.listening {
		if inst != "" && l != inst {
			continue
		}
		if _, ok := c.awayAt[l]; !ok {
			c.awayAt[l] = at
		}
	}
}

func (c *events) fault(e *history.Event) {
	switch e.Method {
	case FDropMsgs:
		c.busDrops += atoiOr(e.Args, 1)
	case FDropFeed:
		c.feedDrops += atoiOr(e.Args, 1)
	case FBreakFeed:
		c.away(e.At, "")
		clear(c.listening)
		for inst := range c.coords {
			c.listenLost[inst] = e.At
		}
	case FKillSession:
		c.away(e.At, e.Instance)
		delete(c.listening, e.Instance)
		c.listenLost[e.Instance] = e.At
	case FFlushBus, FDepose, FCrashAtCall:
	case FOutage, FLostWindow:
		if !touchesEvents(e.Args) {
			return
		}
		if d, ok := windowLength(e.Args); ok && e.At.Add(d).After(c.disturbedUntil) {
			c.disturbedUntil = e.At.Add(d)
		}
	case FLostResp:
		if e.Args == MTryAcquire && e.Instance != "" {
			c.unaware[e.Instance] = true // leads without knowing it
		}
		if !touchesEvents(e.Args) {
			return
		}
	default:
		return
	}
	c.disturb()
}

func (c *events) call(e *history.Event) {
	inst := e.Instance
	port, _, _ := strings.Cut(e.Method, ".")
	if leftLead(e) && inst == c.leader {
		c.leading = false
	}
	if e.Err == "" && (e.Method == MLockCheck || e.Method == MListen) {
		delete(c.unaware, inst)
		if e.Method == MLockCheck && inst == c.leader && !c.leading {
			c.leading, c.leadSince = true, e.At // took its lock again, same epoch
		}
	}
	if e.Err != "" {
		if c.coords[inst] && (port == "store" || port == "feed" || port == "bus") {
			// A failed DB, feed or bus call of a coordinator: its
			// listener may be gone (and it may be crashing).
			if port == "feed" {
				c.away(e.At, inst)
				delete(c.listening, inst)
				c.listenLost[inst] = e.At
			}
			c.disturb()
		}
		return
	}
	switch e.Method {
	case MTryAcquire:
		c.coords[inst] = true
	case MListen:
		if c.listened[inst] && c.leader == inst {
			if away, ok := c.awayAt[inst]; ok {
				c.reconnected(e, away)
			}
		}
		c.listening[inst] = e.At
		c.listened[inst] = true
		delete(c.awayAt, inst)
	case MPublish:
		id, ok := strings.CutPrefix(e.Args, specChannel(""))
		if !ok {
			return
		}
		if c.busDrops > 0 {
			c.busDrops-- // published, then dropped by the bus
			c.disturb()
			return
		}
		for _, d := range c.pending {
			if d.id == id && d.seq < e.Seq {
				d.delivered = true
				if c.coords[inst] {
					d.by[inst] = true
				}
			}
		}
	}
}

// change owes the publication of a trigger-column change while an
// instance leads and no fault is active: its listener holds its session,
// or it has led long enough, and long enough since its listener was lost,
// to be listening (ListenGrace, RelistenGrace).
func (c *events) change(e *history.Event) {
	c.changed[e.Workspace] = e.At
	if c.feedDrops > 0 {
		c.feedDrops-- // the notification was dropped: a feed fault
		return
	}
	if c.leader == "" || e.At.Before(c.disturbedUntil) {
		return
	}
	if _, ok := c.listening[c.leader]; !ok && !c.owesListening(e.At) {
		return
	}
	c.pending = append(c.pending, &delivery{id: e.Workspace, at: e.At, seq: e.Seq, due: e.At.Add(EventDeliveryBound),
		one: e.At.Sub(c.leaderEvent) >= ForwarderGrace, by: map[string]bool{}})
}

// owesListening reports whether the leader, not listening at at, should
// have been: it leads, knows it, has led for ListenGrace and its listener
// was not lost in the last RelistenGrace.
func (c *events) owesListening(at time.Time) bool {
	if !c.leading || c.unaware[c.leader] || at.Sub(c.leadSince) < ListenGrace {
		return false
	}
	lost, ok := c.listenLost[c.leader]
	return !ok || at.Sub(lost) >= RelistenGrace
}

// reconnected owes, after the leader's listener reconnects (e), the
// republication of every workspace changed since it went away.
func (c *events) reconnected(e *history.Event, away time.Time) {
	if e.At.Before(c.disturbedUntil) {
		return
	}
	ids := make([]string, 0)
	for id, at := range c.changed {
		if !at.Before(away) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		c.pending = append(c.pending, &delivery{id: id, at: e.At, seq: e.Seq, due: e.At.Add(EventDeliveryBound),
			republish: true, by: map[string]bool{}})
	}
}

func (c *events) Finish(s *State, f *Final, r *Report) {
	c.settle(f.End, true, r)
}

// triggerChange reports whether applying p to row changes the value of a
// column whose change fires the notification (SPEC 4.6).
func triggerChange(row *contracts.Workspace, p *contracts.Patch) bool {
	return p.ObservedStatus.Set && p.ObservedStatus.V != row.ObservedStatus ||
		p.HealthStatus.Set && p.HealthStatus.V != row.HealthStatus ||
		p.Operation.Set && p.Operation.V != row.Operation ||
		p.DesiredState.Set && p.DesiredState.V != row.DesiredState ||
		p.DeletedAt.Set && !p.DeletedAt.V.Equal(row.DeletedAt) ||
		p.ErrorInfo.Set && !sameInfo(p.ErrorInfo.V, row.ErrorInfo)
}

func sameInfo(a, b *contracts.ErrorInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Reason == b.Reason && a.Message == b.Message && a.IsTerminal == b.IsTerminal &&
		a.Operation == b.Operation && a.ErrorCount == b.ErrorCount && a.OccurredAt.Equal(b.OccurredAt) &&
		(len(a.Context) == 0 && len(b.Context) == 0 || reflect.DeepEqual(a.Context, b.Context))
}

// windowTouches reports whether a fault window's plan text ("outage
// store.Update 100% for 2m0s") names one of ports.
func windowTouches(args string, ports ...string) bool {
	for _, f := range strings.Fields(args) {
		port, _, _ := strings.Cut(f, ".")
		if slices.Contains(ports, port) {
			return true
		}
	}
	return false
}

// touchesEvents reports whether a fault window names the store, the feed,
// the bus or the leader lock.
func touchesEvents(args string) bool { return windowTouches(args, "store", "feed", "bus", "leader") }

// windowLength reads "for <duration>" from a fault window's plan text.
func windowLength(args string) (time.Duration, bool) {
	i := strings.LastIndex(args, " for ")
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(args[i+len(" for "):])
	if len(f) == 0 {
		return 0, false
	}
	d, err := time.ParseDuration(f[0])
	return d, err == nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
		return n
	}
	return def
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
