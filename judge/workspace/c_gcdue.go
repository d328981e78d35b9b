package workspace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// gcDue: SPEC 4.5, step 3, on its exact pass: "unprotected, timer at least
// 2 h old → delete the archive and its .meta (each that exists), then the
// timer, in this pass: the first pass at which the timer's age (the pass's
// now less the time it records) reaches 2 h deletes the object", the timer
// having been started "recording when the object was first seen orphaned
// (the pass's now)". gc-deletes-orphans bounds deletion with slack; this
// judges the pass: the due pass deletes, and no pass deletes earlier.
//
// The checker replays each orphan timer from the history alone, without a
// key name (SPEC names none): per archive (an archive and its .meta share
// one timer, a lone .meta has its archive's), a timer is known absent (the
// bus starts empty; a pass that saw the object protected removed it),
// known started at a pass's now (the first pass that saw the object
// unprotected with no timer), or unknown. A pass is a successful listing
// of archives/ by the lock holder; its now is the listing's instant (SPEC
// 3: a step takes no virtual time under the simulator). What a pass did
// to a timer is known only if nothing could have made it skip an object or
// stop: a pass is disturbed by a failed store call of its instance (the
// row query may have failed: the pass skipped), a failed bus call, a lost
// answer, an outage window on the store, bus or bucket open at the pass
// (a failed timer read is not recorded), a crash, a deposition, a
// leadership change or a failed lock check, or a listing by an instance that does not hold the
// lock. A disturbed pass leaves a started timer started (no pass does
// anything else to a timer it finds unprotected and not due) and makes
// every other change unknown. A bus flush makes every timer unknown
// ("losing timers only delays deletion"), as does an object deleted out of
// a pass, and an archive or .meta appearing or vanishing beside a started
// timer (the pairing changed: which timer it reads is the implementation's
// choice). An unknown timer is known again once a clean pass sees its
// object protected (it removes the timer) or the object is gone.
//
// Flagged: a clean pass that finds an object unprotected (C9, on the rows
// replayed, at the listing and at the pass's end, no row written between)
// with a known timer at least 2 h old, and leaves the archive or its .meta
// (each that it listed) in the bucket without a failed delete of either
// (a failed delete skips the object); and a deletion, in a pass, of an
// object whose timer is known absent or younger than 2 h at that pass
// (less GCTimerResolution).
//
// Counted: a clean pass meeting an orphan whose known timer is 2 h old.
type gcDue struct {
	init  bool
	pass  *duePass
	timer map[string]dueTimer // archive key → its timer; absent: none
	// shape: archive key → which of the pair the last pass listed.
	shape map[string]dueShape
	// windowUntil: the end of the latest outage window on the store, the
	// bus or the bucket.
	windowUntil time.Time
}

// GCTimerResolution is how much earlier than the pass's now a timer may
// record it: a timer kept in whole seconds (unix time) records the second
// the pass fell in, and its age reaches 2 h up to that much sooner. A
// deletion is early only if the timer is younger than 2 h less this; the
// pass at which the exact age reaches 2 h deletes in any case (a timer
// recorded earlier is only older then).
const GCTimerResolution = time.Second

type dueTimer struct {
	unknown bool
	at      time.Time // the pass's now that started it
}

type dueShape struct{ archive, meta bool }

type duePass struct {
	instance  string
	at        time.Time
	seq       int64
	units     map[string]*dueUnit
	disturbed bool
	written   map[string]bool // workspaces written during the pass
	failedDel map[string]bool // archive keys whose (pair's) delete failed
	deleted   map[string]bool // archive keys the pass deleted from
}

type dueUnit struct {
	workspace string
	keys      []string
	shape     dueShape
	protected bool // at the listing
}

func (*gcDue) Name() string     { return "gc-deletes-when-due" }
func (*gcDue) Contract() string { return "4.5" }

