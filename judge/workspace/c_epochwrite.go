package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// writeEpoch: C10 ("once a successor has acted, nothing a deposed leader
// does — a table write … — may still take effect (fencing, 3.1)"), read
// through the sentences that make fencing possible: SPEC 3.1 "Every
// coordinator write carries its epoch (1.6)", and 1.6's table, which gives
// every write a coordinator makes (the HealthMonitor's observations and
// its one-time error_info, every StateReconciler write, the TTL Manager's
// desired-state change and the last-access stamp made through the API
// service layer) the leader epoch, "so that a deposed leader cannot land
// it after its successor has acted". Epoch 0 is the mark of a write that
// is not fenced (the API's own): the store applies it whoever leads, so a
// coordinator write carrying it is one no fencing can stop, whether or not
// a deposition happened to strike while it was in flight.
//
// Judged on every write attempt (applied or refused), insert and
// HealthMonitor pass (the `health.pass` note of the rows stamped in bulk)
// made by a coordinator: a write of component health_monitor or
// state_reconciler, one made on behalf of the TTL Manager or the
// StateReconciler, or any write by an instance that has taken the leader
// lock. Its epoch must be that of the instance's latest acquisition: not
// 0, and not an epoch the instance never held (an instance that never led
// has none to carry). A write under an older epoch of its own is the
// store's to refuse and c10-single-leader's to judge if it lands.
type writeEpoch struct {
	base
	// coordinators: the instances that have taken part in the election
	// (an acquisition, a lock try or check).
	coordinators map[string]bool
}

func (*writeEpoch) Name() string     { return "c10-write-epoch" }
func (*writeEpoch) Contract() string { return "C10" }

// coordinatorWrite reports whether e is a write SPEC 1.6 attributes to a
// coordinator by its component or on-behalf: the ones carrying the leader
// epoch, whoever made them.
func coordinatorWrite(e *history.Event) bool {
	switch e.Component {
	case contracts.CompHealthMonitor, contracts.CompStateReconciler, contracts.CompTTLManager:
		return true
	}
	return e.Args == onBehalfOf+string(contracts.CompTTLManager) || e.Args == onBehalfOf+string(contracts.CompStateReconciler)
}

func (c *writeEpoch) Observe(s *State, e *history.Event, r *Report) {
	if c.coordinators == nil {
		c.coordinators = map[string]bool{}
	}
	switch {
	case e.Kind == history.KindLeader && e.Instance != "":
		c.coordinators[e.Instance] = true
		return
	case e.Kind == history.KindCall && (e.Method == MTryAcquire || e.Method == MLockCheck) && e.Instance != "":
		c.coordinators[e.Instance] = true
		return
	case e.Kind == history.KindWrite, e.Kind == history.KindInsert:
	case e.Kind == history.KindNote && e.Method == NoteHealthPass:
	default:
		return
	}
	if !coordinatorWrite(e) && !c.coordinators[e.Instance] {
		return // the API's own write: not fenced (epoch 0)
	}
	r.Exercise()
	what := "write"
	switch e.Kind {
	case history.KindInsert:
		what = "insert"
	case history.KindNote:
		what = "observation pass (observed_at stamps)"
	}
	who := string(e.Component)
	if e.Args != "" && e.Kind == history.KindWrite {
		who += " " + e.Args
	}
	mine, led := s.Leader.EpochOf[e.Instance]
	switch {
	case e.Epoch == 0:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("coordinator %s by %s (%s) carries epoch 0: not fenced, a deposed leader could land it after its successor acted (SPEC 3.1: every coordinator write carries its epoch)",
			what, e.Instance, who), e.Seq)
	case !led:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("coordinator %s by %s (%s) under epoch %d, but %s never took the leader lock",
			what, e.Instance, who, e.Epoch, e.Instance), e.Seq)
	case e.Epoch > mine:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("coordinator %s by %s (%s) under epoch %d, newer than its own leadership's (%d): it carries another leader's epoch",
			what, e.Instance, who, e.Epoch, mine), e.Seq)
	}
}
