package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// reconcileTick is one StateReconciler pass (SPEC 4.2) over the reconcile
// targets, in id order. It decides from the DB alone (C1).
func (c *Coordinator) reconcileTick(ctx context.Context, now time.Time) error {
	rows, err := c.deps.Store.List(ctx, contracts.FilterReconcile)
	if err != nil {
		return fmt.Errorf("list reconcile targets: %w", err)
	}
	var fleet decide.FleetSummary
	for i := range rows {
		w := &rows[i]
		if err := c.reconcileOne(ctx, w, now); err != nil {
			if fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
				return err
			}
			// A failure for one workspace skips it for this tick.
			c.log.Warn("reconcile failed", "workspace", w.ID, "err", err)
		}
		fleet.Add(w)
	}
	c.fleet = fleet
	return nil
}

// reconcileOne carries out the StateReconciler's decision for w
// (decide.Reconcile): one loop that checks the lease, acts and records,
// deciding nothing itself.
func (c *Coordinator) reconcileOne(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	d := decide.Reconcile(decide.Input{Row: w, Now: now, LastInvoked: c.invokedFor(w), NewID: c.newID})
	invoked := false // the operation's calls began: a failed one is recorded
	for {
		var answer string
		for _, a := range d.Actions {
			var err error
			var stop bool
			switch a.Kind {
			case decide.DoTouch:
				err = c.api.Touch(ctx, w.ID, contracts.CompStateReconciler)
			case decide.DoWrite:
				stop, err = c.record(ctx, w, a.Write, answer, now)
			case decide.DoInvoke:
				c.invoked[w.ID] = invocation{op: w.Operation, started: w.OpStartedAt, at: now}
				invoked = true
			case decide.DoCheckLease:
				err = c.checkLease(ctx)
			case decide.DoCall:
				answer, err = c.call(ctx, a.Call)
			}
			if err != nil {
				if invoked {
					return c.failed(ctx, w, d.Failure, err)
				}
				return err
			}
			if stop {
				return nil
			}
		}
		if !d.Again {
			return nil
		}
		d = decide.Continue(w, now, c.newID)
	}
}

// record makes write, with what answer it records, and reports whether
// the decision ends here: a write that settles the operation and does not
// apply ends it; one that applies ends this leader's invocation and
// publishes monitor:trigger.
func (c *Coordinator) record(ctx context.Context, w *contracts.Workspace, write decide.Write, answer string, now time.Time) (stop bool, err error) {
	ok, err := c.write(ctx, w, write.Cond, write.PatchFor(answer), now)
	switch {
	case err != nil:
		return true, err
	case !ok && write.Required:
		// Only the ARCHIVING walk's writes are required.
		return true, fmt.Errorf("archive %s: operation changed under us", w.ID)
	case !ok && write.Settles:
		return true, nil
	case ok && write.Settles:
		delete(c.invoked, w.ID)
		c.triggerMonitor(ctx, w.ID)
	}
	return false, nil
}

// call invokes one actuator call and returns its answer (a restore
// marker, an archive key, or "").
func (c *Coordinator) call(ctx context.Context, call decide.Call) (string, error) {
	d, id := c.deps, call.Workspace
	switch call.Port {
	case decide.CallProvision:
		return "", d.Storage.Provision(ctx, id)
	case decide.CallRestore:
		return d.Storage.Restore(ctx, id, call.ArchiveKey)
	case decide.CallArchive:
		return d.Storage.Archive(ctx, id, call.OpID)
	case decide.CallStart:
		return "", d.Instances.Start(ctx, id, call.Image)
	case decide.CallDeleteInstance:
		return "", d.Instances.Delete(ctx, id)
	case decide.CallDeleteVolume:
		return "", d.Storage.DeleteVolume(ctx, id)
	}
	return "", fmt.Errorf("unknown actuator call %s", call.Port)
}

// failed handles an error met while carrying out the operation's calls:
// an actuator's failure is recorded as f says (SPEC 4.2.4, f.Record);
// anything else (a lost lease, a dead process, a failed write) ends the
// tick for w.
func (c *Coordinator) failed(ctx context.Context, w *contracts.Workspace, f decide.Failure, cause error) error {
	if fatal(cause) || deposed(cause) || errors.Is(cause, errStepDown) {
		return cause
	}
	write, ok := f.Record(cause)
	if !ok {
		return cause
	}
	if _, err := c.record(ctx, w, write, "", f.At); err != nil {
		return err
	}
	c.log.Info("actuator failed", "workspace", w.ID, "operation", f.Operation, "code", contracts.CodeOf(cause), "terminal", write.Settles)
	return nil
}

// invocation is when this leader invoked the actuator calls of one
// operation (its claim's operation and op_started_at).
type invocation struct {
	op      contracts.Operation
	started time.Time
	at      time.Time
}

// invokedFor is when this leader last invoked the actuator calls of w's
// operation in progress, or zero: an invocation recorded for another
// operation (or another claim of the same one) does not count.
func (c *Coordinator) invokedFor(w *contracts.Workspace) time.Time {
	inv, ok := c.invoked[w.ID]
	if !ok || inv.op != w.Operation || !inv.started.Equal(w.OpStartedAt) {
		return time.Time{}
	}
	return inv.at
}

// write applies p to w under cond as the StateReconciler, and mirrors it
// into the local copy when applied.
func (c *Coordinator) write(ctx context.Context, w *contracts.Workspace, cond contracts.Cond, p contracts.Patch, now time.Time) (bool, error) {
	ok, err := c.deps.Store.Update(ctx, c.writer(contracts.CompStateReconciler), w.ID, cond, p)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", w.ID, err)
	}
	if ok {
		p.Apply(w, now)
	}
	return ok, nil
}

// triggerMonitor asks the HealthMonitor for a pass now, publishing id on
// monitor:trigger: a hint only (C2), so a failure is ignored.
func (c *Coordinator) triggerMonitor(ctx context.Context, id string) {
	_ = c.deps.Bus.Publish(ctx, contracts.MonitorTriggerChannel, id)
}
