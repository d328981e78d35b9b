package report

import (
	"time"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/sim"
)

// Run is one judged run as the reports see it.
type Run struct {
	// System names the implementation judged ("reference",
	// "exec:python3 coordinator.py").
	System string
	// Result is the run's result (its Report, Failures, Evidence).
	Result sim.Result
	// Wall is the wall time the run took (both runs of a double run).
	Wall time.Duration
	// Events are the run's kept history events, for the timeline (HTML
	// only; JUnit does without).
	Events []history.Event
	// Start and End bound the run in virtual time.
	Start, End time.Time
}

// FromSim is the Run of a finished simulation s that gave r.
func FromSim(system string, s *sim.Sim, r sim.Result, wall time.Duration) Run {
	return Run{System: system, Result: r, Wall: wall, Events: s.History().Events(), Start: s.Start(), End: s.Now()}
}
