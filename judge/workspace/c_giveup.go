package workspace

import (
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// giveUp: SPEC 3, "Failures": "A failure … of its lock session, or a
// write refused as fenced, makes the instance give up leadership at once;
// it then reconnects and competes for the lock again", with SPEC 3.1
// ("When a check fails it stops every component at once: it publishes
// nothing more, drops its subscriptions and listener, and returns to
// acquisition") and C10 ("One coordinator acts at a time: the holder of
// the lock"). A refused write is the instance's proof that a successor
// exists; a failed check, that its session may be gone: from then on it
// is a standby.
//
// Judged on the instance's own events after a failed store.Check, or a
// write (an update, an insert, a bulk observed_at stamp) refused as
// fenced: until it next takes the lock (an acquisition recorded for it,
// or a successful check of its lock) or crashes, it makes no write, no
// provider, object or bus call and listens to no feed. Giving the
// leadership up "at once" is a release (3.1: "A leader that gives up
// records the release, unlocks, and closes its lock session"): only once
// the instance has attempted that release may a record that still shows
// it holding the lock excuse what it does next (a release that failed on
// a DB error leaves its session holding the lock, and its next lock try
// takes it again under the same epoch, unrecorded). Before a release
// attempt nothing excuses an act, whoever the record shows holding the
// lock: an instance that goes on to its next step after a failed check,
// as if nothing happened, has not given anything up. What a standby may
// do stays allowed: releasing the lock, trying to take it, checking it.
// The rows of one bulk write are one write: its other rows, refused at
// the same instant, are not further acts.
type giveUp struct {
	base
	// gave: each instance that gave up leadership and has not taken the
	// lock since, with the event that made it give up.
	gave map[string]*history.Event
	// batch: the bulk write an instance's fenced row belonged to, while
	// its other rows may still be recorded.
	batch map[string]*history.Event
	// released: the instances among gave that attempted a release since.
	released map[string]bool
}

func (*giveUp) Name() string     { return "gives-up-at-once" }
func (*giveUp) Contract() string { return "3" }

// mUpdateMany is the store's bulk write: one call, one row event each.
const mUpdateMany = "store.UpdateMany"

// refusedAsFenced reports whether e is a write (or bulk stamp) the store
// refused because the writer's epoch is no longer current (SPEC 3.1:
// ErrFenced, SQLSTATE CV001 in PostgreSQL).
func refusedAsFenced(e *history.Event) bool {
	if e.Err == "" {
		return false
	}
	switch e.Kind {
	case history.KindWrite, history.KindInsert, history.KindCall:
	default:
		return false
	}
	return strings.Contains(e.Err, contracts.ErrFenced.Error()) || strings.Contains(e.Err, "CV001")
}

// standbyCall reports whether method is one a standby makes: the lock's
// own calls.
func standbyCall(method string) bool {
	return method == MTryAcquire || method == MRelease || method == MLockCheck
}

func (c *giveUp) Observe(s *State, e *history.Event, r *Report) {
	if c.gave == nil {
		c.gave, c.batch = map[string]*history.Event{}, map[string]*history.Event{}
		c.released = map[string]bool{}
	}
	inst := e.Instance
	if inst == "" {
		return
	}
	switch e.Kind {
	case history.KindCrash:
		c.forget(inst)
		return
	case history.KindLeader:
		switch {
		case e.Method == "acquire":
			c.forget(inst)
		case e.Method == "release" && c.gave[inst] != nil:
			c.released[inst] = true
		}
		return
	case history.KindWrite, history.KindInsert, history.KindCall:
	case history.KindNote:
		if e.Method != NoteHealthPass {
			return
		}
	default:
		return
	}
	if b := c.batch[inst]; b != nil {
		if e.Kind == history.KindWrite && e.Method == b.Method && e.At.Equal(b.At) {
			return // another row of the same bulk write
		}
		delete(c.batch, inst)
	}
	if e.Kind == history.KindCall && standbyCall(e.Method) {
		if e.Method == MLockCheck && e.Err == "" {
			c.forget(inst) // it holds the lock again
		}
		if e.Method == MRelease && c.gave[inst] != nil {
			c.released[inst] = true
		}
		if e.Method == MLockCheck && e.Err != "" && c.gave[inst] == nil {
			r.Exercise()
			c.gave[inst] = e
			delete(c.released, inst)
		}
		return
	}
	if why := c.gave[inst]; why != nil && c.released[inst] && s.Leader.Holder == inst {
		// It gave the lead up (a release attempt) and the record shows
		// it holding the lock still (the release failed, its session
		// alive): a lock try then takes it again under the same epoch,
		// unrecorded. It may lead.
		c.forget(inst)
	}
	if why := c.gave[inst]; why != nil {
		cause := "its lock check failed"
		if why.Method != MLockCheck {
			cause = "its write was refused as fenced"
		}
		act := e.Method
		if e.Kind == history.KindWrite || e.Kind == history.KindInsert {
			act = "a write (" + e.Method + ")"
		}
		if e.Kind == history.KindCall && e.Args != "" {
			act += " " + e.Args
		}
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s acted after %s at %s without taking the lock again: %s (SPEC 3: it gives up leadership at once)",
			inst, cause, stamp(why.At), act), why.Seq, e.Seq)
		c.forget(inst) // one flag per giving-up
		return
	}
	if refusedAsFenced(e) {
		r.Exercise()
		c.gave[inst] = e
		delete(c.released, inst)
		if e.Kind == history.KindWrite && e.Method == mUpdateMany {
			c.batch[inst] = e
		}
	}
}

// forget ends what c follows of inst: it holds the lock again, or its
// process ended.
func (c *giveUp) forget(inst string) {
	delete(c.gave, inst)
	delete(c.batch, inst)
	delete(c.released, inst)
}
