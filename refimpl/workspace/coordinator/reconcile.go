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

func (c *Coordinator) reconcileOne(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	s := decide.ReconcileStep(w, now, c.invokedFor(w))
	switch s.Kind {
	case decide.StepClaim:
		return c.claim(ctx, w, s.Op, now)
	case decide.StepComplete:
		return c.complete(ctx, w, now)
	case decide.StepTimeout:
		return c.enterError(ctx, w, decide.TimeoutInfo(w, now), now)
	case decide.StepEnterError:
		return c.enterError(ctx, w, decide.EntryInfo(w, now), now)
	case decide.StepExecute:
		return c.execute(ctx, w, now)
	}
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

// opCond conditions a write on the operation still being the one we act on.
func opCond(op contracts.Operation) contracts.Cond {
	return contracts.Cond{Operation: contracts.Some(op)}
}

func (c *Coordinator) trigger_(ctx context.Context, id string) {
	// A hint only (C2): failures are ignored.
	_ = c.deps.Bus.Publish(ctx, contracts.MonitorTriggerChannel, id)
}

func (c *Coordinator) claim(ctx context.Context, w *contracts.Workspace, op contracts.Operation, now time.Time) error {
	p := decide.ClaimPatch(w, op, now, c.deps.IDs.NewID())
	ok, err := c.write(ctx, w, decide.ClaimCond(op), p, now)
	if err != nil || !ok {
		return err
	}
	delete(c.invoked, w.ID)
	c.trigger_(ctx, w.ID)
	return c.execute(ctx, w, now)
}

func (c *Coordinator) complete(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	op := w.Operation
	if decide.StampsLastAccess(op) {
		if err := c.api.Touch(ctx, w.ID, contracts.CompStateReconciler); err != nil {
			return err
		}
	}
	ok, err := c.write(ctx, w, opCond(op), decide.CompletePatch(w), now)
	if err != nil || !ok {
		return err
	}
	delete(c.invoked, w.ID)
	c.trigger_(ctx, w.ID)
	return nil
}

func (c *Coordinator) enterError(ctx context.Context, w *contracts.Workspace, info contracts.ErrorInfo, now time.Time) error {
	ok, err := c.write(ctx, w, opCond(w.Operation), decide.ErrorEntryPatch(w, info), now)
	if err != nil || !ok {
		return err
	}
	delete(c.invoked, w.ID)
	c.trigger_(ctx, w.ID)
	return nil
}

// execute invokes the operation's actuator calls (SPEC 4.2.2), re-checking
// the lock before each. A failed call is recorded as a retryable or
// terminal error (4.2.4).
func (c *Coordinator) execute(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	c.invoked[w.ID] = invocation{op: w.Operation, started: w.OpStartedAt, at: now}
	err := c.actuate(ctx, w, now)
	if err == nil || fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
		return err
	}
	var pe *contracts.ProviderError
	if !errors.As(err, &pe) && !errors.Is(err, contracts.ErrUnavailable) {
		// Not an actuator failure (a DB write failed): skip this tick.
		return err
	}
	return c.recordFailure(ctx, w, err, now)
}

func (c *Coordinator) recordFailure(ctx context.Context, w *contracts.Workspace, cause error, now time.Time) error {
	code := contracts.CodeOf(cause)
	var pctx map[string]any
	var pe *contracts.ProviderError
	if errors.As(cause, &pe) && pe.Context != nil {
		pctx = make(map[string]any, len(pe.Context))
		for k, v := range pe.Context {
			pctx[k] = v
		}
	}
	op := w.Operation
	p, terminal := decide.FailurePatch(w, code, cause.Error(), pctx, now)
	ok, err := c.write(ctx, w, opCond(op), p, now)
	if err != nil {
		return err
	}
	if ok && terminal {
		delete(c.invoked, w.ID)
		c.trigger_(ctx, w.ID)
	}
	c.log.Info("actuator failed", "workspace", w.ID, "operation", op, "code", code, "terminal", terminal)
	return nil
}

func (c *Coordinator) actuate(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	d := c.deps
	id := w.ID
	switch w.Operation {
	case contracts.OpProvisioning:
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Storage.Provision(ctx, id); err != nil {
			return err
		}
	case contracts.OpRestoring:
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Storage.Provision(ctx, id); err != nil {
			return err
		}
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		marker, err := d.Storage.Restore(ctx, id, w.ArchiveKey)
		if err != nil {
			return err
		}
		p := contracts.Patch{HomeCtx: contracts.Some(&contracts.HomeCtx{RestoreMarker: marker})}
		if _, err := c.write(ctx, w, opCond(contracts.OpRestoring), p, now); err != nil {
			return err
		}
	case contracts.OpStarting:
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Instances.Start(ctx, id, w.ImageRef); err != nil {
			return err
		}
	case contracts.OpStopping:
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Instances.Delete(ctx, id); err != nil {
			return err
		}
	case contracts.OpArchiving:
		if err := c.archive(ctx, w, now); err != nil {
			return err
		}
	case contracts.OpDeleting:
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Instances.Delete(ctx, id); err != nil {
			return err
		}
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := d.Storage.DeleteVolume(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// archive walks ARCHIVING from wherever it stands (SPEC 4.2.2 and its
// resume rules): op_id committed first, then the archive, then archive_key,
// then the container (if any leftover) and only then the volume (C8).
func (c *Coordinator) archive(ctx context.Context, w *contracts.Workspace, now time.Time) error {
	d := c.deps
	for {
		switch decide.NextArchiveAction(w) {
		case decide.ArchiveEnsureOpID:
			ok, err := c.write(ctx, w, opCond(contracts.OpArchiving), contracts.Patch{OpID: contracts.Some(d.IDs.NewID())}, now)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("archive %s: operation changed under us", w.ID)
			}
		case decide.ArchiveUpload:
			if err := c.checkLease(ctx); err != nil {
				return err
			}
			key, err := d.Storage.Archive(ctx, w.ID, w.OpID)
			if err != nil {
				return err
			}
			ok, err := c.write(ctx, w, opCond(contracts.OpArchiving), decide.ArchiveCommitPatch(key), now)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("archive %s: operation changed under us", w.ID)
			}
		case decide.ArchiveDeleteVolume:
			if err := c.checkLease(ctx); err != nil {
				return err
			}
			if err := d.Instances.Delete(ctx, w.ID); err != nil {
				return err
			}
			if err := c.checkLease(ctx); err != nil {
				return err
			}
			return d.Storage.DeleteVolume(ctx, w.ID)
		case decide.ArchiveAwait:
			return nil
		}
	}
}
