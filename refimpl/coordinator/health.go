package coordinator

import (
	"context"
	"fmt"
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
	// The maps and the batch are reused from pass to pass: a pass over a
	// large fleet runs every 2 s.
	if c.scratch.containers == nil {
		c.scratch.containers, c.scratch.volumes = map[string]bool{}, map[string]struct{}{}
	}
	containers, volumes := c.scratch.containers, c.scratch.volumes // id → running; id
	clear(containers)
	clear(volumes)
	for _, in := range insts {
		containers[in.WorkspaceID] = in.Running
	}
	for _, v := range vols {
		volumes[v] = struct{}{}
	}
	updates, observed := c.scratch.updates[:0], c.scratch.observed[:0]
	defer func() { c.scratch.updates, c.scratch.observed = updates[:0], observed[:0] }()
	var fleet contracts.FleetSummary
	// The rows are read through a cursor: the fleet is never held in
	// memory as a whole.
	err = c.deps.Store.Scan(ctx, contracts.FilterActive, func(w *contracts.Workspace) {
		running, exists := containers[w.ID]
		_, vol := volumes[w.ID]
		o := contracts.Observation{ContainerExists: exists, ContainerRunning: running, VolumeExists: vol}
		p := contracts.ObservationPatch(w, o, now)
		if p.Mask() == contracts.MaskObservedAt {
			observed = append(observed, w.ID)
		} else {
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
