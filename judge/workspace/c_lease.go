package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts/history"
)

// leaseRecheck: SPEC 3.1, "Checks". The leader checks its lock "again
// immediately before every call that changes the world: each actuator
// call (start, delete, provision, restore, archive, delete_volume) and
// each object deletion of the Archive GC", and once a check fails it
// stops every component at once. Judged on the recorded lock checks
// (store.Check calls, successful ones included, each with the epoch of
// the lease it checked), the leadership events and the faults that end a
// lease:
//
//  1. Every world-changing call of a coordinator instance follows a
//     successful check of its lock, in its current epoch, made after its
//     previous world-changing call and after it acquired the lock: each
//     call has a check of its own. And the check is "immediately before"
//     the call: no write or other call of the instance is recorded in
//     between, whether or not the lease survived (DR591). The storage
//     job's upload (an objects.Put recorded, at the same instant, just
//     before the archive call it belongs to) is part of that call.
//  2. No world-changing call comes after the instance's lease was lost
//     (another instance acquired, its release or a failed check, its DB
//     session killed or it deposed, a crash) unless a successful check in
//     a newer epoch came first. A loss that falls between a check and a
//     call the instance made right after it, nothing of its own recorded
//     in between, is the window no check can close (the fenced epoch and
//     c10-fencing cover what follows); a loss after which the instance
//     still made another call or write before the world-changing one is
//     not: its check was not "immediately before".
//
// The acquisition itself is not a check: SPEC 3 has a step begin with the
// check or the acquisition, and 3.1 asks for a check again before each
// call.
type leaseRecheck struct {
	base
	insts map[string]*leaseState
}

// leaseState is what the checker knows of one coordinator instance.
type leaseState struct {
	epoch int64 // of its latest acquisition (0: never acquired)
	// checked: a successful check in epoch since the previous
	// world-changing call; checkSeq is the last one.
	checked  bool
	checkSeq int64
	// busy: the instance recorded something else since that check;
	// busySeq is the first such event.
	busy    bool
	busySeq int64
	// put: an objects.Put of the instance not yet judged part of an
	// archive call or not.
	put *history.Event
	// lostSeq: the event that ended its lease after the last successful
	// check (0: not lost since).
	lostSeq int64
	lostWhy string
}

func (*leaseRecheck) Name() string     { return "lease-recheck" }
func (*leaseRecheck) Contract() string { return "3.1" }

func (c *leaseRecheck) of(inst string) *leaseState {
	if c.insts == nil {
		c.insts = map[string]*leaseState{}
	}
	st := c.insts[inst]
	if st == nil {
		st = &leaseState{}
		c.insts[inst] = st
	}
	return st
}

// lose ends inst's lease at e (every instance's but inst's when others).
func (c *leaseRecheck) lose(e *history.Event, why string, inst string, others bool) {
	for name, st := range c.insts {
		if (others && name == inst) || (!others && name != inst) {
			continue
		}
		if st.epoch > 0 && st.lostSeq == 0 {
			st.lostSeq, st.lostWhy = e.Seq, why
		}
	}
}

func (c *leaseRecheck) Observe(_ *State, e *history.Event, r *Report) {
	switch e.Kind {
	case history.KindLeader:
		switch e.Method {
		case "acquire":
			c.lose(e, "instance "+e.Instance+" acquired the lock", e.Instance, true)
			*c.of(e.Instance) = leaseState{epoch: e.Epoch}
		default:
			c.lose(e, "its leadership ended ("+e.Method+")", e.Instance, false)
		}
		return
	case history.KindCrash:
		c.lose(e, "it crashed", e.Instance, false)
		return
	case history.KindFault:
		if e.Instance != "" && (e.Method == FDepose || e.Method == FKillSession) {
			c.lose(e, "its DB session was killed ("+e.Method+")", e.Instance, false)
		}
		return
	case history.KindCall, history.KindWrite, history.KindInsert:
	default:
		return
	}
	st, ok := c.insts[e.Instance]
	if !ok || st.epoch == 0 {
		return // not a coordinator instance that ever led
	}
	if put := st.put; put != nil {
		st.put = nil
		if !(e.Kind == history.KindCall && e.Method == MArchive && e.At.Equal(put.At)) {
			st.markBusy(put)
		}
	}
	switch {
	case e.Kind == history.KindCall && e.Method == MLockCheck:
		if e.Err == "" && (e.Epoch == 0 || e.Epoch == st.epoch) {
			st.checked, st.checkSeq, st.busy, st.lostSeq, st.lostWhy = true, e.Seq, false, 0, ""
			return
		}
		c.lose(e, "its lock check failed", e.Instance, false)
		st.markBusy(e)
		return
	case e.Kind == history.KindCall && (Actuator(e.Method) || e.Method == MObjDelete):
	case e.Kind == history.KindCall && e.Method == MObjPut && st.put == nil:
		// Perhaps the storage job's upload inside an archive call (SPEC
		// 5.3), recorded before the call's own answer: it is part of the
		// call if the call comes next, at the same instant.
		st.put = e
		return
	default:
		st.markBusy(e)
		return
	}
	r.Exercise()
	switch {
	case !st.checked:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s (epoch %d) called %s with no successful check of its lock since its previous world-changing call or its acquisition (SPEC 3.1: a check immediately before every such call)",
			e.Instance, st.epoch, e.Method), e.Seq)
	case st.lostSeq != 0 && st.busy:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s (epoch %d) called %s after its lease was lost (%s) with no successful re-check since: its last check came before other calls of its own",
			e.Instance, st.epoch, e.Method, st.lostWhy), st.checkSeq, st.lostSeq, e.Seq)
	case st.busy:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("%s (epoch %d) called %s with a write or call of its own (#%d) recorded between its last check of the lock and the call: the check is made again immediately before every call that changes the world (SPEC 3.1)",
			e.Instance, st.epoch, e.Method, st.busySeq), st.checkSeq, st.busySeq, e.Seq)
	}
	st.checked = false
	st.markBusy(e)
}

// markBusy notes e, an event of the instance other than a successful
// check, since its last check.
func (st *leaseState) markBusy(e *history.Event) {
	if !st.busy {
		st.busy, st.busySeq = true, e.Seq
	}
}
