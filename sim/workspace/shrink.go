package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/wsconverge/converge/sim/engine"
)

// Size measures a counterexample: its plan's actions, its fleet and how
// long it runs.
type Size struct {
	Actions    int           `json:"actions"`
	Workspaces int           `json:"workspaces"`
	Duration   time.Duration `json:"duration"`
	Quiet      time.Duration `json:"quiet"`
}

func (z Size) String() string {
	return fmt.Sprintf("%d actions, %d workspaces, %s + %s quiet", z.Actions, z.Workspaces, z.Duration, z.Quiet)
}

// SizeOf is the size of a run's configuration (its plan, fleet and time).
func SizeOf(c Config) Size { return sizeOf(c) }

func sizeOf(c Config) Size {
	return Size{Actions: c.Plan.Len(), Workspaces: c.Workspaces, Duration: c.Duration, Quiet: c.Quiet}
}

// Shrunk is the outcome of Shrink.
type Shrunk struct {
	// Config is the smallest failing configuration found (its Plan
	// explicit), Result its run.
	Config Config
	Result Result
	// Runs is the number of runs Shrink made.
	Runs int
	// From and To are the sizes before and after.
	From, To Size
}

// DefaultShrinkBudget is the number of runs Shrink makes at most.
const DefaultShrinkBudget = 60

// Shrink reduces a failing run to a smaller one that still fails, as
// judged by fails: it drops the quiet phase, shrinks the fleet, removes
// plan actions (delta debugging), then ends the fault phase just after the
// earliest violation, within budget runs (0: DefaultShrinkBudget).
// cfg must fail; its plan is made explicit first.
func Shrink(ctx context.Context, cfg Config, fails func(Result) bool, budget int) (Shrunk, error) {
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	full, err := cfg.withDefaults()
	if err != nil {
		return Shrunk{}, err
	}
	if full.Plan == nil {
		full.Plan = GeneratePlan(full.Seed, full.Faults, full.Duration)
	}
	cfg.Plan, cfg.Workspaces, cfg.Duration, cfg.Quiet = full.Plan.Clone(), full.Workspaces, full.Duration, full.Quiet
	sh := Shrunk{From: sizeOf(cfg)}
	s, err := engine.Shrink[Config, Execution](ctx, Runner{}, cfg, func(x Execution) bool { return fails(x.Result) }, budget,
		shrinkQuiet, shrinkFleet, shrinkPlan, shrinkDuration)
	sh.Runs = s.Runs
	if err != nil {
		return sh, err
	}
	sh.Config, sh.Result, sh.To = s.Best, s.Run.Result, sizeOf(s.Best)
	return sh, nil
}

// shrinking is a shrink of a workspace run.
type shrinking = engine.Shrinking[Config, Execution]

// shrinkQuiet tries without the quiet phase.
func shrinkQuiet(s *shrinking) error {
	if s.Best.Quiet <= 0 {
		return nil
	}
	c := s.Best
	c.Quiet = 0
	_, err := s.Try(c)
	return err
}

// shrinkFleet tries the smallest fleet that still fails, smallest first.
func shrinkFleet(s *shrinking) error {
	return s.Smallest(1, s.Best.Workspaces, func(c Config, n int) (Config, bool) {
		c.Workspaces = n
		return c, true
	})
}

// shrinkPlan removes plan actions by delta debugging.
func shrinkPlan(s *shrinking) error {
	faults := s.Best.Plan.Faults
	_, err := engine.ShrinkList(s.Best.Plan.Actions, func(rest []Action) (bool, error) {
		c := s.Best
		c.Plan = &Plan{Faults: faults, Actions: rest}
		return s.Try(c)
	})
	return err
}

// shrinkDuration tries ending the fault phase a minute after the earliest
// violation (dropping the plan's later actions).
func shrinkDuration(s *shrinking) error {
	cfg, r := s.Best, s.Run.Result
	if r.Report == nil || len(r.Report.Violations) == 0 {
		return nil
	}
	start := cfg.Start
	if start.IsZero() {
		start = DefaultStart
	}
	first := r.Report.Violations[0].At.Sub(start)
	d := (first/time.Minute + 2) * time.Minute
	if d >= cfg.Duration || d <= 0 {
		return nil
	}
	c := cfg
	c.Duration = d
	var kept []Action
	for _, a := range cfg.Plan.Actions {
		if a.At < d {
			kept = append(kept, a)
		}
	}
	c.Plan = &Plan{Faults: cfg.Plan.Faults, Actions: kept}
	_, err := s.Try(c)
	return err
}
