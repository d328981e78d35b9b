package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
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
	// Pair each archive with its .meta; a .meta alone is an orphan too.
	type pair struct{ archive, meta bool }
	pairs := map[string]*pair{}
	for _, o := range objs {
		key := o.Key
		isMeta := contracts.IsMetaKey(key)
		if isMeta {
			key = contracts.ArchiveOfMeta(key)
		}
		p := pairs[key]
		if p == nil {
			p = &pair{}
			pairs[key] = p
		}
		if isMeta {
			p.meta = true
		} else {
			p.archive = true
		}
	}
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if err := c.gcOne(ctx, key, pairs[key].archive, pairs[key].meta, byID, now); err != nil {
			if fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
				return err
			}
			c.log.Warn("gc skipped object", "key", key, "err", err)
		}
	}
	return nil
}

func (c *Coordinator) gcOne(ctx context.Context, key string, hasArchive, hasMeta bool, byID map[string]*contracts.Workspace, now time.Time) error {
	d := c.deps
	var row *contracts.Workspace
	if id, _, ok := contracts.ParseArchiveKey(key); ok {
		row = byID[id]
	}
	protected := decide.Protected(row, key)
	timer := contracts.OrphanTimerKey(key)
	v, set, err := d.Bus.Get(ctx, timer)
	if err != nil {
		return fmt.Errorf("read orphan timer: %w", err)
	}
	var first time.Time
	if set {
		sec, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			set = false // an unreadable timer starts again
		} else {
			first = time.Unix(sec, 0).UTC()
		}
	}
	act := decide.GCDecide(protected, first, set, now)
	switch act {
	case decide.GCClearTimer:
		if set {
			return d.Bus.Del(ctx, timer)
		}
	case decide.GCStartTimer:
		_, err := d.Bus.SetNX(ctx, timer, strconv.FormatInt(now.Unix(), 10), 0)
		return err
	case decide.GCDelete:
		// SPEC 3.1: the lock is checked again immediately before each
		// object deletion; a failed check stops the pass (and every
		// component) at once.
		for _, k := range []string{key, contracts.MetaKey(key)} {
			if (k == key && !hasArchive) || (k != key && !hasMeta) {
				continue
			}
			if err := c.checkLease(ctx); err != nil {
				return err
			}
			if err := d.Objects.Delete(ctx, k); err != nil {
				return err
			}
		}
		return d.Bus.Del(ctx, timer)
	}
	return nil
}
