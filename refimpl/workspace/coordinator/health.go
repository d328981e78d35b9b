package coordinator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// healthTick is one HealthMonitor pass (SPEC 4.1): one container listing,
// one volume listing and one row listing, then one batched write. A failed
// listing skips the pass: an error is never read as "absent".
func (c *Coordinator) healthTick(ctx context.Context, now time.Time) error {
	insts, err := c.deps.Instances.List(ctx)
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	vols, err := c.deps.Storage.ListVolumes(ctx)
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	// The three listings are joined by workspace id: the rows come ordered
	// by id, and so do the provider listings (ports.Instances.List and
	// ports.Storage.ListVolumes); they are walked beside the rows.
	j := join{insts: insts, vols: vols}
	observe := j.observe
	updates, observed := c.scratch.updates[:0], c.scratch.observed[:0]
	defer func() { c.scratch.updates, c.scratch.observed = updates[:0], observed[:0] }()
	var fleet decide.FleetSummary
	// The rows are read through a cursor: the fleet is never held in
	// memory as a whole. The batch is reused from pass to pass: a pass
	// over a large fleet runs every 2 s.
	err = c.deps.Store.Scan(ctx, contracts.FilterActive, func(w *contracts.Workspace) {
		o := observe(w.ID)
		if decide.ObservesOnly(w, o) {
			observed = append(observed, w.ID)
		} else {
			p := decide.ObservationPatch(w, o, now)
			updates = append(updates, ports.RowUpdate{ID: w.ID, Cond: decide.ObservationCond(p), Patch: p})
			p.Apply(w, now)
		}
		fleet.Add(w)
	})
	if err != nil {
		return fmt.Errorf("list workspaces: %w", err)
	}
	wr := c.writer(contracts.CompHealthMonitor)
	if len(updates) > 0 {
		if err := c.deps.Store.UpdateMany(ctx, wr, updates); err != nil {
			return fmt.Errorf("record observations: %w", err)
		}
	}
	if err := c.deps.Store.MarkObserved(ctx, wr, observed, now); err != nil {
		return fmt.Errorf("record observations: %w", err)
	}
	c.fleet = fleet // the adaptive period follows the latest full view
	return nil
}

// join walks the provider listings, sorted by workspace id, beside rows
// read in id order.
type join struct {
	insts  []ports.InstanceState
	vols   []string
	ci, vi int // where the walk stands in insts and vols
	prev   string
}

// observe is what the listings show of workspace id.
func (j *join) observe(id string) contracts.Observation {
	// Usually the row is the next entry of a listing, which also shows
	// that it comes after the row before (the walks stand past that one).
	atInst := j.ci < len(j.insts) && j.insts[j.ci].WorkspaceID == id
	atVol := j.vi < len(j.vols) && j.vols[j.vi] == id
	if !atInst && !atVol && id < j.prev { // a row out of order: find its place again
		j.ci, _ = slices.BinarySearchFunc(j.insts, id, byWorkspace)
		j.vi, _ = slices.BinarySearch(j.vols, id)
	}
	j.prev = id
	for ; !atInst && j.ci < len(j.insts); j.ci++ {
		if c := byWorkspace(j.insts[j.ci], id); c >= 0 {
			atInst = c == 0
			break
		}
	}
	for ; !atVol && j.vi < len(j.vols); j.vi++ {
		if c := strings.Compare(j.vols[j.vi], id); c >= 0 {
			atVol = c == 0
			break
		}
	}
	var o contracts.Observation
	if atInst {
		o.ContainerExists, o.ContainerRunning = true, j.insts[j.ci].Running
		j.ci++
	}
	if atVol {
		o.VolumeExists = true
		j.vi++
	}
	return o
}

func byWorkspace(in ports.InstanceState, id string) int { return strings.Compare(in.WorkspaceID, id) }
