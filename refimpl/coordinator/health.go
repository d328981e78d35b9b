package coordinator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
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
	// by id, the provider listings are sorted (in one pass when a provider
	// already lists in order) and walked beside them.
	slices.SortFunc(insts, func(a, b ports.InstanceState) int { return strings.Compare(a.WorkspaceID, b.WorkspaceID) })
	slices.Sort(vols)
	ci, vi, prev := 0, 0, ""
	observe := func(id string) contracts.Observation {
		if id < prev { // a row out of order: find its place again
			ci, _ = slices.BinarySearchFunc(insts, id, func(in ports.InstanceState, id string) int { return strings.Compare(in.WorkspaceID, id) })
			vi, _ = slices.BinarySearch(vols, id)
		}
		prev = id
		var o contracts.Observation
		for ; ci < len(insts); ci++ {
			if c := strings.Compare(insts[ci].WorkspaceID, id); c >= 0 {
				o.ContainerExists = c == 0
				o.ContainerRunning = o.ContainerExists && insts[ci].Running
				break
			}
		}
		for ; vi < len(vols); vi++ {
			if c := strings.Compare(vols[vi], id); c >= 0 {
				o.VolumeExists = c == 0
				break
			}
		}
		return o
	}
	updates, observed := c.scratch.updates[:0], c.scratch.observed[:0]
	defer func() { c.scratch.updates, c.scratch.observed = updates[:0], observed[:0] }()
	var fleet contracts.FleetSummary
	// The rows are read through a cursor: the fleet is never held in
	// memory as a whole. The batch is reused from pass to pass: a pass
	// over a large fleet runs every 2 s.
	err = c.deps.Store.Scan(ctx, contracts.FilterActive, func(w *contracts.Workspace) {
		o := observe(w.ID)
		if contracts.ObservesOnly(w, o) {
			observed = append(observed, w.ID)
		} else {
			p := contracts.ObservationPatch(w, o, now)
			var cond contracts.Cond
			if p.ErrorInfo.Set {
				cond.ErrorInfoNull = true
			}
			updates = append(updates, ports.RowUpdate{ID: w.ID, Cond: cond, Patch: p})
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
