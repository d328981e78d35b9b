package oracle

import (
	"context"
	"fmt"
	"time"

	"github.com/wsconverge/converge/sim/engine"
)

// Size measures a counterexample: the requests registered at genesis, the
// faults and moderator actions drawn, and how long its phases last (its
// options after defaults and steering).
type Size struct {
	Requests   int           `json:"requests"`
	Faults     int           `json:"faults"`
	Ops        int           `json:"ops"`
	FaultPhase time.Duration `json:"fault_phase"`
	QuietPhase time.Duration `json:"quiet_phase"`
}

func (z Size) String() string {
	return fmt.Sprintf("%d requests, %d faults, %d ops, %s + %s quiet", z.Requests, z.Faults, z.Ops, z.FaultPhase, z.QuietPhase)
}

// SizeOf is the size of a run of options o.
func SizeOf(o Options) Size {
	o = o.withDefaults()
	return Size{Requests: o.Requests, Faults: max(o.Faults, 0), Ops: max(o.Ops, 0), FaultPhase: o.FaultPhase, QuietPhase: o.QuietPhase}
}

// Shrunk is the outcome of Shrink.
type Shrunk struct {
	// Options is the smallest failing run found, Result its run.
	Options Options
	Result  *Result
	// Runs is the number of runs Shrink made.
	Runs int
	// From and To are the sizes before and after.
	From, To Size
}

// DefaultShrinkBudget is the number of runs Shrink makes at most.
const DefaultShrinkBudget = 40

// The shortest phases a run may have (Options.Validate).
const (
	minFaultPhase = 2 * time.Minute
	minQuietPhase = time.Minute
)

// Shrink reduces a failing run to a smaller one that still fails, as
// judged by fails, within budget runs (0: DefaultShrinkBudget): it
// shortens the quiet phase to its least, then tries fewer requests, faults
// and moderator actions (the smallest first: none, 1, 2, 4, …), then ends
// the fault phase a minute after the earliest violation. A run's faults
// and actions are drawn from its seed in order, so n of them are the
// first n of a larger run's. o must fail.
func Shrink(ctx context.Context, o Options, fails func(*Result) bool, budget int) (Shrunk, error) {
	return ShrinkIn(ctx, Runner{}, o, fails, budget)
}

// ShrinkIn is Shrink with the runs made by w (a daemon built apart, say).
func ShrinkIn(ctx context.Context, w engine.World[Options, *Result], o Options, fails func(*Result) bool, budget int) (Shrunk, error) {
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	if err := o.Validate(); err != nil {
		return Shrunk{}, fmt.Errorf("shrink: %w", err)
	}
	sh := Shrunk{From: SizeOf(o)}
	s, err := engine.Shrink[Options, *Result](ctx, w, o, fails, budget,
		shrinkQuiet, shrinkRequests, shrinkFaults, shrinkOps, shrinkFaultPhase)
	sh.Runs = s.Runs
	if err != nil {
		return sh, err
	}
	sh.Options, sh.Result, sh.To = s.Best, s.Run, SizeOf(s.Best)
	return sh, nil
}

// shrinking is a shrink of an oracle run.
type shrinking = engine.Shrinking[Options, *Result]

// shrinkQuiet tries the shortest quiet phase.
func shrinkQuiet(s *shrinking) error {
	if SizeOf(s.Best).QuietPhase <= minQuietPhase {
		return nil
	}
	c := s.Best
	c.QuietPhase = minQuietPhase
	_, err := s.Try(c)
	return err
}

// shrinkRequests tries fewer requests at genesis, the fewest first. A
// candidate that steering raises back (its crowd feature) is no smaller
// and is not run.
func shrinkRequests(s *shrinking) error {
	return s.Smallest(1, SizeOf(s.Best).Requests, func(c Options, n int) (Options, bool) {
		from := SizeOf(c).Requests
		c.Requests = n
		return c, SizeOf(c).Requests < from
	})
}

// shrinkFaults tries no faults, then 1, 2, 4, … of them.
func shrinkFaults(s *shrinking) error {
	return shrinkCount(s, SizeOf(s.Best).Faults, func(c *Options) *int { return &c.Faults })
}

// shrinkOps tries no moderator actions, then 1, 2, 4, … of them.
func shrinkOps(s *shrinking) error {
	return shrinkCount(s, SizeOf(s.Best).Ops, func(c *Options) *int { return &c.Ops })
}

// shrinkCount tries none, then the smallest counts first, below cur, of
// the count field names (0 is spelled -1 there: 0 is the default).
func shrinkCount(s *shrinking, cur int, field func(*Options) *int) error {
	if cur == 0 {
		return nil
	}
	c := s.Best
	*field(&c) = -1
	if ok, err := s.Try(c); ok || err != nil {
		return err
	}
	return s.Smallest(1, cur, func(c Options, n int) (Options, bool) {
		*field(&c) = n
		return c, true
	})
}

// shrinkFaultPhase tries ending the fault phase a minute after the
// earliest violation (its faults and actions are then drawn within the
// shorter phase).
func shrinkFaultPhase(s *shrinking) error {
	r := s.Run
	if r == nil || r.Report == nil || len(r.Report.Violations) == 0 {
		return nil
	}
	first := r.Report.Violations[0].At.Sub(Genesis)
	d := max((first/time.Minute+2)*time.Minute, minFaultPhase)
	if d >= SizeOf(s.Best).FaultPhase {
		return nil
	}
	c := s.Best
	c.FaultPhase = d
	_, err := s.Try(c)
	return err
}