func (c *gcDue) Observe(s *State, e *history.Event, r *Report) {
	if !c.init {
		c.init = true
		c.timer, c.shape = map[string]dueTimer{}, map[string]dueShape{}
	}
	if c.pass != nil && e.At.Sub(c.pass.at) > GCQueryWindow {
		c.settle(s, r)
	}
	p := c.pass
	switch {
	case e.Kind == history.KindCall && e.Method == MObjList && e.Err == "" && s.Leader.EpochOf[e.Instance] > 0 &&
		strings.HasPrefix(specArchivePrefix, e.Args):
		if p != nil && p.instance == e.Instance && e.At.Equal(p.at) {
			c.list(s, p) // another page of the same pass
			break
		}
		if p != nil {
			c.settle(s, r)
		}
		c.begin(s, e)
	case e.Kind == history.KindCall && e.Method == MObjDelete:
		c.deleted(s, e, r)
	case p != nil && e.Kind == history.KindCall && e.Instance == p.instance && e.Err != "" &&
		(strings.HasPrefix(e.Method, "store.") || strings.HasPrefix(e.Method, "bus.")):
		p.disturbed = true
	case p != nil && ((e.Kind == history.KindWrite && e.Applied) || (e.Kind == history.KindInsert && e.Err == "")):
		p.written[e.Workspace] = true
	case e.Kind == history.KindFault && (e.Method == FOutage || e.Method == FLostWindow) && touchesGC(e.Args):
		if d, ok := windowLength(e.Args); ok && e.At.Add(d).After(c.windowUntil) {
			c.windowUntil = e.At.Add(d)
		}
		if p != nil {
			p.disturbed = true
		}
	case p != nil && e.Kind == history.KindFault && e.Method == FLostResp:
		p.disturbed = true
	}
	if e.Kind == history.KindFault && e.Method == FFlushBus {
		c.forget(s)
	}
	if p != nil && (e.Kind == history.KindLeader || e.Kind == history.KindCrash || tookLeadUnawares(e) ||
		(leftLead(e) && e.Instance == p.instance) ||
		(e.Kind == history.KindFault && (e.Method == FFlushBus || e.Method == FCrashAtCall || e.Method == FDepose))) {
		p.disturbed = true
	}
}

// touchesGC reports whether a fault window names the store, the bus or
// the bucket (the ports a GC pass calls) or the leader lock.
func touchesGC(args string) bool { return windowTouches(args, "store", "bus", "objects", "leader") }

// unitOf returns the archive key whose timer key's object uses.
func unitOf(key string) string {
	if specIsMetaKey(key) {
		return specArchiveOfMeta(key)
	}
	return key
}

func (c *gcDue) begin(s *State, e *history.Event) {
	p := &duePass{instance: e.Instance, at: e.At, seq: e.Seq, units: map[string]*dueUnit{},
		written: map[string]bool{}, failedDel: map[string]bool{}, deleted: map[string]bool{}}
	// Only the lock holder's pass, with no outage window open, is clean.
	p.disturbed = s.Leader.Holder != e.Instance || e.At.Before(c.windowUntil)
	c.pass = p
	c.list(s, p)
}

