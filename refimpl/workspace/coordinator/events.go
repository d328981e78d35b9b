package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// events is the EventListener (SPEC 4.6): it republishes every change
// notification to the bus channel workspace:{id}. When it (re)starts
// listening, notifications sent meanwhile are lost, so it first publishes
// the current state of every workspace changed since its last event.
func (c *Coordinator) events(ctx context.Context, now time.Time) error {
	if c.listener == nil {
		l, err := c.deps.Feed.Listen(ctx)
		if err != nil {
			return fmt.Errorf("listen for changes: %w", err)
		}
		c.listener = l
		if !c.lastEventAt.IsZero() {
			if err := c.resync(ctx, now); err != nil {
				return err
			}
		}
		c.lastEventAt = now
	}
	changes, err := c.listener.Poll(ctx)
	if err != nil {
		_ = c.listener.Close()
		c.listener = nil
		return fmt.Errorf("poll changes: %w", err)
	}
	for i := range changes {
		if err := c.publishChange(ctx, changes[i]); err != nil {
			return err
		}
		if decide.Diverges(&changes[i]) {
			// A hint (C2): a change that leaves a workspace short of its
			// desired state brings the reconciler forward.
			c.nextReconcile = now
		}
		if changes[i].At.After(c.lastEventAt) {
			c.lastEventAt = changes[i].At
		}
	}
	return nil
}

func (c *Coordinator) resync(ctx context.Context, now time.Time) error {
	rows, err := c.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return fmt.Errorf("resynchronise events: %w", err)
	}
	for i := range rows {
		if !decide.Resyncs(&rows[i], c.lastEventAt) {
			continue
		}
		if err := c.publishChange(ctx, ports.ChangeOf(&rows[i], now)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Coordinator) publishChange(ctx context.Context, ch ports.Change) error {
	payload, err := ch.AppendJSON(c.scratch.payload[:0])
	c.scratch.payload = payload
	if err != nil {
		return fmt.Errorf("encode change of %s: %w", ch.WorkspaceID, err)
	}
	if err := c.deps.Bus.Publish(ctx, contracts.WorkspaceChannel(ch.WorkspaceID), string(payload)); err != nil {
		return fmt.Errorf("publish change of %s: %w", ch.WorkspaceID, err)
	}
	return nil
}
