package report

import (
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// The lanes of a workspace, top to bottom.
const (
	LaneObserved  = "observed"
	LaneOperation = "operation"
	LaneHealth    = "health"
)

// Lanes names a workspace's lanes in order.
var Lanes = []string{LaneObserved, LaneOperation, LaneHealth}

// Segment is a value held over [From, To).
type Segment struct {
	From, To time.Time
	Value    string
}

// Mark is a point event on a swimlane: a fault that struck the workspace.
type Mark struct {
	At   time.Time
	Seq  int64
	What string
}

// Swimlane is one workspace's history: a lane of segments per column.
type Swimlane struct {
	Workspace string
	// Label is the workspace's name and owner when the history has them.
	Label string
	Lanes map[string][]Segment
	Marks []Mark
}

// Timelines replays events (a run's kept history) into one swimlane per
// workspace, in order of creation, every segment closed at end.
func Timelines(events []history.Event, end time.Time) []Swimlane {
	type open struct {
		value string
		since time.Time
	}
	var order []string
	lanes := map[string]*Swimlane{}
	cur := map[string]map[string]*open{}
	set := func(id, lane, value string, at time.Time) {
		o := cur[id][lane]
		if o != nil && o.value == value {
			return
		}
		if o != nil && at.After(o.since) {
			lanes[id].Lanes[lane] = append(lanes[id].Lanes[lane], Segment{From: o.since, To: at, Value: o.value})
		}
		cur[id][lane] = &open{value: value, since: at}
	}
	for i := range events {
		e := &events[i]
		switch {
		case e.Kind == history.KindInsert && e.Row != nil:
			id := e.Workspace
			if _, seen := lanes[id]; seen {
				continue
			}
			order = append(order, id)
			label := e.Row.Name
			if e.Row.OwnerUserID != "" {
				label += " (" + e.Row.OwnerUserID + ")"
			}
			lanes[id] = &Swimlane{Workspace: id, Label: label, Lanes: map[string][]Segment{}}
			cur[id] = map[string]*open{}
			set(id, LaneObserved, string(e.Row.ObservedStatus), e.At)
			set(id, LaneOperation, string(e.Row.Operation), e.At)
			set(id, LaneHealth, string(e.Row.HealthStatus), e.At)
		case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && lanes[e.Workspace] != nil:
			p := e.Patch
			if p.ObservedStatus.Set {
				set(e.Workspace, LaneObserved, string(p.ObservedStatus.V), e.At)
			}
			if p.Operation.Set {
				set(e.Workspace, LaneOperation, string(p.Operation.V), e.At)
			}
			if p.HealthStatus.Set {
				set(e.Workspace, LaneHealth, string(p.HealthStatus.V), e.At)
			}
		case e.Kind == history.KindFault && lanes[e.Workspace] != nil:
			what := e.Method
			if e.Args != "" {
				what += " " + e.Args
			}
			lanes[e.Workspace].Marks = append(lanes[e.Workspace].Marks, Mark{At: e.At, Seq: e.Seq, What: what})
		}
	}
	out := make([]Swimlane, 0, len(order))
	for _, id := range order {
		for _, lane := range Lanes {
			if o := cur[id][lane]; o != nil && end.After(o.since) {
				lanes[id].Lanes[lane] = append(lanes[id].Lanes[lane], Segment{From: o.since, To: end, Value: o.value})
			}
		}
		out = append(out, *lanes[id])
	}
	return out
}

// Leadership is each coordinator instance's periods as leader, and its
// crashes, for the top of the page.
type Leadership struct {
	Instance string
	Leading  []Segment
	Crashes  []Mark
}

// Leaders replays the leader and crash events of a history.
func Leaders(events []history.Event, end time.Time) []Leadership {
	by := map[string]*Leadership{}
	since := map[string]time.Time{}
	get := func(inst string) *Leadership {
		if by[inst] == nil {
			by[inst] = &Leadership{Instance: inst}
		}
		return by[inst]
	}
	stop := func(inst string, at time.Time) {
		if t, ok := since[inst]; ok {
			l := get(inst)
			l.Leading = append(l.Leading, Segment{From: t, To: at, Value: "leader"})
			delete(since, inst)
		}
	}
	for i := range events {
		e := &events[i]
		switch {
		case e.Kind == history.KindLeader && e.Method == "acquire":
			get(e.Instance)
			if _, ok := since[e.Instance]; !ok {
				since[e.Instance] = e.At
			}
		case e.Kind == history.KindLeader:
			stop(e.Instance, e.At)
		case e.Kind == history.KindCrash && e.Instance != "":
			if e.Method == "crash" {
				stop(e.Instance, e.At)
			}
			l := get(e.Instance)
			l.Crashes = append(l.Crashes, Mark{At: e.At, Seq: e.Seq, What: e.Method + " " + e.Args})
		}
	}
	for inst := range since {
		stop(inst, end)
	}
	out := make([]Leadership, 0, len(by))
	for _, l := range by {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out
}
