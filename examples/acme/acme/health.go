package acme

import (
	"context"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// seen is what the providers' listings say about one workspace.
type seen struct {
	container bool // the container exists
	running   bool // and runs
	volume    bool
}

// observe is SPEC 4.1's rules: the observed status and health of w given
// what the listings show, and whether the HealthMonitor must first set
// error_info (the container-without-volume exception of C3).
func observe(w *contracts.Workspace, s seen) (contracts.ObservedStatus, contracts.HealthStatus, bool) {
	var obs contracts.ObservedStatus
	switch {
	case w.Deleted() && !s.container && !s.volume:
		obs = contracts.ObservedDeleted
	case s.container && s.running:
		obs = contracts.ObservedRunning
	case s.volume:
		obs = contracts.ObservedStandby
	default:
		obs = contracts.ObservedPending
	}
	switch {
	case w.Terminal():
		return obs, contracts.HealthError, false
	case s.container && !s.volume:
		return obs, contracts.HealthError, w.ErrorInfo == nil
	}
	return obs, contracts.HealthOK, false
}

// containerWithoutVolume is the error_info the HealthMonitor records once
// when it finds a container whose volume is gone (C6): terminal at once.
func containerWithoutVolume(now time.Time) *contracts.ErrorInfo {
	return &contracts.ErrorInfo{
		Reason:     contracts.ReasonMismatch,
		Message:    "container exists without its home volume",
		IsTerminal: true,
		Context:    map[string]any{"violation": contracts.ViolationContainerWithoutVolume, "expected": "volume_exists=true", "actual": "false"},
		OccurredAt: now,
	}
}

// observeAll is one HealthMonitor pass (SPEC 4.1): one listing per
// provider, then one bulk write of every row whose observation changed and
// one MarkObserved for the others (which also ends the pass). A failed
// listing skips the pass: an error is never read as "absent".
func (c *coordinator) observeAll(ctx context.Context) error {
	// SPEC 4.1: a pass lists the containers and the volumes, then reads
	// the rows (readRows, after both listings).
	var rows []contracts.Workspace
	readRows := func() (err error) {
		rows, err = c.deps.Store.List(ctx, contracts.FilterActive)
		return err
	}
	ctrs, err := c.deps.Instances.List(ctx)
	if err != nil {
		return fmt.Errorf("health monitor: list containers: %w", err)
	}
	vols, err := c.deps.Storage.ListVolumes(ctx)
	if err != nil {
		return fmt.Errorf("health monitor: list volumes: %w", err)
	}
	world := make(map[string]seen, len(rows))
	for _, ct := range ctrs {
		s := world[ct.WorkspaceID]
		s.container, s.running = true, ct.Running
		world[ct.WorkspaceID] = s
	}
	for _, id := range vols {
		s := world[id]
		s.volume = true
		world[id] = s
	}
	if err := readRows(); err != nil {
		return fmt.Errorf("health monitor: list workspaces: %w", err)
	}

	now := c.now()
	w := c.writer(contracts.CompHealthMonitor)
	var changed []ports.RowUpdate
	var same []string
	for i := range rows {
		row := &rows[i]
		obs, health, flag := observe(row, world[row.ID])
		if obs == row.ObservedStatus && health == row.HealthStatus && !flag {
			same = append(same, row.ID)
			continue
		}
		u := ports.RowUpdate{ID: row.ID, Patch: contracts.Patch{
			ObservedStatus: contracts.Some(obs),
			HealthStatus:   contracts.Some(health),
			ObservedAt:     contracts.Some(now),
		}}
		if flag {
			u.Cond.ErrorInfoNull = true
			u.Patch.ErrorInfo = contracts.Some(containerWithoutVolume(now))
		}
		changed = append(changed, u)
	}
	// SPEC 4.1: the error_info carries the row's operation and error_count.
	for i := range changed {
		if info := changed[i].Patch.ErrorInfo.V; info != nil {
			for j := range rows {
				if rows[j].ID == changed[i].ID {
					info.Operation, info.ErrorCount = rows[j].Operation, rows[j].ErrorCount
				}
			}
		}
	}
	if len(changed) > 0 {
		if err := c.deps.Store.UpdateMany(ctx, w, changed); err != nil {
			return fmt.Errorf("health monitor: write %d observations: %w", len(changed), err)
		}
	}
	if err := c.deps.Store.MarkObserved(ctx, w, same, now); err != nil {
		return fmt.Errorf("health monitor: mark %d rows observed: %w", len(same), err)
	}
	return nil
}
