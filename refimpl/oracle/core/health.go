package core

import (
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

// healthChecker is the 30 s health check (ORACLE-SPEC 3.6): a `status`
// call with a 5 s timeout and the state of the components. It reports and
// logs; it never stops the daemon (D21).
type healthChecker struct {
	timer *timer
	next  time.Time
}

func (c *Core) startHealth() {
	c.hc.next = c.now.Add(oracle.HealthCheckInterval)
	c.scheduleHealth()
}

func (c *Core) scheduleHealth() {
	c.hc.timer = c.at(c.hc.next, func() {
		c.hc.timer = nil
		if !c.running() {
			return
		}
		c.hc.next = c.hc.next.Add(oracle.HealthCheckInterval)
		c.scheduleHealth()
		c.checkHealth()
	})
}

func (c *Core) checkHealth() {
	id := c.newID()
	c.call(ports.StatusCall{ID: id, Timeout: oracle.HealthStatusTimeout}, id, func(r ports.Reply) {
		if !c.running() {
			return
		}
		answered := replyErr(r) == nil && r.Status != nil
		status := Health(HealthChecks{
			RPCAnswers:        answered,
			SubscriptionsLive: c.w.live,
			SchedulerRunning:  c.rec.loaded && c.s.tick != nil,
			SubmitterRunning:  c.running(),
			LastFrameAt:       c.w.lastAt,
		}, c.now)
		c.setHealth(status)
		m := c.metrics
		c.log(slog.LevelInfo, "health", slog.String("status", string(status)),
			slog.Uint64("events_processed", m.EventsProcessed), slog.Uint64("jobs_completed", m.JobsCompleted),
			slog.Uint64("tx_submitted", m.TxSubmitted), slog.Uint64("total_errors", m.TotalErrors),
			slog.Int("jobs", len(c.s.ordered)))
	})
}

func (c *Core) setHealth(h oracle.HealthStatus) {
	if c.metrics.HealthStatus == h {
		return
	}
	c.metrics.HealthStatus = h
	c.trace(ports.Trace{Kind: ports.TraceHealth, Health: h})
}

func (c *Core) stopHealth() {
	c.cancel(c.hc.timer)
	c.hc.timer = nil
}

// HealthChecks are the five tests of the 30 s health check.
type HealthChecks struct {
	RPCAnswers        bool      // `status` answered within HealthStatusTimeout
	SubscriptionsLive bool      // all three subscriptions are active
	SchedulerRunning  bool      // the Scheduler runs
	SubmitterRunning  bool      // the Submitter runs
	LastFrameAt       time.Time // when the last frame arrived; zero if none yet
}

// Health evaluates the checks at now: healthy when all pass, degraded when
// only the recent-frame check fails (no frame within RecentEventWindow),
// unhealthy when any of the first four fails. The health check only reports:
// it never stops the daemon (D21).
func Health(c HealthChecks, now time.Time) oracle.HealthStatus {
	if !c.RPCAnswers || !c.SubscriptionsLive || !c.SchedulerRunning || !c.SubmitterRunning {
		return oracle.HealthUnhealthy
	}
	if c.LastFrameAt.IsZero() || now.Sub(c.LastFrameAt) > oracle.RecentEventWindow {
		return oracle.HealthDegraded
	}
	return oracle.HealthHealthy
}
