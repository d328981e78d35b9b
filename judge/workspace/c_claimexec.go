package workspace

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// claimExecutes: SPEC 4.2 step 5, "If the claim applies, execute the
// operation in the same tick", with SPEC 3's monitor:trigger, "It is a
// hint: a publish that fails is ignored": the trigger published after a
// claim, failed or not, changes nothing of what the tick does next. Every
// claim the leader applied is followed, at the same instant (a step on
// virtual time, DR411), by an actuator call of its own on the workspace
// (every operation of 4.2.1's table starts with one: provision, start,
// delete, archive). Excused: the step ended by a loss of the lease (a
// failed check, a release, another's acquisition, a fault aimed at the
// leader, a crash), or a failed DB call or lost answer of the leader on
// that workspace (the claim's own answer lost, a write of the operation
// refused).
type claimExecutes struct {
	// owed: workspace → the applied claim still owing its first call.
	owed map[string]*history.Event
	at   time.Time
}

func (*claimExecutes) Name() string     { return "claim-executes" }
func (*claimExecutes) Contract() string { return "3" }

func (c *claimExecutes) Observe(s *State, e *history.Event, r *Report) {
	if c.owed == nil {
		c.owed = map[string]*history.Event{}
	}
	if !e.At.Equal(c.at) {
		c.flush(r)
		c.at = e.At
	}
	if len(c.owed) > 0 {
		c.excuse(e)
	}
	if e.Kind == history.KindCall && Actuator(e.Method) {
		if o := c.owed[e.Workspace]; o != nil && o.Instance == e.Instance {
			r.Exercise()
			delete(c.owed, e.Workspace)
		}
		return
	}
	if reconcilerWrite(e) && e.Err == "" && classify(s.Row(e.Workspace), e.Patch) == tClaim && e.Instance == s.Leader.Holder {
		c.owed[e.Workspace] = e
	}
}

// excuse drops the claims whose step e shows cut short.
func (c *claimExecutes) excuse(e *history.Event) {
	switch e.Kind {
	case history.KindLeader, history.KindCrash:
		clear(c.owed)
	case history.KindFault:
		if e.Instance == "" {
			return
		}
		for id, o := range c.owed {
			if o.Instance == e.Instance {
				delete(c.owed, id)
			}
		}
	case history.KindCall, history.KindWrite, history.KindInsert:
		if leftLead(e) || refusedAsFenced(e) {
			clear(c.owed)
			return
		}
		if e.Err != "" && e.Workspace != "" && e.Kind != history.KindCall {
			delete(c.owed, e.Workspace)
		}
		if e.Err != "" && e.Kind == history.KindCall && e.Method != MPublish && e.Workspace != "" {
			delete(c.owed, e.Workspace)
		}
	}
}

// flush flags the claims of the instant that just ended.
func (c *claimExecutes) flush(r *Report) {
	ids := make([]string, 0, len(c.owed))
	for id := range c.owed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		o := c.owed[id]
		r.Exercise()
		r.Flag(id, o.At, fmt.Sprintf("%s claimed %s on %s and made no actuator call on it in that step (SPEC 4.2 step 5: execute in the same tick; SPEC 3: a failed monitor:trigger publish is ignored)",
			o.Instance, o.Patch.Operation.V, id), o.Seq)
	}
	clear(c.owed)
}

func (c *claimExecutes) Finish(_ *State, _ *Final, r *Report) {
	if c.owed != nil {
		c.flush(r)
	}
}
