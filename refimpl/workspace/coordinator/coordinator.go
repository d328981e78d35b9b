package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// Options tune a coordinator. The zero value is the reference behaviour.
type Options struct {
	// Logger receives the coordinator's logs (default: discarded).
	Logger *slog.Logger
	// ElectionRetry is how often a non-leader tries to acquire the lock
	// (default 1 s).
	ElectionRetry time.Duration
}

// Coordinator is one coordinator instance.
type Coordinator struct {
	deps ports.Deps
	opts Options
	log  *slog.Logger
	api  *api.Service
	// newID draws an op_id (deps.IDs.NewID, taken once).
	newID func() string

	lease  ports.Lease
	epoch  int64
	leader bool

	// monitorTrigger is the subscription to monitor:trigger (nil without one).
	monitorTrigger ports.Subscription
	listener       ports.Listener
	// lastEventAt is the time of the last change the EventListener
	// republished, for resynchronising after a lost feed.
	lastEventAt time.Time
	// invoked is when this leader last invoked each workspace's
	// operation's actuator calls (SPEC 4.2.2, "Resuming"), for the
	// operation it invoked them for: a claim, a completion or an ERROR
	// entry whose answer was lost leaves an entry behind that must not
	// pass for an invocation of the next operation.
	invoked map[string]invocation

	nextHealth, nextReconcile, nextTTL, nextGC time.Time
	fleet                                      decide.FleetSummary

	scratch struct {
		updates  []ports.RowUpdate
		observed []string
		ttl      []contracts.Workspace
		payload  []byte // a change's JSON, before it is published
	}
}

// New builds a coordinator instance on deps.
func New(deps ports.Deps, opts Options) *Coordinator {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.ElectionRetry == 0 {
		opts.ElectionRetry = time.Second
	}
	c := &Coordinator{deps: deps, opts: opts, log: opts.Logger.With("instance", deps.Instance), newID: deps.IDs.NewID}
	c.api = api.New(deps).WithEpoch(func() int64 { return c.epoch })
	return c
}

var _ ports.Coordinator = (*Coordinator)(nil)

// LockWatcher is an optional capability of a Leadership in a real-time
// runtime: Vacated signals that the lock may have become free since the
// last TryAcquire that found it held, so a standby can try again at once
// instead of at its next election retry. A signal is a hint; TryAcquire
// decides. (It is no port: the simulator decides when instances run.)
type LockWatcher interface {
	Vacated() <-chan struct{}
}

// Wake is signalled, on a leader, when the change feed has notifications
// waiting (nil while not listening): a runner that also waits on it
// republishes events at once instead of at the next poll. On a standby it
// is the Leadership's vacancy signal (LockWatcher), when it has one,
// so the standby tries the lock the moment the leader's session ends. The
// channel may change after every Step; take it afresh each time.
func (c *Coordinator) Wake() <-chan struct{} {
	if !c.leader {
		// A standby wakes when the lock may have been vacated.
		if w, ok := c.deps.Leadership.(LockWatcher); ok {
			return w.Vacated()
		}
		return nil
	}
	if c.listener == nil {
		return nil
	}
	return c.listener.Ready()
}

var _ ports.Quieter = (*Coordinator)(nil)

// Quiet describes the steps this instance takes while nothing happens
// (ports.Quieter): a standby tries the lock every ElectionRetry; a leader
// checks its lease, drains its listener and polls the monitor trigger
// every EventPoll until its first component is due. A leader without a
// listener has none: its next step listens again.
func (c *Coordinator) Quiet() (ports.Quiet, bool) {
	if !c.leader {
		return ports.Quiet{Every: c.opts.ElectionRetry, Calls: []ports.QuietCall{{Acquire: c.deps.Instance}}}, true
	}
	if c.listener == nil {
		return ports.Quiet{}, false
	}
	calls := []ports.QuietCall{{Lease: c.lease}, {Listener: c.listener}}
	if c.monitorTrigger != nil {
		calls = append(calls, ports.QuietCall{Subscription: c.monitorTrigger})
	}
	due := c.nextHealth
	for _, t := range [...]time.Time{c.nextReconcile, c.nextTTL, c.nextGC} {
		if t.Before(due) {
			due = t
		}
	}
	return ports.Quiet{Until: due, Every: EventPoll, Calls: calls}, true
}

// IsLeader reports whether the instance believes it leads.
func (c *Coordinator) IsLeader() bool { return c.leader }

// Epoch is the fencing epoch of the current leadership (0 when not leading).
func (c *Coordinator) Epoch() int64 { return c.epoch }

func (c *Coordinator) writer(comp contracts.Component) contracts.Writer {
	return contracts.Writer{Component: comp, Instance: c.deps.Instance, Epoch: c.epoch}
}

// fatal reports whether err means this process is dead.
func fatal(err error) bool { return errors.Is(err, contracts.ErrCrashed) }

// deposed reports whether err means leadership is lost.
func deposed(err error) bool {
	return errors.Is(err, contracts.ErrFenced) || errors.Is(err, contracts.ErrNotLeader)
}

// errStepDown aborts a tick because leadership was lost.
var errStepDown = errors.New("leadership lost")

