package workspace

import (
	"fmt"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// fencing: C10 and SPEC 3.1, for side effects. "No action of a deposed
// leader may land after its successor has acted": the leader re-checks
// its lock before each actuator call, so no provider call that changes
// the world (container start or delete, volume provision or delete,
// archive, restore, object put or delete) is made by an instance once
// another instance acquired leadership after it and acted. (Writes are
// judged by c10-single-leader: the store fences them by epoch.)
//
// Figure dual-leader-seconds: the simulated seconds during which two
// instances believed they led. An instance believes from its acquisition
// until its leadership is released, it crashes or acquires again, or, once
// deposed, until the last action it makes (a write attempted or a
// world-changing call); an instance that never acts after its successor's
// acquisition is counted as having known at once. Not a verdict: SPEC
// allows the window (the session lock and the fencing epoch make it
// harmless); the figure says how long a design leaves it open.
type fencing struct {
	// since: when each instance acquired, while it may still believe.
	since map[string]time.Time
	// deposedAt: when each believing instance's successor acquired.
	deposedAt map[string]time.Time
	// lastAct: each deposed instance's last action since deposedAt.
	lastAct map[string]time.Time
}

func (*fencing) Name() string     { return "c10-fencing" }
func (*fencing) Contract() string { return "C10" }

// FigureDualLeader is the figure of the dual-leader window, in seconds.
const FigureDualLeader = "dual-leader-seconds"

func (*fencing) Figures() []string { return []string{FigureDualLeader} }

// SideEffect reports whether method changes the world outside the DB.
func SideEffect(method string) bool {
	return Actuator(method) || method == MObjPut || method == MObjDelete
}

func (c *fencing) Observe(s *State, e *history.Event, r *Report) {
	if c.since == nil {
		c.since, c.deposedAt, c.lastAct = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	}
	L := &s.Leader
	switch {
	case e.Kind == history.KindLeader && e.Method == "acquire":
		c.close(e.Instance, e.At, r)
		for _, other := range c.believers() {
			if _, ok := c.deposedAt[other]; !ok {
				c.deposedAt[other] = e.At
			}
		}
		c.since[e.Instance] = e.At
	case e.Kind == history.KindLeader && e.Method == "release":
		c.close(e.Instance, e.At, r)
	case e.Kind == history.KindCrash:
		c.close(e.Instance, e.At, r)
	case e.Kind == history.KindWrite || (e.Kind == history.KindCall && SideEffect(e.Method)):
		if _, ok := c.deposedAt[e.Instance]; ok {
			c.lastAct[e.Instance] = e.At
		}
	}
	if e.Kind != history.KindCall || !SideEffect(e.Method) {
		return
	}
	mine, ok := L.EpochOf[e.Instance]
	if !ok {
		return // not a coordinator instance (a harness or the API)
	}
	r.Exercise()
	if mine >= L.Epoch {
		return
	}
	if first, acted := L.FirstAct[L.Epoch]; acted {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("deposed leader %s (epoch %d) called %s after its successor (epoch %d) acted: no lock re-check before the actuator call",
			e.Instance, mine, e.Method, L.Epoch), first, e.Seq)
	}
}

// close ends instance's belief at t and adds its dual-leader window.
func (c *fencing) close(instance string, t time.Time, r *Report) {
	if _, ok := c.since[instance]; !ok {
		return
	}
	if from, ok := c.deposedAt[instance]; ok {
		end := c.lastAct[instance]
		if end.After(t) || end.IsZero() {
			end = from // never acted once deposed: it knew at once
		}
		if end.After(from) {
			r.Figure(FigureDualLeader, end.Sub(from).Seconds())
		}
	}
	delete(c.since, instance)
	delete(c.deposedAt, instance)
	delete(c.lastAct, instance)
}

// believers lists the instances that may believe they lead, sorted.
func (c *fencing) believers() []string {
	out := make([]string, 0, len(c.since))
	for id := range c.since {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (c *fencing) Finish(_ *State, f *Final, r *Report) {
	for _, id := range c.believers() {
		c.close(id, f.End, r)
	}
}
