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
	best, err := Run(ctx, cfg)
	sh.Runs++
	if err != nil {
		return sh, err
	}
	if !fails(best) {
		return sh, fmt.Errorf("shrink: seed %d does not fail to begin with", cfg.Seed)
	}
	try := func(c Config) (bool, error) {
		if sh.Runs >= budget {
			return false, nil
		}
		r, err := Run(ctx, c)
		sh.Runs++
		if err != nil {
			return false, err
		}
		if !fails(r) {
			return false, nil
		}
		cfg, best = c, r
		return true, nil
	}
	// The quiet phase, then the fault phase after the earliest violation.
	if cfg.Quiet > 0 {
		c := cfg
		c.Quiet = 0
		if _, err := try(c); err != nil {
			return sh, err
		}
	}
	// The fleet: the smallest that still fails, smallest first.
	for w := 1; w < cfg.Workspaces; w *= 2 {
		c := cfg
		c.Workspaces = w
		ok, err := try(c)
		if err != nil {
			return sh, err
		}
		if ok {
			break
		}
	}
	// The plan: delta debugging over its actions.
	faults := cfg.Plan.Faults
	if _, err := engine.ShrinkList(cfg.Plan.Actions, func(rest []Action) (bool, error) {
		c := cfg
		c.Plan = &Plan{Faults: faults, Actions: rest}
		return try(c)
	}); err != nil {
		return sh, err
	}
	if err := shrinkDuration(cfg, best, try); err != nil {
		return sh, err
	}
	sh.Config, sh.Result, sh.To = cfg, best, sizeOf(cfg)
	return sh, nil
}

// shrinkDuration tries ending the fault phase a minute after the earliest
// violation (dropping the plan's later actions).
func shrinkDuration(cfg Config, r Result, try func(Config) (bool, error)) error {
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
	_, err := try(c)
	return err
}
