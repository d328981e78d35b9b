package contracts

import "fmt"

// Limits on running workspaces (SPEC 4.3).
type Limits struct {
	MaxRunningPerUser int
	MaxRunningGlobal  int
}

// DefaultLimits are the spec's soft limits.
var DefaultLimits = Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 100}

// CountsRunning reports whether w counts toward the running limits:
// observed RUNNING, health OK, not soft-deleted.
func CountsRunning(w *Workspace) bool {
	return w.ObservedStatus == ObservedRunning && w.HealthStatus == HealthOK && !w.Deleted()
}

// LimitExceeded is the 429 detail of an exceeded limit.
type LimitExceeded struct {
	LimitType         string   `json:"limit_type"`
	Current           int      `json:"current"`
	Max               int      `json:"max"`
	RunningWorkspaces []string `json:"running_workspaces,omitempty"`
}

func (e *LimitExceeded) Error() string {
	return fmt.Sprintf("%s running-workspace limit reached: %d of %d", e.LimitType, e.Current, e.Max)
}

// CheckLimits checks the per-user limit first, then the global one.
// userRunning lists the caller's running workspace ids.
func CheckLimits(l Limits, userRunning []string, globalRunning int) *LimitExceeded {
	if len(userRunning) >= l.MaxRunningPerUser {
		ids := append([]string(nil), userRunning...)
		return &LimitExceeded{LimitType: "per_user", Current: len(userRunning), Max: l.MaxRunningPerUser, RunningWorkspaces: ids}
	}
	if globalRunning >= l.MaxRunningGlobal {
		return &LimitExceeded{LimitType: "global", Current: globalRunning, Max: l.MaxRunningGlobal}
	}
	return nil
}
