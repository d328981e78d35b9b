package acme

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// coordinator is one coordinator instance (SPEC 3): a standby that tries
// to take the leader lock, or the leader running the five components.
// Everything happens inside Step, one call at a time; nothing here starts
// a goroutine or reads a clock other than deps.Clock.
type coordinator struct {
	deps ports.Deps
	log  *slog.Logger
	svc  *service

	// lease is the held leader lock, nil while standing by.
	lease ports.Lease
	// term is the state of the current leadership, nil while standing by.
	term *term
	// failedAt is when an actuator call on a workspace last failed in this
	// instance, so that no retry comes sooner than retryInterval even if
	// recording the failure in the DB failed (SPEC 4.2.4). It outlives a
	// term: a failure is a fact whoever leads next, and a lock re-taken
	// after a release that failed may even be the same leadership.
	failedAt map[string]time.Time
}

// term is what a leader keeps in memory for as long as it leads; a new
// leadership starts from nothing but the DB (C2).
type term struct {
	epoch int64

	// When each component is next due.
	listenAt, observeAt, reconcileAt, ttlAt, gcAt time.Time
	// every is the adaptive period of the HealthMonitor and the
	// StateReconciler (SPEC 3), from the fleet as last read.
	every time.Duration

	// listener is the change feed (nil: to be (re)opened) and heard the
	// time of its last successful poll; triggers is the monitor:trigger
	// subscription (nil: to be made).
	listener ports.Listener
	heard    time.Time
	triggers ports.Subscription

	// invoked records, per workspace, the attempt whose actuator calls
	// this leader has made (SPEC 4.2.2, "Resuming"): after that it only
	// waits for the observation, the timeout, or the next retry.
	invoked map[string]attempt
}

// attempt identifies one attempt at an operation: the claim (operation and
// op_started_at) and the failure it retries, if any.
type attempt struct {
	op      contracts.Operation
	started time.Time
	retries time.Time
}

func attemptOf(w *contracts.Workspace) attempt {
	a := attempt{op: w.Operation, started: w.OpStartedAt}
	if w.ErrorInfo != nil && !w.ErrorInfo.IsTerminal {
		a.retries = w.ErrorInfo.OccurredAt
	}
	return a
}

// errDeposed marks errors that end this instance's leadership: the lock is
// gone, or a write was fenced because another leader has a newer epoch.
var errDeposed = errors.New("leadership lost")

func deposed(err error) bool {
	return errors.Is(err, errDeposed) || errors.Is(err, contracts.ErrFenced) || errors.Is(err, contracts.ErrNotLeader)
}

func (c *coordinator) now() time.Time { return c.deps.Clock.Now() }

// writer attributes a coordinator write to component comp, fenced by the
// leader epoch (SPEC 3.1).
func (c *coordinator) writer(comp contracts.Component) contracts.Writer {
	return contracts.Writer{Component: comp, Instance: c.deps.Instance, Epoch: c.term.epoch}
}

// IsLeader reports whether this instance believes it leads.
func (c *coordinator) IsLeader() bool { return c.lease != nil }

// Step runs everything due now and says when it next wants to run. It
// returns an error only when the instance cannot go on at all; a lost
// leadership or a failed component tick is not one (SPEC 3: a failed tick
// is skipped, a lost session gives up leadership and tries again).
func (c *coordinator) Step(ctx context.Context) (time.Time, error) {
	if err := c.checkLeadership(ctx); err != nil {
		c.log.Info("standing by", "why", err)
	}
	if c.term == nil {
		return c.now().Add(periodStandby), nil
	}
	next, err := c.lead(ctx)
	if err != nil && deposed(err) {
		c.log.Warn("deposed", "epoch", c.term.epoch, "err", err)
		c.resign(ctx)
		return c.now().Add(periodStandby), nil
	}
	return next, nil
}

// checkLeadership verifies a held lease (SPEC 3.1: every tick) or tries to
// acquire the lock.
func (c *coordinator) checkLeadership(ctx context.Context) error {
	if c.lease != nil {
		if err := c.lease.Check(ctx); err != nil {
			c.resign(ctx)
			return fmt.Errorf("lease check: %w", err)
		}
		return nil
	}
	lease, ok, err := c.deps.Leadership.TryAcquire(ctx, c.deps.Instance)
	switch {
	case err != nil:
		return fmt.Errorf("try to acquire the leader lock: %w", err)
	case !ok:
		return nil
	}
	now := c.now()
	c.lease = lease
	c.term = &term{
		epoch: lease.Epoch(),
		// Everything is due at once: a new leader trusts nothing it did
		// not read from the DB itself.
		listenAt: now, observeAt: now, reconcileAt: now, ttlAt: now, gcAt: now,
		every:   periodBusy,
		invoked: map[string]attempt{},
	}
	c.log.Info("leading", "epoch", c.term.epoch)
	return nil
}

