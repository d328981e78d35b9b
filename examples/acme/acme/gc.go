package acme

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// timerTTL is an orphan timer's expiry on the bus: none, since SPEC 4.5
// says the key must not expire by itself (a timer that lapsed would start
// the 2 h again).
const timerTTL time.Duration = 0

// collectGarbage is one Archive GC cycle (SPEC 4.5, C9): list the bucket
// first, then read the protection set from the DB (so an archive
// committed in between is seen protected), then for each archive clear,
// start or honour its orphan timer. A failed listing or read skips the
// cycle; a failed delete skips that object.
func (c *coordinator) collectGarbage(ctx context.Context) error {
	objs, err := c.deps.Objects.List(ctx, contracts.ArchivePrefix)
	if err != nil {
		return fmt.Errorf("archive GC: list %s: %w", contracts.ArchivePrefix, err)
	}
	rows, err := c.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return fmt.Errorf("archive GC: read the protection set: %w", err)
	}
	byID := make(map[string]*contracts.Workspace, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	// Pair each archive with its .meta: one decision per archive, and a
	// .meta without its archive is an orphan too.
	var archives []string
	present := map[string][]string{}
	for _, o := range objs {
		archive := strings.TrimSuffix(o.Key, ".meta")
		if _, seen := present[archive]; !seen {
			archives = append(archives, archive)
		}
		present[archive] = append(present[archive], o.Key)
	}
	now := c.now()
	for _, archive := range archives {
		id, _, ok := contracts.ParseArchiveKey(archive)
		if !ok {
			continue // not of acme's making: not acme's to delete
		}
		if err := c.judgeOrphan(ctx, archive, present[archive], byID[id], now); err != nil {
			if deposed(err) {
				return err
			}
			c.log.Warn("archive GC: object skipped", "archive", archive, "err", err)
		}
	}
	return nil
}

// judgeOrphan applies the orphan timer to one archive and its .meta.
func (c *coordinator) judgeOrphan(ctx context.Context, archive string, keys []string, w *contracts.Workspace, now time.Time) error {
	timer := contracts.OrphanTimerKey(archive)
	bus := c.deps.Bus
	if protected(w, archive) {
		if err := bus.Del(ctx, timer); err != nil {
			return fmt.Errorf("clear orphan timer: %w", err)
		}
		return nil
	}
	stamp := strconv.FormatInt(now.UnixNano(), 10)
	first, err := bus.SetNX(ctx, timer, stamp, timerTTL)
	if err != nil || first {
		return err // first sighting: the timer starts now
	}
	v, ok, err := bus.Get(ctx, timer)
	if err != nil || !ok {
		return err // gone meanwhile: it starts again next cycle
	}
	since, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		// Not a timer acme wrote: restart it rather than trust it.
		return bus.Set(ctx, timer, stamp, timerTTL)
	}
	if now.Sub(time.Unix(0, since)) < orphanDelay {
		return nil
	}
	// The archive first, its .meta last: a .meta alone is still found
	// (and deleted) by the next cycle.
	for _, k := range []string{archive, contracts.MetaKey(archive)} {
		if !slices.Contains(keys, k) {
			continue
		}
		if err := c.checkLease(ctx); err != nil {
			return err
		}
		if err := c.deps.Objects.Delete(ctx, k); err != nil {
			return fmt.Errorf("delete %s: %w", k, err)
		}
	}
	if err := bus.Del(ctx, timer); err != nil {
		return fmt.Errorf("clear orphan timer: %w", err)
	}
	return nil
}
