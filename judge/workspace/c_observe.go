package workspace

import (
	"fmt"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// observationTruth: C1 and SPEC 4.1. Real resources are the truth: every
// observed_status the HealthMonitor writes is the status the 4.1 rules
// give for the world as the observer's own latest successful listings
// showed it (containers with their running state, volumes). An
// observation that fails leaves the previous status untouched: a failed
// listing is never read as "no containers" or "no volumes", so a status
// written after one still matches the last successful listing.
//
// Evidence: the recorded Result of each successful instances.List and
// storage.ListVolumes call (history.Listings), per instance, and the
// HealthMonitor's applied writes. deleted_at is the row's as replayed
// when the write committed; a workspace soft-deleted between the
// observer's read and its write may still be written PENDING.
type observationTruth struct {
	base
	seen listings
}

// listings follows, per instance, its latest listing of each kind.
type listings struct {
	view        history.ListingView
	insts, vols map[string]*listing
}

// listing is an instance's latest listing of one kind.
type listing struct {
	// set is what the latest successful listing returned (nil before
	// the first, and after one whose Result could not be read).
	set *history.ListingSet
	// failedSeq is the latest attempt's sequence number when it failed
	// (0: the latest attempt succeeded).
	failedSeq int64
}

func (*observationTruth) Name() string     { return "c1-observation-truth" }
func (*observationTruth) Contract() string { return "C1" }

func (c *observationTruth) Observe(s *State, e *history.Event, r *Report) {
	if c.seen.record(e) {
		return
	}
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.ObservedStatus.Set &&
		e.Component == contracts.CompHealthMonitor {
		c.judge(s, e, r)
	}
}

// record follows e if it is a listing call, and reports whether it was.
func (c *listings) record(e *history.Event) bool {
	if e.Kind != history.KindCall || (e.Method != history.MethodListInstances && e.Method != history.MethodListVolumes) {
		return false
	}
	if c.insts == nil {
		c.insts, c.vols = map[string]*listing{}, map[string]*listing{}
	}
	m := c.insts
	if e.Method == history.MethodListVolumes {
		m = c.vols
	}
	l := m[e.Instance]
	if l == nil {
		l = &listing{}
		m[e.Instance] = l
	}
	if e.Err != "" {
		l.failedSeq = e.Seq
		return true
	}
	l.failedSeq = 0
	// A Result this checker cannot read is no evidence either way: the
	// listing is unknown, and nothing is judged against it.
	l.set, _ = c.view.Apply(e)
	return true
}

// of is instance's latest listings of containers and of volumes (nil
// before its first attempt of that kind).
func (c *listings) of(instance string) (containers, volumes *listing) {
	return c.insts[instance], c.vols[instance]
}

func (c *observationTruth) judge(s *State, e *history.Event, r *Report) {
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	li, lv := c.seen.of(e.Instance)
	wrote := e.Patch.ObservedStatus.V
	if li == nil || lv == nil || li.set == nil || lv.set == nil {
		// No successful listing of one kind yet: only a write after a
		// failed one is evidence (the failure was read as something).
		for _, l := range []*listing{li, lv} {
			if l != nil && l.set == nil && l.failedSeq != 0 {
				r.Exercise()
				r.Flag(e.Workspace, e.At, fmt.Sprintf("observed_status %s written after a failed listing, with no successful one before it", wrote), l.failedSeq, e.Seq)
				return
			}
		}
		return
	}
	r.Exercise()
	hasC, running := li.set.Container(e.Workspace)
	o := contracts.Observation{ContainerExists: hasC, ContainerRunning: running, VolumeExists: lv.set.Has(e.Workspace)}
	want := specObserveStatus(row.Deleted(), o)
	if wrote == want || (want == contracts.ObservedDeleted && wrote == contracts.ObservedPending) {
		return
	}
	msg := fmt.Sprintf("observed_status %s written, but the observer's latest listings show %s (container %s, volume %v)",
		wrote, want, containerText(hasC, running), o.VolumeExists)
	seqs := []int64{e.Seq}
	for _, l := range []*listing{li, lv} {
		if l.failedSeq != 0 {
			msg += ": a failed listing was read as absent"
			seqs = []int64{l.failedSeq, e.Seq}
			break
		}
	}
	r.Flag(e.Workspace, e.At, msg, seqs...)
}

func containerText(exists, running bool) string {
	switch {
	case !exists:
		return "absent"
	case running:
		return "running"
	}
	return "stopped"
}