// resign gives leadership up at once: the components stop, their
// subscriptions close, and the lock is released if the session still
// holds it (best effort: a dead session has released it already).
func (c *coordinator) resign(ctx context.Context) {
	if t := c.term; t != nil {
		if t.listener != nil {
			_ = t.listener.Close()
		}
		if t.triggers != nil {
			_ = t.triggers.Close()
		}
	}
	if c.lease != nil {
		_ = c.lease.Release(ctx)
	}
	c.lease, c.term = nil, nil
}

// lead runs each component that is due, in a fixed order, and returns
// when the next one is.
func (c *coordinator) lead(ctx context.Context) (time.Time, error) {
	t := c.term
	now := c.now()
	if !now.Before(t.listenAt) {
		if err := c.forwardChanges(ctx); err != nil {
			if deposed(err) {
				return time.Time{}, err
			}
			c.log.Warn("event listener tick skipped", "err", err)
		}
		t.listenAt = now.Add(periodListener)
	}
	if c.triggered(ctx) {
		t.observeAt, t.reconcileAt = now, now
	}
	if !now.Before(t.observeAt) {
		if err := c.observeAll(ctx); err != nil {
			if deposed(err) {
				return time.Time{}, err
			}
			c.log.Warn("health monitor tick skipped", "err", err)
		}
		t.observeAt = now.Add(t.every)
	}
	if !now.Before(t.reconcileAt) {
		every, err := c.reconcileAll(ctx)
		if err != nil {
			if deposed(err) {
				return time.Time{}, err
			}
			c.log.Warn("state reconciler tick skipped", "err", err)
			every = periodBusy
		}
		t.every = every
		t.reconcileAt = now.Add(every)
		if t.observeAt.After(t.reconcileAt) {
			t.observeAt = t.reconcileAt
		}
	}
	if !now.Before(t.ttlAt) {
		if err := c.expireTTLs(ctx); err != nil {
			if deposed(err) {
				return time.Time{}, err
			}
			c.log.Warn("TTL manager tick skipped", "err", err)
		}
		t.ttlAt = now.Add(periodTTL)
	}
	if !now.Before(t.gcAt) {
		if err := c.collectGarbage(ctx); err != nil {
			if deposed(err) {
				return time.Time{}, err
			}
			c.log.Warn("archive GC tick skipped", "err", err)
		}
		t.gcAt = now.Add(periodGC)
	}
	next := t.listenAt
	for _, at := range []time.Time{t.observeAt, t.reconcileAt, t.ttlAt, t.gcAt} {
		if at.Before(next) {
			next = at
		}
	}
	return next, nil
}

// triggered drains the monitor:trigger subscription (subscribing first if
// needed) and reports whether anything asked for an observation now. It
// is a hint (C2): a lost message only delays the next pass to its period.
func (c *coordinator) triggered(ctx context.Context) bool {
	t := c.term
	if t.triggers == nil {
		sub, err := c.deps.Bus.Subscribe(ctx, contracts.MonitorTriggerChannel)
		if err != nil {
			c.log.Warn("subscribe to monitor triggers", "err", err)
			return false
		}
		t.triggers = sub
	}
	return len(t.triggers.Poll()) > 0
}

// trigger asks the HealthMonitor to observe workspace id now (SPEC 3).
func (c *coordinator) trigger(ctx context.Context, id string) {
	if err := c.deps.Bus.Publish(ctx, contracts.MonitorTriggerChannel, id); err != nil {
		c.log.Warn("publish monitor trigger", "workspace", id, "err", err)
	}
}

// checkLease re-checks the leader lock right before a side effect (SPEC
// 3.1).
func (c *coordinator) checkLease(ctx context.Context) error {
	if err := c.lease.Check(ctx); err != nil {
		return fmt.Errorf("%w: %w", errDeposed, err)
	}
	return nil
}

// Close stops the instance cleanly, releasing the lock.
func (c *coordinator) Close(ctx context.Context) error {
	c.resign(ctx)
	return nil
}
