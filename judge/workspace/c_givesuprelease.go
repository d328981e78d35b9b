package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/history"
)

// givesUpReleases: SPEC 3.1, "When a check fails it stops every component
// at once: it … returns to acquisition", and "Release. A leader that gives
// up records the release, unlocks, and closes its lock session", with SPEC
// 3, "Failures": a failure of its lock session "makes the instance give up
// leadership at once; it then reconnects and competes for the lock again".
//
// Judged on a lock check (store.Check) that failed while the record shows
// its instance still holding the lock under the check's epoch (a DB error
// on the check, not a lost session: a lost lock has nothing left to
// release). The instance owes a release attempt (a recorded release, or a
// store.Release call, failed or not) before it does anything else at a
// later step, and before any later successful check of its lock: a
// successful check under the same epoch with no release attempt since
// shows the instance kept the lease it had to give up (a correct release
// frees the lock, so only a new acquisition, under a new epoch, can lead
// again; a release that failed leaves the session holding the lock, and
// the lock try that re-takes it is excused by that attempt). A crash, a
// killed or deposed session, or the lock recorded lost or taken by another
// ends what is owed. What the instance does at the instant of the failed
// check itself is gives-up-at-once's to judge.
type givesUpReleases struct {
	base
	// owed: per instance, the failed check whose release is still owed.
	owed map[string]*history.Event
}

func (*givesUpReleases) Name() string     { return "gives-up-releases" }
func (*givesUpReleases) Contract() string { return "3.1" }

func (c *givesUpReleases) Observe(s *State, e *history.Event, r *Report) {
	if c.owed == nil {
		c.owed = map[string]*history.Event{}
	}
	switch e.Kind {
	case history.KindCrash:
		delete(c.owed, e.Instance)
		return
	case history.KindLeader:
		if e.Method == "acquire" {
			for inst := range c.owed {
				if inst != e.Instance {
					delete(c.owed, inst) // its lock went to another
				}
			}
		}
		if e.Method == "release" || e.Method == "lost" {
			delete(c.owed, e.Instance)
		}
		return
	case history.KindFault:
		if e.Method == FDepose || e.Method == FKillSession {
			delete(c.owed, e.Instance)
		}
		return
	case history.KindCall, history.KindWrite, history.KindInsert:
	case history.KindNote:
		if e.Method != NoteHealthPass {
			return
		}
	default:
		return
	}
	inst := e.Instance
	if inst == "" {
		return
	}
	if e.Kind == history.KindCall && e.Method == MRelease {
		delete(c.owed, inst) // a release attempt
		return
	}
	failed := e.Kind == history.KindCall && e.Method == MLockCheck && e.Err != ""
	if why := c.owed[inst]; why != nil {
		kept := e.Kind == history.KindCall && e.Method == MLockCheck && e.Err == ""
		if !kept && !e.At.After(why.At) {
			return // the step of the failed check: gives-up-at-once judges it
		}
		delete(c.owed, inst)
		what := "did " + e.Method
		if kept {
			what = fmt.Sprintf("checked its lock again successfully under epoch %d", e.Epoch)
		}
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s's lock check failed at %s while it held the lock (epoch %d), and it %s at %s without attempting a release first: a leader whose check fails gives up, records the release and unlocks, and returns to acquisition (SPEC 3.1, 3)",
			inst, stamp(why.At), why.Epoch, what, stamp(e.At)), why.Seq, e.Seq)
		return
	}
	if failed && s.Leader.Holder == inst && e.Epoch == s.Leader.Epoch {
		r.Exercise()
		c.owed[inst] = e
	}
}
