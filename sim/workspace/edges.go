package workspace

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// The state-edge matrix of a run: which transitions of a workspace's
// (observed_status, desired_state, operation) the run went through, and
// which operation each fault found in progress when it struck. It is
// coverage, not a verdict: a report lists the edges a run (or a range of
// seeds) never went through, so that what the seeds did not try is as
// visible as what they did.
//
// A state edge is named "FROM→TO@OBSERVED/DESIRED": a claim
// ("NONE→PROVISIONING@PENDING/RUNNING", the row as the claim found it), a
// completion ("PROVISIONING→NONE@STANDBY/RUNNING", the row as the
// completion leaves it) or a terminal error ("STARTING→ERROR@*/RUNNING").
// DESIRED is "deleted" for a soft-deleted row. A fault edge is named
// "KIND×OPERATION": the operation of the workspace the fault struck, or,
// for a fault on the fleet (a crash, an outage), each operation in
// progress anywhere when it struck (NONE if none was).

// edgeRow is a workspace as the edge matrix follows it.
type edgeRow struct {
	observed contracts.ObservedStatus
	desired  contracts.DesiredState
	deleted  bool
	op       contracts.Operation
}

func (r *edgeRow) desiredLabel() string {
	if r.deleted {
		return "deleted"
	}
	return string(r.desired)
}

// edges follows the history as it is recorded.
type edges struct {
	rows  map[string]*edgeRow
	state map[string]int
	fault map[string]int
	// striking is the fault kind whose plan action is being applied;
	// struck is set once one of its fault events was counted.
	striking Kind
	struck   bool
}

func (g *edges) init() {
	g.rows = map[string]*edgeRow{}
	g.state = map[string]int{}
	g.fault = map[string]int{}
}

const edgeArrow = "→"

func claimEdge(observed contracts.ObservedStatus, desired string, op contracts.Operation) string {
	return string(contracts.OpNone) + edgeArrow + string(op) + "@" + string(observed) + "/" + desired
}

func completeEdge(observed contracts.ObservedStatus, desired string, op contracts.Operation) string {
	return string(op) + edgeArrow + string(contracts.OpNone) + "@" + string(observed) + "/" + desired
}

func errorEdge(desired string, op contracts.Operation) string {
	return string(op) + edgeArrow + "ERROR@*/" + desired
}

func faultEdge(k Kind, op contracts.Operation) string { return string(k) + "×" + string(op) }

func (g *edges) add(e *history.Event) {
	switch {
	case e.Kind == history.KindInsert && e.Row != nil:
		w := e.Row
		g.rows[e.Workspace] = &edgeRow{observed: w.ObservedStatus, desired: w.DesiredState, deleted: !w.DeletedAt.IsZero(), op: w.Operation}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil:
		r := g.rows[e.Workspace]
		if r == nil {
			return
		}
		p := e.Patch
		if p.Operation.Set && p.Operation.V != r.op && r.op == contracts.OpNone {
			g.state[claimEdge(r.observed, r.desiredLabel(), p.Operation.V)]++
		}
		before := r.op
		if p.ObservedStatus.Set {
			r.observed = p.ObservedStatus.V
		}
		if p.DesiredState.Set {
			r.desired = p.DesiredState.V
		}
		if p.DeletedAt.Set {
			r.deleted = !p.DeletedAt.V.IsZero()
		}
		if !p.Operation.Set || p.Operation.V == before {
			return
		}
		r.op = p.Operation.V
		switch {
		case before == contracts.OpNone:
		case p.Operation.V != contracts.OpNone:
			g.state[claimEdge(r.observed, r.desiredLabel(), p.Operation.V)]++ // one operation replacing another
		case p.ErrorInfo.Set && p.ErrorInfo.V != nil && p.ErrorInfo.V.IsTerminal:
			g.state[errorEdge(r.desiredLabel(), before)]++
		default:
			g.state[completeEdge(r.observed, r.desiredLabel(), before)]++
		}
	case e.Kind == history.KindFault && g.striking != "":
		g.struck = true
		if r := g.rows[e.Workspace]; r != nil {
			g.fault[faultEdge(g.striking, r.op)]++
			return
		}
		g.fleet(g.striking)
	}
}

// fleet counts a fault of kind k on the fleet: an edge for each operation
// in progress anywhere, or NONE.
func (g *edges) fleet(k Kind) {
	var seen [8]bool
	any := false
	for _, r := range g.rows {
		if r.op == contracts.OpNone {
			continue
		}
		if i := slices.Index(contracts.AllOperations, r.op); i >= 0 && !seen[i] {
			seen[i] = true
			any = true
			g.fault[faultEdge(k, r.op)]++
		}
	}
	if !any {
		g.fault[faultEdge(k, contracts.OpNone)]++
	}
}

