package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// gcTick is one Archive GC pass (SPEC 4.5). It lists the bucket first and
// loads the protection set second, so an archive committed in between is
// seen as protected. A failed listing or query skips the pass; a failed
// delete skips that object.
func (c *Coordinator) gcTick(ctx context.Context, now time.Time) error {
	objs, err := c.deps.Objects.List(ctx, contracts.ArchivePrefix)
	if err != nil {
		return fmt.Errorf("list archives: %w", err)
	}
	rows, err := c.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return fmt.Errorf("load protection set: %w", err)
	}
	byID := make(map[string]*contracts.Workspace, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for _, obj := range decide.GCObjects(objs) {
		if err := c.gcOne(ctx, obj, byID, now); err != nil {
			if fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
				return err
			}
			c.log.Warn("gc skipped object", "key", obj.Key, "err", err)
		}
	}
	return nil
}

// gcOne carries out the GC's decision for one object (decide.GC): it reads
// the object's orphan timer, then performs the decision's steps in order,
// each deletion after a lease re-check, deciding nothing itself.
func (c *Coordinator) gcOne(ctx context.Context, obj decide.GCObject, byID map[string]*contracts.Workspace, now time.Time) error {
	d := c.deps
	in := decide.GCInput{Object: obj, Now: now}
	if id, _, ok := contracts.ParseArchiveKey(obj.Key); ok {
		in.Row = byID[id]
	}
	var err error
	in.Timer, in.TimerSet, err = d.Bus.Get(ctx, contracts.OrphanTimerKey(obj.Key))
	if err != nil {
		return fmt.Errorf("read orphan timer: %w", err)
	}
	for _, s := range decide.GC(in).Steps {
		switch s.Kind {
		case decide.GCDoClearTimer:
			err = d.Bus.Del(ctx, s.Key)
		case decide.GCDoStartTimer:
			_, err = d.Bus.SetNX(ctx, s.Key, s.Value, 0)
		case decide.GCDoCheckLease:
			err = c.checkLease(ctx)
		case decide.GCDoDelete:
			err = d.Objects.Delete(ctx, s.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
