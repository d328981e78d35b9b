package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Judged returns cfg set up to judge a System: its protocol failures (a
// child that broke the protocol, exited or hung) join the run's failures
// through cfg.Checks. For any other system cfg is returned unchanged. Use
// it with wssim.Run, wssim.Execute and wssim.Shrink; Check uses it too.
func Judged(cfg wssim.Config) wssim.Config {
	sys, ok := cfg.System.(*System)
	if !ok {
		return cfg
	}
	cfg.Checks = append(slices.Clip(cfg.Checks), func(*wssim.Sim) []string { return sys.Failures() })
	return cfg
}

// Check is wssim.Check for a System: the seed runs twice and the history
// hashes must match; every checker judges the first run; protocol
// failures are failures of the run. When the two runs differ, the failure
// wssim.Check reports (the first history event where they part) is followed
// by the first protocol message where they part, which names the child
// that answered the same conversation differently.
func Check(ctx context.Context, cfg wssim.Config) (wssim.Result, error) {
	r, err := wssim.Check(ctx, Judged(cfg))
	sys, ok := cfg.System.(*System)
	if ok && errors.Is(err, wssim.ErrNondeterministic) {
		if d := sys.Divergence(); d != "" {
			r.Failures = append(r.Failures, fmt.Sprintf("%v: %s", wssim.ErrNondeterministic, d))
		}
	}
	return r, err
}
