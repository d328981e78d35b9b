package report

import (
	"time"

	"github.com/wsconverge/converge/contracts/history"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Run is one judged run as the reports see it.
type Run struct {
	// System names the implementation judged ("reference",
	// "exec:python3 coordinator.py").
	System string
	// Result is the run's result (its Report, Failures, Evidence).
	Result wssim.Result
	// Wall is the wall time the run took (both runs of a double run).
	Wall time.Duration
	// Events are the run's kept history events, for the timeline (HTML
	// only; JUnit does without).
	Events []history.Event
	// Start and End bound the run in virtual time.
	Start, End time.Time
}

// FromSim is the Run of a finished simulation s that gave r.
func FromSim(system string, s *wssim.Sim, r wssim.Result, wall time.Duration) Run {
	return Run{System: system, Result: r, Wall: wall, Events: s.History().Events(), Start: s.Start(), End: s.Now()}
}
