package core

import (
	"cmp"
	"slices"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// Ready is the tick's readiness rule (ORACLE-SPEC 3.3.2): the request is
// ENABLED, the job is not Executing, Retrying or Completed, and its
// NextRunTime has come. The job is read by address: a tick asks it of
// every job every second.
func Ready(j *oracle.Job, now time.Time) bool {
	return j.Status == oracle.StatusEnabled && j.Exec.Status.Selectable() && !j.NextRunTime.After(now)
}

// ReadyOrder returns the ready jobs among jobs in the order the tick selects
// them: by NextRunTime, then RequestID (D19, D30). The tick then applies
// Select to each, in this order, in the same locked step.
func ReadyOrder(jobs []oracle.Job, now time.Time) []oracle.Job {
	var ready []oracle.Job
	for _, j := range jobs {
		if Ready(&j, now) {
			ready = append(ready, j)
		}
	}
	slices.SortFunc(ready, func(a, b oracle.Job) int {
		if c := a.NextRunTime.Compare(b.NextRunTime); c != 0 {
			return c
		}
		return cmp.Compare(a.RequestID, b.RequestID)
	})
	return ready
}

// MayStartExecution reports whether a selected execution that waited for a
// task-group slot may make its first GET: its job still exists, is still
// Executing and not Superseded, and is still ENABLED. Otherwise the execution
// is dropped before any GET and ends as superseded (D12, O11).
func MayStartExecution(j *oracle.Job) bool {
	return j != nil && j.Exec.Status == oracle.ExecExecuting && !j.Exec.Superseded && j.Status == oracle.StatusEnabled
}
