package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Judged returns cfg set up to judge a System: its protocol failures (a
// child that broke the protocol, exited or hung) join the run's failures
// through cfg.Checks. For any other system cfg is returned unchanged. Use
// it with wssim.Run, wssim.Execute and wssim.Shrink; Check uses it too.
// (A run stopped by a crash loop goes on to its end without children
// there; Check stops it at once.)
func Judged(cfg wssim.Config) wssim.Config {
	sys, ok := cfg.System.(*System)
	if !ok {
		return cfg
	}
	cfg.Checks = append(slices.Clip(cfg.Checks), func(*wssim.Sim) []string { return sys.Failures() })
	return cfg
}

// Runner is wssim.Runner for any system, set up to judge a System as
// Judged does: a System's protocol failures are failures of its run. With
// System set, every run judges that system instead of the configuration's
// (the reference of a kill matrix's hunt, say).
type Runner struct {
	wssim.Runner
	System ports.System
}

var _ engine.World[wssim.Config, wssim.Execution] = Runner{}

// Run runs cfg once, judging Runner.System when set.
func (x Runner) Run(ctx context.Context, cfg wssim.Config, judged bool) (wssim.Execution, error) {
	if x.System != nil {
		cfg.System = x.System
	}
	return x.Runner.Run(ctx, Judged(cfg), judged)
}

// Check is wssim.Check for a System: the seed runs twice and the history
// hashes must match; every checker judges the first run; protocol
// failures are failures of the run. When the two runs differ, the failure
// wssim.Check reports (the first history event where they part) is followed
// by the first protocol message where they part, which names the child
// that answered the same conversation differently. When the children
// keep failing the same way (Options.CrashLoop), the seed stops at once:
// its failures are the loop's report (first) and the run's other
// failures, and the error wraps ErrCrashLoop.
func Check(ctx context.Context, cfg wssim.Config) (wssim.Result, error) {
	sys, ok := cfg.System.(*System)
	if !ok {
		return wssim.Check(ctx, cfg)
	}
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	sys.beginCheck(cancel)
	defer sys.beginCheck(nil)
	r, err := wssim.Check(run, Judged(cfg))
	if loop := sys.checkLoop(); loop != nil && ctx.Err() == nil {
		// The run was cut short (within a few thousand events, the
		// simulator's look at its context, each refused at once): it is
		// not judged, and its own failures are the refusals after the
		// loop, which the loop's report says once.
		r.Report, r.Evidence, r.Known = nil, nil, nil
		r.Failures = slices.DeleteFunc(r.Failures, func(f string) bool { return strings.Contains(f, ErrCrashLoop.Error()) })
		r.Failures = append([]string{loop.String()}, r.Failures...)
		return r, fmt.Errorf("seed %d: %w: %s", cfg.Seed, ErrCrashLoop, strings.TrimPrefix(firstLine(loop.String()), ErrCrashLoop.Error()+": "))
	}
	if errors.Is(err, wssim.ErrNondeterministic) {
		if d := sys.Divergence(); d != "" {
			r.Failures = append(r.Failures, fmt.Sprintf("%v: %s", wssim.ErrNondeterministic, d))
		}
	}
	return r, err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
