package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/history"
)

// holderActs: C10, "One coordinator acts at a time: the holder of a
// PostgreSQL session-level advisory lock", with the check SPEC 3.1 puts
// at the start of every step ("The leader checks its lock session at
// every step, before any component runs … When a check fails it stops
// every component at once") and SPEC 3's steps. An instance whose lease
// has ended (its session killed or the lock lost, its release, another
// instance's acquisition, its crash) is no longer the holder: from its
// next step on it acts no more until it takes the lock again, since that
// step begins with a check that fails.
//
// Judged on virtual time, where a step takes no time and two steps of an
// instance never share an instant (SPEC 3: the next step comes at least
// 100 ms later): whatever the instance does at the instant its lease
// ended is the step the loss struck in (a write in flight, a call made
// right after a check; fencing and lease-recheck judge those); anything it
// does at a later instant before an acquisition recorded for it (a write
// attempted, a provider, object, bus or feed call, an observation pass) is
// an act of a coordinator that does not hold the lock. Its lock's own
// calls (a try, a check, a release) are what a standby does. A check
// failed by a DB error ends no lease here: the session still holds the
// lock and takes it again, unrecorded (gives-up-at-once judges it).
type holderActs struct {
	base
	// ended: each instance whose lease ended, with the event that ended
	// it, until it acquires again (or acts: one flag per loss).
	ended map[string]*history.Event
	// holding: instances the record shows taking the lock, not yet ended.
	holding map[string]bool
	// stepped: the instances, among ended, seen stepping since (the
	// situation counted).
	stepped map[string]bool
}

func (*holderActs) Name() string     { return "c10-holder-acts" }
func (*holderActs) Contract() string { return "C10" }

func (c *holderActs) end(inst string, e *history.Event) {
	if c.holding[inst] {
		delete(c.holding, inst)
		c.ended[inst] = e
		delete(c.stepped, inst)
	}
}

func (c *holderActs) Observe(_ *State, e *history.Event, r *Report) {
	if c.ended == nil {
		c.ended, c.holding, c.stepped = map[string]*history.Event{}, map[string]bool{}, map[string]bool{}
	}
	inst := e.Instance
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			for other := range c.holding {
				if other != inst {
					c.end(other, e)
				}
			}
			delete(c.ended, inst)
			c.holding[inst] = true
			return
		}
		c.end(inst, e)
		return
	case history.KindCrash:
		delete(c.holding, inst)
		delete(c.ended, inst) // a restarted process starts as a standby
		return
	case history.KindWrite, history.KindInsert, history.KindCall:
	case history.KindNote:
		if e.Method != NoteHealthPass {
			return
		}
	default:
		return
	}
	why := c.ended[inst]
	if why == nil || inst == "" {
		return
	}
	if !e.At.After(why.At) {
		return // the step the loss struck in
	}
	if !c.stepped[inst] {
		c.stepped[inst] = true
		r.Exercise()
	}
	if e.Kind == history.KindCall && standbyCall(e.Method) {
		return
	}
	delete(c.ended, inst)
	cause := "its lease ended (" + why.Method + ")"
	if why.Kind == history.KindLeader && why.Method == "acquire" {
		cause = fmt.Sprintf("%s took the lock (epoch %d)", why.Instance, why.Epoch)
	}
	act := e.Method
	if e.Kind == history.KindWrite || e.Kind == history.KindInsert {
		act = "a write (" + e.Method + ")"
	} else if e.Args != "" {
		act += " " + e.Args
	}
	r.Flag(e.Workspace, e.At, fmt.Sprintf("%s acted at a later step than the one in which %s at %s, without taking the lock again: %s (C10: only the holder acts; SPEC 3.1: every step begins with a check of the lock)",
		inst, cause, stamp(why.At), act), why.Seq, e.Seq)
}
