package contracts

import (
	"fmt"
	"iter"
)

// Limits on running workspaces (SPEC 4.3).
type Limits struct {
	MaxRunningPerUser int
	MaxRunningGlobal  int
}

// DefaultLimits are the spec's limits.
var DefaultLimits = Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 100}

// OrDefaults returns l with every limit that is not positive replaced by
// its default: a limit of zero running workspaces means "not configured",
// never "nothing may run".
func (l Limits) OrDefaults() Limits {
	if l.MaxRunningPerUser <= 0 {
		l.MaxRunningPerUser = DefaultLimits.MaxRunningPerUser
	}
	if l.MaxRunningGlobal <= 0 {
		l.MaxRunningGlobal = DefaultLimits.MaxRunningGlobal
	}
	return l
}

// CountsRunning reports whether w counts toward the running limits (SPEC
// 4.3 as amended): not soft-deleted, health OK, and desired or observed
// RUNNING. Counting desired RUNNING too closes the window in which a user
// could create any number of workspaces before the first one runs.
func CountsRunning(w *Workspace) bool {
	return !w.Deleted() && w.HealthStatus == HealthOK &&
		(w.DesiredState == DesiredRunning || w.ObservedStatus == ObservedRunning)
}

// LimitExceeded is the 429 detail of an exceeded limit. It is also the
// error a store returns when a limit guard rejects a write.
type LimitExceeded struct {
	LimitType         string   `json:"limit_type"`
	Current           int      `json:"current"`
	Max               int      `json:"max"`
	RunningWorkspaces []string `json:"running_workspaces,omitempty"`
}

// Limit types.
const (
	LimitPerUser = "per_user"
	LimitGlobal  = "global"
)

// LimitExceededText is in every LimitExceeded's message, so a recorded
// history shows a write a limit guard refused.
const LimitExceededText = "running-workspace limit reached"

func (e *LimitExceeded) Error() string {
	return fmt.Sprintf("%s %s: %d of %d", e.LimitType, LimitExceededText, e.Current, e.Max)
}

// CheckLimits checks the per-user limit first, then the global one, for one
// more running workspace. userRunning lists the owner's other workspaces
// that count (CountsRunning), globalRunning counts every other one.
func CheckLimits(l Limits, userRunning []string, globalRunning int) *LimitExceeded {
	l = l.OrDefaults()
	if len(userRunning) >= l.MaxRunningPerUser {
		ids := append([]string(nil), userRunning...)
		return &LimitExceeded{LimitType: LimitPerUser, Current: len(userRunning), Max: l.MaxRunningPerUser, RunningWorkspaces: ids}
	}
	if globalRunning >= l.MaxRunningGlobal {
		return &LimitExceeded{LimitType: LimitGlobal, Current: globalRunning, Max: l.MaxRunningGlobal}
	}
	return nil
}

// RunningOthers counts the rows that count toward the limits, leaving out
// the row id (the one being written): the ids of owner's, in the order
// rows yields them, and the number of all of them.
func RunningOthers(rows iter.Seq[*Workspace], owner, id string) (mine []string, all int) {
	for w := range rows {
		if !CountsRunning(w) || w.ID == id {
			continue
		}
		all++
		if w.OwnerUserID == owner {
			mine = append(mine, w.ID)
		}
	}
	return mine, all
}

// CheckGuard is the limit guard a store evaluates atomically with a guarded
// write (ports.Store's InsertWithinLimits and UpdateWithinLimits) of a row
// owned by owner with id id: the write may make one more workspace run for
// owner only while the others that count stay below both limits. rows is
// the table as it stands just before the write.
func CheckGuard(l Limits, owner, id string, rows iter.Seq[*Workspace]) *LimitExceeded {
	mine, all := RunningOthers(rows, owner, id)
	return CheckLimits(l, mine, all)
}
