package oracle

import (
	"context"
	"slices"

	"github.com/wsconverge/converge/sim/engine"
)

// Runner is the oracle world as the engine drives it (engine.World): a
// run's configuration is its Options, a run its Result. System, when set,
// is the daemon run in place of the configuration's (a kill matrix runs a
// mutant's configuration against the reference so).
type Runner struct {
	System System
}

var _ engine.World[Options, *Result] = Runner{}

// Seed is o's seed.
func (Runner) Seed(o Options) uint64 { return o.Seed }

// Run runs o once (Run). The checkers judge the records as they come, so
// a run made only for its hash is judged too.
func (x Runner) Run(ctx context.Context, o Options, _ bool) (*Result, error) {
	if x.System != nil {
		o.System = x.System
	}
	return Run(ctx, o)
}

// Hash is the run's history hash ("" for no run).
func (Runner) Hash(r *Result) string {
	if r == nil {
		return ""
	}
	return r.Hash
}

// Violated lists the checkers r reports a violation of, each once in the
// order of their first violation (a run's Result has no harness failures:
// Run returns them as errors).
func (Runner) Violated(r *Result) []string {
	if r == nil || r.Report == nil {
		return nil
	}
	var out []string
	for _, v := range r.Report.Violations {
		if !slices.Contains(out, v.Checker) {
			out = append(out, v.Checker)
		}
	}
	return out
}
