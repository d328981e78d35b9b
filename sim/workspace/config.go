package workspace

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// DefaultStart is the virtual time every run starts at unless told otherwise.
var DefaultStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// MinStart and MaxStart bound a run's start: its whole run (at most
// 2×MaxDuration) stays within the virtual clock's int64 nanoseconds.
var (
	MinStart = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxStart = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// DefaultQuiet is the quiet phase a judged run ends with: the convergence
// bound and a margin.
var DefaultQuiet = wsjudge.ConvergeBound + 10*time.Minute

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
	// Steering, when set, is what coverage steering forced on for this
	// seed: fault kinds of Faults (on, and more frequent) and workload
	// features (SteerFeatures). A replay file records it.
	Steering *engine.Steering
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
	// (default 0.2, 0.02 under Legacy; negative: none). A deleted
	// workspace is replaced by a new one of its owner (not under Legacy).
	DeletesPerDay float64 `json:"deletes_per_day,omitempty"`
	// Legacy runs the workload as it was before issue 22: no edits, no
	// second thoughts, no requests of a workspace in ERROR, no desired
	// change at once after a recovery, no delete staged behind a desired
	// change, no replacement of a deleted workspace, and no api-race on
	// one row. Replay files of version 1 were recorded with it, and
	// replay so (docs/choices.md 341).
	Legacy bool `json:"legacy,omitempty"`
}

// Bounds of a run's configuration: generous for real use, and far below
// what would exhaust memory or run for days.
const (
	MaxWorkspaces   = 100_000
	MaxDuration     = 366 * 24 * time.Hour
	MaxCoordinators = 64
	maxLimit        = 1 << 30
)

// Validate reports the first field of c out of range (errors wrap
// engine.ErrBadInput and name the field), without filling in defaults.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

func badConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{engine.ErrBadInput}, args...)...)
}

// withDefaults returns c with every unset field at its default, or an error
// naming the invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.System == nil {
		return c, errors.New("sim config: System is required")
	}
	switch {
	case c.Workspaces < 0 || c.Workspaces > MaxWorkspaces:
		return c, badConfig("workspaces %d out of range [0, %d]", c.Workspaces, MaxWorkspaces)
	case c.Duration < 0 || c.Duration > MaxDuration:
		return c, badConfig("duration %s out of range [0, %s]", c.Duration, MaxDuration)
	case c.Quiet < 0 || c.Quiet > MaxDuration:
		return c, badConfig("quiet %s out of range [0, %s]", c.Quiet, MaxDuration)
	case c.RestartDelay < 0 || c.RestartDelay > MaxDuration:
		return c, badConfig("restart delay %s out of range [0, %s]", c.RestartDelay, MaxDuration)
	case c.Coordinators < 0 || c.Coordinators > MaxCoordinators:
		return c, badConfig("coordinators %d out of range [1, %d]", c.Coordinators, MaxCoordinators)
	case c.Limits.MaxRunningPerUser < 0 || c.Limits.MaxRunningPerUser > maxLimit || c.Limits.MaxRunningGlobal < 0 || c.Limits.MaxRunningGlobal > maxLimit:
		return c, badConfig("limits %+v out of range [1, %d]", c.Limits, maxLimit)
	case c.Workload.Users < 0 || c.Workload.Users > MaxWorkspaces:
		return c, badConfig("workload users %d out of range [0, %d]", c.Workload.Users, MaxWorkspaces)
	case c.Workload.CreateWindow < 0 || c.Workload.CreateWindow > MaxDuration:
		return c, badConfig("workload create window %s out of range [0, %s]", c.Workload.CreateWindow, MaxDuration)
	case math.IsNaN(c.Workload.DeletesPerDay) || math.IsInf(c.Workload.DeletesPerDay, 0) || c.Workload.DeletesPerDay > 100:
		return c, badConfig("workload deletes per day %g: want a finite number ≤ 100", c.Workload.DeletesPerDay)
	case c.Faults.Rate < 0 || c.Faults.Rate > MaxFaultRate || math.IsNaN(c.Faults.Rate):
		return c, badConfig("fault rate %g out of range (0, %d]", c.Faults.Rate, MaxFaultRate)
	case !c.Start.IsZero() && (c.Start.Before(MinStart) || !c.Start.Before(MaxStart)):
		// The virtual clock counts nanoseconds since 1970 in an int64:
		// a start outside this range overflows it during the run.
		return c, badConfig("start %s out of range [%s, %s)", c.Start.Format(time.RFC3339), MinStart.Format(time.DateOnly), MaxStart.Format(time.DateOnly))
	}
	if err := c.Plan.Validate(c.Duration); err != nil {
		return c, err
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
		w.DeletesPerDay = defaultDeletesPerDay
		if w.Legacy {
			w.DeletesPerDay = legacyDeletesPerDay
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := c.applySteering(); err != nil {
		return c, err
	}
	return c, nil
}
