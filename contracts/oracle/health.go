package oracle

import "time"

// HealthStatus is the daemon's health (ORACLE-SPEC 3.6).
type HealthStatus string

const (
	HealthInitializing HealthStatus = "initializing"
	HealthHealthy      HealthStatus = "healthy"
	HealthDegraded     HealthStatus = "degraded"
	HealthUnhealthy    HealthStatus = "unhealthy"
	HealthStopping     HealthStatus = "stopping"
	HealthStopped      HealthStatus = "stopped"
	HealthFatal        HealthStatus = "fatal"
)

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
func Health(c HealthChecks, now time.Time) HealthStatus {
	if !c.RPCAnswers || !c.SubscriptionsLive || !c.SchedulerRunning || !c.SubmitterRunning {
		return HealthUnhealthy
	}
	if c.LastFrameAt.IsZero() || now.Sub(c.LastFrameAt) > RecentEventWindow {
		return HealthDegraded
	}
	return HealthHealthy
}