// list adds the objects under archives/ to the pass, each with its
// protection at the listing.
func (c *gcDue) list(s *State, p *duePass) {
	for key := range s.World.Objects {
		unit := unitOf(key)
		id, _, ok := specParseArchiveKey(unit)
		if !ok {
			continue
		}
		u := p.units[unit]
		if u == nil {
			u = &dueUnit{workspace: id, protected: specProtected(s.Row(id), unit)}
			p.units[unit] = u
		}
		if specIsMetaKey(key) {
			u.shape.meta = true
		} else {
			u.shape.archive = true
		}
		if !contains(u.keys, key) {
			u.keys = append(u.keys, key)
			sort.Strings(u.keys)
		}
	}
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// deleted judges an objects.Delete: in a pass, of an object whose timer is
// known and younger than 2 h, it is early; out of a pass its timer's fate
// is unknown.
func (c *gcDue) deleted(s *State, e *history.Event, r *Report) {
	unit := unitOf(e.Args)
	p := c.pass
	if p == nil || e.Instance != p.instance {
		if e.Err == "" {
			c.timer[unit] = dueTimer{unknown: true}
		}
		return
	}
	if e.Err != "" {
		p.failedDel[unit] = true
		return
	}
	p.deleted[unit] = true
	t, timed := c.timer[unit]
	if t.unknown {
		return
	}
	id, _, _ := specParseArchiveKey(unit)
	if !timed {
		r.Flag(id, e.At, fmt.Sprintf("%s deleted %s at the GC pass at %s, which first saw it orphaned with no timer: that pass starts its timer, and the object is deleted only at the first pass that finds the timer %s old (SPEC 4.5)",
			e.Instance, e.Args, stamp(p.at), specOrphanDelay), e.Seq)
		return
	}
	if age := p.at.Sub(t.at); age < specOrphanDelay-GCTimerResolution {
		r.Flag(id, e.At, fmt.Sprintf("%s deleted %s at the GC pass at %s, whose timer, started at the pass at %s, was only %s old: an orphan is deleted once its timer reaches %s (SPEC 4.5)",
			e.Instance, e.Args, stamp(p.at), stamp(t.at), age, specOrphanDelay), e.Seq)
	}
}

// forget makes every timer unknown (the bus was flushed).
func (c *gcDue) forget(s *State) {
	for unit := range c.timer {
		c.timer[unit] = dueTimer{unknown: true}
	}
	for key := range s.World.Objects {
		c.timer[unitOf(key)] = dueTimer{unknown: true}
	}
}

// settle closes the open pass: it flags a due orphan left in the bucket,
// and replays what the pass did to each timer.
func (c *gcDue) settle(s *State, r *Report) {
	p := c.pass
	c.pass = nil
	units := make([]string, 0, len(p.units))
	for unit := range p.units {
		units = append(units, unit)
	}
	sort.Strings(units)
	for _, unit := range units {
		u := p.units[unit]
		t, timed := c.timer[unit]
		if last, seen := c.shape[unit]; timed && !t.unknown && seen && last != u.shape {
			t = dueTimer{unknown: true} // the pairing changed outside the GC
		}
		c.shape[unit] = u.shape
		var left []string
		for _, key := range u.keys {
			if _, ok := s.World.Objects[key]; ok {
				left = append(left, key)
			}
		}
		now := specProtected(s.Row(u.workspace), unit)
		orphan := !u.protected && !now && !p.written[u.workspace]
		if timed && !t.unknown && orphan && !p.disturbed && !p.failedDel[unit] && p.at.Sub(t.at) >= specOrphanDelay {
			// Its due pass, the timer known: the pass deletes it.
			r.Exercise()
			if len(left) > 0 {
				r.Flag(u.workspace, p.at, fmt.Sprintf("the GC pass at %s found %s orphaned with its timer %s old (started at the pass at %s) and left %s in the bucket: the first pass at which the timer reaches %s deletes the archive and its .meta, each that exists (SPEC 4.5)",
					stamp(p.at), unit, p.at.Sub(t.at), stamp(t.at), strings.Join(left, " and "), specOrphanDelay), p.seq)
				c.timer[unit] = dueTimer{unknown: true} // flagged once
				continue
			}
		}
		switch {
		case len(left) == 0: // gone: its timer goes with it, or is unknown
			delete(c.shape, unit)
			if p.disturbed || p.failedDel[unit] || !p.deleted[unit] {
				c.timer[unit] = dueTimer{unknown: true}
			} else {
				delete(c.timer, unit)
			}
		case len(left) < len(u.keys) || p.deleted[unit]:
			c.timer[unit] = dueTimer{unknown: true} // half deleted
		case u.protected != now || p.written[u.workspace]:
			c.timer[unit] = dueTimer{unknown: true} // which protection the pass read is unknown
		case now: // protected: the pass removes the timer, if any
			if timed && p.disturbed {
				c.timer[unit] = dueTimer{unknown: true}
			} else {
				delete(c.timer, unit)
			}
		case t.unknown:
		case !timed && p.disturbed:
			c.timer[unit] = dueTimer{unknown: true}
		case !timed:
			c.timer[unit] = dueTimer{at: p.at} // unprotected, no timer: started
		default:
			c.timer[unit] = t // unprotected: waits, or was skipped
		}
	}
	// Objects gone since, unlisted: their timers are forgotten with them.
	for unit := range c.shape {
		if _, listed := p.units[unit]; !listed {
			delete(c.shape, unit)
			c.timer[unit] = dueTimer{unknown: true}
		}
	}
}

func (c *gcDue) Finish(s *State, _ *Final, r *Report) {
	if c.pass != nil {
		c.settle(s, r)
	}
}
