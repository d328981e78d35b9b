package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/contracts/ports"
)

// DefaultStart is the virtual time every run starts at unless told otherwise.
var DefaultStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// DefaultQuiet is the quiet phase a judged run ends with: the convergence
// bound and a margin.
var DefaultQuiet = invariant.ConvergeBound + 10*time.Minute

// DefaultCoordinators is the number of coordinator instances of a run.
const DefaultCoordinators = 2

// MinStepInterval is the least virtual time between two Steps of one
// coordinator instance: a Step asking to run again sooner is clamped, so an
// implementation cannot spin the simulator.
const MinStepInterval = 100 * time.Millisecond

// Config describes one simulated run.
type Config struct {
	// Seed decides everything random in the run.
	Seed uint64
	// Workspaces is how many workspaces the ordinary workload creates.
	Workspaces int
	// Duration is how long Run and Check simulate.
	Duration time.Duration
	// Coordinators is the number of coordinator instances, "coord-1"…
	// (default 2).
	Coordinators int
	// System is the implementation under test.
	System ports.System
	// Start is the virtual time the run starts at (default DefaultStart).
	Start time.Time
	// Workload tunes the user workload; the zero value is the ordinary one.
	Workload Workload
	// RestartDelay, when positive, restarts a dropped (crashed) coordinator
	// instance that long after it died, as a process supervisor would
	// (default 0: a dropped instance stays down unless a script restarts
	// it).
	RestartDelay time.Duration
	// Limits are the running-workspace limits handed to the system (default
	// contracts.DefaultLimits with the global limit raised to Workspaces,
	// so that the ordinary workload is not mostly 429s).
	Limits contracts.Limits
	// Faults chooses the run's faults (default none); the plan is drawn
	// from the seed (GeneratePlan) unless Plan is given.
	Faults FaultMix
	// Plan, when set, is the explicit plan to run (a replay, a shrunk
	// counterexample, a scripted run): Faults is then ignored.
	Plan *Plan
	// Quiet, when positive, is the quiet phase Run and Check simulate after
	// Duration: faults and users stop, crashed instances restart, and
	// every workspace must converge (DefaultQuiet covers the bound).
	Quiet time.Duration
	// Checks run at the end of a run (Sim.Result); each returns failures.
	Checks []func(*Sim) []string
	// Logger receives the simulator's own progress messages (optional).
	Logger *slog.Logger
}

// Workload tunes the user workload. The zero value is the ordinary
// workload of the package documentation.
type Workload struct {
	// Disabled turns the random workload off: scenario tests script every
	// user action through Sim.API.
	Disabled bool `json:"disabled,omitempty"`
	// Users is the number of users owning the workspaces, round-robin
	// (default ceil(Workspaces/3): most users own three workspaces, one
	// more than the per-user running limit, so the limit is met).
	Users int `json:"users,omitempty"`
	// CreateWindow is the span over which the workspaces are created
	// (default 30 minutes).
	CreateWindow time.Duration `json:"create_window,omitempty"`
	// DeletesPerDay is the fraction of workspaces deleted per simulated day
	// (default 0.02; negative: none).
	DeletesPerDay float64 `json:"deletes_per_day,omitempty"`
}

// withDefaults returns c with every unset field at its default, or an error
// naming the invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.System == nil {
		return c, errors.New("sim config: System is required")
	}
	if c.Workspaces < 0 {
		return c, fmt.Errorf("sim config: Workspaces %d is negative", c.Workspaces)
	}
	if c.Duration < 0 {
		return c, fmt.Errorf("sim config: Duration %s is negative", c.Duration)
	}
	if c.Quiet < 0 {
		return c, fmt.Errorf("sim config: Quiet %s is negative", c.Quiet)
	}
	if c.RestartDelay < 0 {
		return c, fmt.Errorf("sim config: RestartDelay %s is negative", c.RestartDelay)
	}
	if c.Coordinators < 0 {
		return c, fmt.Errorf("sim config: Coordinators %d is negative", c.Coordinators)
	}
	if c.Coordinators == 0 {
		c.Coordinators = DefaultCoordinators
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	c.Start = c.Start.UTC()
	if c.Limits == (contracts.Limits{}) {
		c.Limits = contracts.DefaultLimits
		c.Limits.MaxRunningGlobal = max(c.Limits.MaxRunningGlobal, c.Workspaces)
	}
	if c.Limits.MaxRunningPerUser <= 0 || c.Limits.MaxRunningGlobal <= 0 {
		return c, fmt.Errorf("sim config: limits %+v must be positive", c.Limits)
	}
	w := &c.Workload
	if w.Users < 0 {
		return c, fmt.Errorf("sim config: Workload.Users %d is negative", w.Users)
	}
	if w.Users == 0 {
		w.Users = max(1, (c.Workspaces+2)/3)
	}
	if w.CreateWindow <= 0 {
		w.CreateWindow = 30 * time.Minute
	}
	if w.DeletesPerDay == 0 {
		w.DeletesPerDay = 0.02
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