// strike brackets the application of a fault action of kind k: the fault
// events it records are counted with the operation of their workspace;
// one that records none counts on the fleet when it is applied (a crash
// or a deposition armed, to strike later).
func (g *edges) strike(k Kind, apply func()) {
	if !k.IsFault() {
		apply()
		return
	}
	g.striking, g.struck = k, false
	apply()
	if !g.struck {
		g.fleet(k)
	}
	g.striking = ""
}

// StateEdges lists every state edge a run can go through (SPEC 4.2.1's
// claims for every row shape, each operation's completion and terminal
// error under every desired state), sorted.
func StateEdges() []string {
	set := map[string]bool{}
	desireds := []contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby, contracts.DesiredPending}
	for _, o := range []contracts.ObservedStatus{contracts.ObservedPending, contracts.ObservedStandby, contracts.ObservedRunning} {
		for _, d := range desireds {
			for _, deleted := range []bool{false, true} {
				for _, failing := range []bool{false, true} {
					for _, unrestored := range []bool{false, true} {
						w := contracts.Workspace{ObservedStatus: o, DesiredState: d, HealthStatus: contracts.HealthOK}
						label := string(d)
						if deleted {
							w.DeletedAt, label = time.Unix(1, 0), "deleted"
						}
						if failing {
							w.HealthStatus = contracts.HealthError
						}
						if unrestored {
							w.ArchiveKey = "archives/x/y/home.tar.zst"
						}
						if op := wsjudge.TableChoice(&w); op != contracts.OpNone {
							set[claimEdge(o, label, op)] = true
						}
					}
				}
			}
		}
	}
	targets := map[contracts.Operation]contracts.ObservedStatus{
		contracts.OpProvisioning: contracts.ObservedStandby, contracts.OpRestoring: contracts.ObservedStandby,
		contracts.OpStarting: contracts.ObservedRunning, contracts.OpStopping: contracts.ObservedStandby,
		contracts.OpArchiving: contracts.ObservedPending, contracts.OpDeleting: contracts.ObservedDeleted,
	}
	labels := []string{string(contracts.DesiredRunning), string(contracts.DesiredStandby), string(contracts.DesiredPending), "deleted"}
	for op, target := range targets {
		for _, d := range labels {
			if op == contracts.OpDeleting && d != "deleted" {
				continue // deleted_at is never cleared
			}
			done := target
			if op == contracts.OpArchiving && d == "deleted" {
				done = contracts.ObservedDeleted // 4.2.2: a soft-deleted workspace's archiving completes on DELETED
			}
			set[completeEdge(done, d, op)] = true
			set[errorEdge(d, op)] = true
		}
	}
	out := make([]string, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// FaultEdges lists every fault edge of mix m: each of its kinds × NONE
// and each operation, in the kinds' order.
func FaultEdges(m FaultMix) []string {
	var out []string
	for _, k := range append(FaultKinds(), OptInFaultKinds()...) {
		if !slices.Contains(m.Kinds, k) {
			continue
		}
		for _, op := range contracts.AllOperations {
			out = append(out, faultEdge(k, op))
		}
	}
	return out
}

// Unseen lists the edges of all that seen never counted, in all's order.
func Unseen(all []string, seen map[string]int) []string {
	var out []string
	for _, e := range all {
		if seen[e] == 0 {
			out = append(out, e)
		}
	}
	return out
}

// CompactEdges renders edges grouped by their first part ("crash×NONE
// crash×DELETING" → "crash×{NONE,DELETING}", "NONE→STARTING@STANDBY/RUNNING
// NONE→STARTING@RUNNING/RUNNING" → "NONE→STARTING@{STANDBY/RUNNING,RUNNING/RUNNING}"),
// for a text report.
func CompactEdges(es []string) string {
	type group struct {
		head  string
		tails []string
	}
	var groups []group
	for _, e := range es {
		head, tail := e, ""
		for _, sep := range []string{"@", "×"} {
			if i := strings.Index(e, sep); i >= 0 {
				head, tail = e[:i+len(sep)], e[i+len(sep):]
				break
			}
		}
		if n := len(groups); n > 0 && groups[n-1].head == head {
			groups[n-1].tails = append(groups[n-1].tails, tail)
			continue
		}
		groups = append(groups, group{head, []string{tail}})
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		if len(g.tails) == 1 {
			parts[i] = g.head + g.tails[0]
			continue
		}
		parts[i] = g.head + "{" + strings.Join(g.tails, ",") + "}"
	}
	return strings.Join(parts, " ")
}