// Step runs everything due now and returns the next time it wants to run.
func (c *Coordinator) Step(ctx context.Context) (time.Time, error) {
	now := c.deps.Clock.Now()
	if !c.leader {
		if err := c.acquire(ctx, now); err != nil {
			if fatal(err) {
				return time.Time{}, err
			}
			c.log.Warn("leader election failed", "err", err)
		}
		if !c.leader {
			return now.Add(c.opts.ElectionRetry), nil
		}
	} else if err := c.lease.Check(ctx); err != nil {
		if fatal(err) {
			return time.Time{}, err
		}
		c.stepDown(ctx, "lock check failed: "+err.Error())
		return now.Add(c.opts.ElectionRetry), nil
	}
	if err := c.runDue(ctx, now); err != nil {
		if fatal(err) {
			return time.Time{}, err
		}
		if errors.Is(err, errStepDown) || deposed(err) {
			c.stepDown(ctx, err.Error())
			return now.Add(c.opts.ElectionRetry), nil
		}
		c.log.Warn("coordinator loop failed", "err", err)
	}
	return c.next(now), nil
}

func (c *Coordinator) acquire(ctx context.Context, now time.Time) error {
	lease, ok, err := c.deps.Leadership.TryAcquire(ctx, c.deps.Instance)
	if err != nil || !ok {
		return err
	}
	c.lease, c.epoch, c.leader = lease, lease.Epoch(), true
	c.invoked = map[string]invocation{}
	c.nextHealth, c.nextReconcile, c.nextTTL, c.nextGC = now, now, now, now
	c.log.Info("became leader", "epoch", c.epoch)
	sub, err := c.deps.Bus.Subscribe(ctx, contracts.MonitorTriggerChannel)
	if err != nil {
		// The trigger is a hint only (C2): run without it.
		c.log.Warn("monitor trigger unavailable", "err", err)
		if fatal(err) {
			return err
		}
	} else {
		c.monitorTrigger = sub
	}
	return nil
}

func (c *Coordinator) stepDown(ctx context.Context, why string) {
	c.log.Warn("stepping down", "why", why, "epoch", c.epoch)
	if c.lease != nil {
		_ = c.lease.Release(ctx)
	}
	c.closeSubs()
	c.lease, c.leader, c.epoch, c.invoked = nil, false, 0, nil
}

func (c *Coordinator) closeSubs() {
	if c.monitorTrigger != nil {
		_ = c.monitorTrigger.Close()
		c.monitorTrigger = nil
	}
	if c.listener != nil {
		_ = c.listener.Close()
		c.listener = nil
	}
}

// Close releases the lock and subscriptions.
func (c *Coordinator) Close(ctx context.Context) error {
	if c.leader {
		c.stepDown(ctx, "shutdown")
	}
	return nil
}

// runDue runs each due component once, in a fixed order.
func (c *Coordinator) runDue(ctx context.Context, now time.Time) error {
	if err := c.events(ctx, now); err != nil {
		if fatal(err) || deposed(err) {
			return err
		}
		c.log.Warn("event listener tick failed", "err", err)
	}
	if c.monitorTrigger != nil && len(c.monitorTrigger.Poll()) > 0 {
		c.nextHealth = now
	}
	if !now.Before(c.nextHealth) {
		if err := c.healthTick(ctx, now); err != nil {
			if fatal(err) || deposed(err) {
				return err
			}
			c.log.Warn("health monitor tick skipped", "err", err)
		}
		c.nextHealth = now.Add(decide.AdaptivePeriod(c.fleet))
	}
	if !now.Before(c.nextReconcile) {
		if err := c.reconcileTick(ctx, now); err != nil {
			if fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
				return err
			}
			c.log.Warn("reconciler tick skipped", "err", err)
		}
		c.nextReconcile = now.Add(decide.AdaptivePeriod(c.fleet))
		c.nextHealth = decide.HealthAfterReconcile(c.nextHealth, c.nextReconcile, c.fleet)
	}
	if !now.Before(c.nextTTL) {
		if err := c.ttlTick(ctx, now); err != nil {
			if fatal(err) || deposed(err) {
				return err
			}
			c.log.Warn("ttl manager tick skipped", "err", err)
		}
		c.nextTTL = now.Add(decide.PeriodTTL)
	}
	if !now.Before(c.nextGC) {
		if err := c.gcTick(ctx, now); err != nil {
			if fatal(err) || deposed(err) || errors.Is(err, errStepDown) {
				return err
			}
			c.log.Warn("archive gc tick skipped", "err", err)
		}
		c.nextGC = now.Add(decide.PeriodGC)
	}
	return nil
}

// EventPoll is how often the EventListener drains the change feed: it is
// "realtime" in the spec, so the coordinator never sleeps longer than this.
const EventPoll = time.Second

// next is the earliest due time of any component.
func (c *Coordinator) next(now time.Time) time.Time {
	n := now.Add(EventPoll)
	if c.nextHealth.Before(n) {
		n = c.nextHealth
	}
	for _, t := range [...]time.Time{c.nextReconcile, c.nextTTL, c.nextGC} {
		if t.Before(n) {
			n = t
		}
	}
	if !n.After(now) {
		n = now.Add(100 * time.Millisecond)
	}
	return n
}

// checkLease re-checks the lock before an actuator call (SPEC 3.1).
func (c *Coordinator) checkLease(ctx context.Context) error {
	if err := c.lease.Check(ctx); err != nil {
		if fatal(err) {
			return err
		}
		return fmt.Errorf("%w: %v", errStepDown, err)
	}
	return nil
}
