package acme

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wsconverge/converge/contracts"
)

// expireTTLs is one TTL Manager tick (SPEC 4.4). It writes nothing itself:
// the desired-state changes go through the API service layer. A workspace
// whose activity keys cannot be read is skipped: never stop a workspace on
// a guess.
func (c *coordinator) expireTTLs(ctx context.Context) error {
	rows, err := c.deps.Store.List(ctx, contracts.FilterTTL)
	if err != nil {
		return fmt.Errorf("TTL manager: list candidates: %w", err)
	}
	now := c.now()
	for i := range rows {
		w := &rows[i]
		// Rule out most rows before touching the bus.
		if _, ok := ttlTarget(w, activity{}, now); !ok {
			continue
		}
		act := activity{}
		if w.DesiredState == contracts.DesiredRunning {
			if act, err = c.activity(ctx, w.ID); err != nil {
				c.log.Warn("TTL: activity unknown, workspace skipped", "workspace", w.ID, "err", err)
				continue
			}
		}
		to, ok := ttlTarget(w, act, now)
		if !ok {
			continue
		}
		if err := c.svc.lowerByTTL(ctx, c.writer(contracts.CompAPI), w, to); err != nil {
			if deposed(err) {
				return err
			}
			c.log.Warn("TTL change skipped", "workspace", w.ID, "err", err)
		}
	}
	return nil
}

// activity reads the proxy's keys for workspace id: open connections and
// the idle timer.
func (c *coordinator) activity(ctx context.Context, id string) (activity, error) {
	var a activity
	v, ok, err := c.deps.Bus.Get(ctx, contracts.ConnKey(id))
	if err != nil {
		return a, fmt.Errorf("read %s: %w", contracts.ConnKey(id), err)
	}
	if ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return a, fmt.Errorf("read %s: value %q is not a count", contracts.ConnKey(id), v)
		}
		a.connections = n
	}
	if _, a.idleTimer, err = c.deps.Bus.Get(ctx, contracts.IdleTimerKey(id)); err != nil {
		return a, fmt.Errorf("read %s: %w", contracts.IdleTimerKey(id), err)
	}
	return a, nil
}
