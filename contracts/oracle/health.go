package oracle

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
