package workspace

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// componentOrder: SPEC 3, "Steps": "In each step it first checks its lock
// …, then runs every component that is due, in a fixed order". Components
// run one after another, so within one step of an instance the events of
// one component are never split by another's, and two components that
// both act in a step act in the same order in every step of that instance.
//
// Judged on virtual time, where a step is an instance's events at one
// instant (DR411), cut at its leadership events, crashes and failed lock
// checks (a process restarted, or one that stopped and may compete again,
// begins a new step). An event's component is the one its write names (a
// write on behalf of a component belongs to that component, SPEC 1.6), or,
// for calls, the one SPEC gives the call to: a container listing begins a
// HealthMonitor pass (3, 4.1), an actuator call or a monitor:trigger
// publish is the StateReconciler's (4.2.2, 3), a publish on workspace:{id}
// the EventListener's (4.6). Other calls (lock checks, which SPEC 3.1 puts
// before every actuator call too; reads; the GC's and the TTL Manager's
// keys) name no component and are not judged.
type componentOrder struct {
	base
	// leads: instances that led at some point (only they run components).
	leads map[string]bool
	// order: per instance, each ordered pair of components seen in a
	// step, with the event that first showed it.
	order map[string]map[[2]contracts.Component]int64
	// cur: per instance, the step being read.
	cur map[string]*curStep
}

// curStep is a step of one instance: its instant, and the components in
// the order they acted (no repeats), with the event each first acted in.
type curStep struct {
	at   time.Time
	seen []contracts.Component
	seqs []int64
	// broken: this step already flagged.
	broken bool
}

func (*componentOrder) Name() string     { return "component-order" }
func (*componentOrder) Contract() string { return "3" }

// eventComponent is the component SPEC gives e, "" when it names none.
func eventComponent(e *history.Event) contracts.Component {
	switch e.Kind {
	case history.KindWrite, history.KindInsert, history.KindNote:
		if strings.HasPrefix(e.Args, onBehalfOf) {
			return contracts.Component(strings.TrimPrefix(e.Args, onBehalfOf))
		}
		switch e.Component {
		case contracts.CompHealthMonitor, contracts.CompStateReconciler:
			return e.Component
		}
	case history.KindCall:
		switch {
		case e.Method == MInstancesList:
			return contracts.CompHealthMonitor
		case Actuator(e.Method):
			return contracts.CompStateReconciler
		case e.Method == MPublish && strings.HasPrefix(e.Args, specMonitorTrigger):
			return contracts.CompStateReconciler
		case e.Method == MPublish && strings.HasPrefix(e.Args, "workspace:"):
			return compEventListener
		}
	}
	return ""
}

// compEventListener names the EventListener (SPEC 3's table); it writes
// nothing, so contracts has no writer name for it.
const compEventListener contracts.Component = "event_listener"

func (c *componentOrder) Observe(_ *State, e *history.Event, r *Report) {
	if c.leads == nil {
		c.leads, c.order, c.cur = map[string]bool{}, map[string]map[[2]contracts.Component]int64{}, map[string]*curStep{}
	}
	if e.Instance == "" {
		return
	}
	switch {
	case e.Kind == history.KindLeader, e.Kind == history.KindCrash, leftLead(e):
		if e.Kind == history.KindLeader && e.Method == "acquire" {
			c.leads[e.Instance] = true
		}
		delete(c.cur, e.Instance) // a new step begins
		return
	}
	if !c.leads[e.Instance] {
		return
	}
	comp := eventComponent(e)
	if comp == "" {
		return
	}
	st := c.cur[e.Instance]
	if st == nil || !st.at.Equal(e.At) {
		st = &curStep{at: e.At}
		c.cur[e.Instance] = st
	}
	n := len(st.seen)
	if n > 0 && st.seen[n-1] == comp {
		return
	}
	for i, prev := range st.seen {
		if prev == comp && !st.broken {
			st.broken = true
			r.Exercise()
			r.Flag("", e.At, fmt.Sprintf("in one step of %s at %s, the %s acted again after the %s: components run one after another in a step (SPEC 3: \"runs every component that is due, in a fixed order\")",
				e.Instance, stamp(e.At), comp, st.seen[n-1]), st.seqs[i], st.seqs[n-1], e.Seq)
			return
		}
	}
	ord := c.order[e.Instance]
	if ord == nil {
		ord = map[[2]contracts.Component]int64{}
		c.order[e.Instance] = ord
	}
	for i, prev := range st.seen {
		if st.broken {
			break
		}
		if ev, ok := ord[[2]contracts.Component{comp, prev}]; ok {
			st.broken = true
			r.Exercise()
			r.Flag("", e.At, fmt.Sprintf("in a step of %s at %s, the %s acted before the %s, and in an earlier step after it: the components of a step run in a fixed order (SPEC 3)",
				e.Instance, stamp(e.At), prev, comp), ev, st.seqs[i], e.Seq)
			return
		}
		if _, ok := ord[[2]contracts.Component{prev, comp}]; !ok {
			ord[[2]contracts.Component{prev, comp}] = e.Seq
		} else {
			r.Exercise() // a pair's order seen again, and kept
		}
	}
	st.seen = append(st.seen, comp)
	st.seqs = append(st.seqs, e.Seq)
}
