package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wsconverge/converge/sim"
)

// Judged returns cfg set up to judge a System: its protocol failures (a
// child that broke the protocol, exited or hung) join the run's failures
// through cfg.Checks. For any other system cfg is returned unchanged. Use
// it with sim.Run, sim.Execute and sim.Shrink; Check uses it too.
func Judged(cfg sim.Config) sim.Config {
	sys, ok := cfg.System.(*System)
	if !ok {
		return cfg
	}
	cfg.Checks = append(slices.Clip(cfg.Checks), func(*sim.Sim) []string { return sys.Failures() })
	return cfg
}

// Check is sim.Check for a System: the seed runs twice and the history
// hashes must match; every checker judges the first run; protocol
// failures are failures of the run. When the two runs differ, the failure
// sim.Check reports (the first history event where they part) is followed
// by the first protocol message where they part, which names the child
// that answered the same conversation differently.
func Check(ctx context.Context, cfg sim.Config) (sim.Result, error) {
	r, err := sim.Check(ctx, Judged(cfg))
	sys, ok := cfg.System.(*System)
	if ok && errors.Is(err, sim.ErrNondeterministic) {
		if d := sys.Divergence(); d != "" {
			r.Failures = append(r.Failures, fmt.Sprintf("%v: %s", sim.ErrNondeterministic, d))
		}
	}
	return r, err
}
