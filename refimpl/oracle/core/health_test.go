package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
)

func TestHealth(t *testing.T) {
	now := at(time.Hour)
	all := HealthChecks{RPCAnswers: true, SubscriptionsLive: true, SchedulerRunning: true, SubmitterRunning: true, LastFrameAt: now.Add(-time.Minute)}
	cases := []struct {
		name string
		mut  func(*HealthChecks)
		want oracle.HealthStatus
	}{
		{"3.6 all pass → healthy", func(*HealthChecks) {}, oracle.HealthHealthy},
		{"3.6 a frame exactly 5 min ago still counts", func(c *HealthChecks) { c.LastFrameAt = now.Add(-5 * time.Minute) }, oracle.HealthHealthy},
		{"3.6 only the recent-frame check fails → degraded", func(c *HealthChecks) { c.LastFrameAt = now.Add(-5*time.Minute - 1) }, oracle.HealthDegraded},
		{"3.6 no frame yet → degraded", func(c *HealthChecks) { c.LastFrameAt = time.Time{} }, oracle.HealthDegraded},
		{"3.6 status unanswered → unhealthy", func(c *HealthChecks) { c.RPCAnswers = false }, oracle.HealthUnhealthy},
		{"3.6 a subscription down → unhealthy", func(c *HealthChecks) { c.SubscriptionsLive = false }, oracle.HealthUnhealthy},
		{"3.6 scheduler stopped → unhealthy", func(c *HealthChecks) { c.SchedulerRunning = false }, oracle.HealthUnhealthy},
		{"3.6 submitter stopped → unhealthy", func(c *HealthChecks) { c.SubmitterRunning = false }, oracle.HealthUnhealthy},
		{"3.6 unhealthy wins over degraded", func(c *HealthChecks) { c.SubmitterRunning = false; c.LastFrameAt = time.Time{} }, oracle.HealthUnhealthy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := all
			tc.mut(&c)
			require.Equal(t, tc.want, Health(c, now))
		})
	}
}
