package acme

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// forwardChanges is the EventListener (SPEC 4.6), run by the leader only
// so that each change is published by exactly one instance: it drains the
// change feed and republishes each notification on workspace:{id}. When
// the feed is (re)opened, notifications sent meanwhile are lost, so it
// first publishes the current state of every workspace changed since it
// last heard the feed (all of them, for a new leader, which cannot know
// what its predecessor forwarded).
//
// A change that leaves a healthy, idle workspace away from what its user
// wants also brings the next observation and reconcile pass forward: a
// request is acted on within a second rather than at the idle period. It
// is a hint (C2): without it, the adaptive periods still converge.
func (c *coordinator) forwardChanges(ctx context.Context) error {
	t := c.term
	if t.listener != nil {
		changes, err := t.listener.Poll(ctx)
		if err == nil {
			t.heard = c.now()
			c.publish(ctx, changes)
			return nil
		}
		c.log.Warn("change feed lost; listening again", "err", err)
		_ = t.listener.Close()
		t.listener = nil
	}
	l, err := c.deps.Feed.Listen(ctx)
	if err != nil {
		return fmt.Errorf("event listener: listen: %w", err)
	}
	t.listener = l
	since := t.heard
	rows, err := c.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		// Listening again next tick republishes from the same point.
		_ = l.Close()
		t.listener = nil
		return fmt.Errorf("event listener: read workspaces changed since %s: %w", since.Format(time.RFC3339), err)
	}
	now := c.now()
	var missed []ports.Change
	for i := range rows {
		if !rows[i].UpdatedAt.Before(since) {
			missed = append(missed, ports.ChangeOf(&rows[i], now))
		}
	}
	t.heard = now
	c.publish(ctx, missed)
	return nil
}

// publish sends each change on its workspace's channel (at most once: a
// failed publish is logged, SSE clients resynchronise through GET) and
// notes whether one asks for a reconcile pass now.
func (c *coordinator) publish(ctx context.Context, changes []ports.Change) {
	for i := range changes {
		ch := &changes[i]
		payload, err := json.Marshal(ch)
		if err != nil {
			c.log.Error("encode change", "workspace", ch.WorkspaceID, "err", err)
			continue
		}
		if err := c.deps.Bus.Publish(ctx, contracts.WorkspaceChannel(ch.WorkspaceID), string(payload)); err != nil {
			c.log.Warn("publish change", "workspace", ch.WorkspaceID, "err", err)
		}
		if !ch.Deleted && ch.HealthStatus == contracts.HealthOK && ch.Operation == contracts.OpNone &&
			ch.ObservedStatus != contracts.ObservedDeleted && string(ch.ObservedStatus) != string(ch.DesiredState) {
			now := c.now()
			c.term.observeAt, c.term.reconcileAt = now, now
		}
	}
}
