package workspace

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// monitorTrigger: SPEC 3, "monitor:trigger". "The StateReconciler
// publishes one after each claim, completion and ERROR entry of a
// workspace", its payload the workspace id as plain text. It is a hint:
// a publish that fails is ignored (the attempt is what is owed), and an
// instance that loses its lease right after the write publishes nothing
// more (SPEC 3.1).
//
// Judged on the reconciler's applied writes that claim, complete or enter
// ERROR (the operation column's transitions), and the instance's
// bus.Publish calls on monitor:trigger: the publish of the id follows the
// write within the same step, before the instance records anything at a
// time more than NowSlack after the write (or the run ends). A lease lost
// after the write (another acquisition, its release, a lost lock or a
// failed check, a depose or killed session) or a crash excuses it, and so
// does a lost answer to the write itself (its writer cannot know it
// applied).
type monitorTrigger struct {
	// pending: instance → workspace → the write owing a trigger.
	pending map[string]map[string]triggerOwed
}

type triggerOwed struct {
	at  time.Time
	seq int64
	tr  transition
}

func (*monitorTrigger) Name() string     { return "monitor-trigger" }
func (*monitorTrigger) Contract() string { return "3" }

func (c *monitorTrigger) Observe(s *State, e *history.Event, r *Report) {
	if c.pending == nil {
		c.pending = map[string]map[string]triggerOwed{}
	}
	switch e.Kind {
	case history.KindLeader:
		if e.Method == "acquire" {
			for inst := range c.pending {
				if inst != e.Instance {
					delete(c.pending, inst)
				}
			}
			return
		}
		delete(c.pending, e.Instance)
		return
	case history.KindCrash:
		delete(c.pending, e.Instance)
		return
	case history.KindFault:
		switch {
		case e.Method == FDepose || e.Method == FKillSession || e.Method == FCrashAtCall:
			delete(c.pending, e.Instance)
		case e.Method == FLostResp && e.Workspace != "":
			// The write's answer was lost: its writer does not know it
			// applied, and owes nothing for it.
			delete(c.pending[e.Instance], e.Workspace)
		}
		return
	case history.KindNote:
		return
	}
	c.expire(e.Instance, e.At, r)
	if leftLead(e) {
		delete(c.pending, e.Instance)
		return
	}
	if e.Kind == history.KindCall && e.Method == MPublish && e.Args == specMonitorTrigger {
		if _, ok := c.pending[e.Instance][e.Result]; ok {
			r.Exercise()
			delete(c.pending[e.Instance], e.Result)
		}
		return
	}
	if !reconcilerWrite(e) || e.Err != "" {
		return
	}
	tr := classify(s.Row(e.Workspace), e.Patch)
	if tr == tNone {
		return
	}
	if c.pending[e.Instance] == nil {
		c.pending[e.Instance] = map[string]triggerOwed{}
	}
	c.pending[e.Instance][e.Workspace] = triggerOwed{at: e.At, seq: e.Seq, tr: tr}
}

// stepOver returns, in id order, the owed triggers whose step is over by
// now (more than NowSlack after the write that owed them).
func stepOver(owed map[string]triggerOwed, now time.Time) []string {
	ids := make([]string, 0, len(owed))
	for id, o := range owed {
		if now.Sub(o.at) > NowSlack {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// expire judges inst's owed triggers whose step is over by now.
func (c *monitorTrigger) expire(inst string, now time.Time, r *Report) {
	owed := c.pending[inst]
	for _, id := range stepOver(owed, now) {
		o := owed[id]
		delete(owed, id)
		r.Exercise()
		r.Flag(id, o.at, fmt.Sprintf("%s of %s was not followed by a publish of monitor:trigger (payload %s) in the same step", [...]string{"", "the claim", "the completion", "the ERROR entry"}[o.tr], id, id), o.seq)
	}
	// An instance with nothing owed is forgotten.
	if len(owed) == 0 {
		delete(c.pending, inst)
	}
}

func (c *monitorTrigger) Finish(_ *State, f *Final, r *Report) {
	insts := make([]string, 0, len(c.pending))
	for inst := range c.pending {
		insts = append(insts, inst)
	}
	sort.Strings(insts)
	for _, inst := range insts {
		c.expire(inst, f.End, r)
	}
}
