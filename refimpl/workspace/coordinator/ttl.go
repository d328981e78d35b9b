package coordinator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// ttlTick is one TTL Manager pass (SPEC 4.4). It writes nothing itself:
// desired-state changes go through the API service layer, conditioned on
// the desired state read.
func (c *Coordinator) ttlTick(ctx context.Context, now time.Time) error {
	// The candidates are read through a cursor. Those no rule can select
	// whatever the activity keys say (decide.TTLDue: touched within
	// their TTL, or with a desired state the rule leaves alone) are
	// passed over there, so the keys are read only where the decision
	// depends on them. The others go into a buffer reused from pass to
	// pass: the activity reads and the API's writes come after the scan.
	rows := c.scratch.ttl[:0]
	defer func() { c.scratch.ttl = rows[:0] }()
	err := c.deps.Store.Scan(ctx, contracts.FilterTTL, func(w *contracts.Workspace) {
		if !decide.TTLDue(w, now) {
			return
		}
		rows = append(rows, *w)
		// The rule reads neither pointer column; keep nothing of the
		// cursor's buffers.
		rows[len(rows)-1].HomeCtx, rows[len(rows)-1].ErrorInfo = nil, nil
	})
	if err != nil {
		return fmt.Errorf("list ttl candidates: %w", err)
	}
	for i := range rows {
		w := &rows[i]
		var act contracts.Activity
		if decide.TTLNeedsActivity(w) {
			act, err = c.activity(ctx, w.ID)
			if err != nil {
				if fatal(err) {
					return err
				}
				// Unknown activity: never stop a workspace on a guess.
				c.log.Warn("activity unavailable", "workspace", w.ID, "err", err)
				continue
			}
		}
		to, ok := decide.TTLDecision(w, act, now)
		if !ok {
			continue
		}
		if _, err := c.api.SetDesiredFrom(ctx, w.ID, w.DesiredState, to, contracts.CompTTLManager); err != nil {
			if fatal(err) || deposed(err) {
				return err
			}
			c.log.Warn("ttl change failed", "workspace", w.ID, "err", err)
		}
	}
	return nil
}

// activity reads the activity keys of workspace id that the standby rule
// needs: the connection count, then the idle timer only where it matters
// (decide.TTLNeedsIdleTimer).
func (c *Coordinator) activity(ctx context.Context, id string) (contracts.Activity, error) {
	var a contracts.Activity
	v, ok, err := c.deps.Bus.Get(ctx, contracts.ConnKey(id))
	if err != nil {
		return a, fmt.Errorf("read %s: %w", contracts.ConnKey(id), err)
	}
	if ok {
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			return a, fmt.Errorf("read %s: %q is not a count", contracts.ConnKey(id), v)
		}
		a.Connections = n
	}
	if !decide.TTLNeedsIdleTimer(a) {
		return a, nil
	}
	_, a.IdleTimerSet, err = c.deps.Bus.Get(ctx, contracts.IdleTimerKey(id))
	if err != nil {
		return a, fmt.Errorf("read %s: %w", contracts.IdleTimerKey(id), err)
	}
	return a, nil
}
