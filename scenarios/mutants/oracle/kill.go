package oracle

import (
	"context"
	"fmt"
	"slices"

	"github.com/wsconverge/converge/judge"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// Kill is the outcome of hunting one mutant: the first seed on which an
// expected checker caught it (0: none did), and every checker that
// reported a violation on that seed.
type Kill struct {
	Mutant string
	Seed   uint64
	By     []string
	Seeds  int // seeds run
}

// Killed reports whether an expected checker caught the mutant.
func (k Kill) Killed() bool { return k.Seed != 0 }

// Hunt runs m on seeds first, first+1, … (at most n of them) until one of
// its expected checkers reports a violation.
func Hunt(ctx context.Context, m *Mutant, first uint64, n int) (Kill, error) {
	return hunt(ctx, m.name, m.Kills, first, n, func(ctx context.Context, seed uint64) (*judge.Report, error) {
		o := m.Options
		o.Seed, o.System = seed, m
		res, err := oraclesim.Run(ctx, o)
		if err != nil {
			return nil, err
		}
		return res.Report, nil
	})
}

// HuntSource is Hunt for source mutant m, built as x.
func HuntSource(ctx context.Context, m *SourceMutant, x *Built, first uint64, n int) (Kill, error) {
	return hunt(ctx, m.name, m.Kills, first, n, func(ctx context.Context, seed uint64) (*judge.Report, error) {
		o := m.Options
		o.Seed = seed
		rep, _, err := x.Run(ctx, o)
		return rep, err
	})
}

// hunt runs seeds until one of the expected checkers kills the mutant.
func hunt(ctx context.Context, name string, kills []string, first uint64, n int,
	run func(ctx context.Context, seed uint64) (*judge.Report, error)) (Kill, error) {
	k := Kill{Mutant: name}
	for seed := first; seed < first+uint64(n); seed++ {
		rep, err := run(ctx, seed)
		if err != nil {
			return k, fmt.Errorf("mutant %s: %w", name, err)
		}
		k.Seeds++
		if by := violated(rep); slices.ContainsFunc(kills, func(c string) bool { return slices.Contains(by, c) }) {
			k.Seed, k.By = seed, by
			return k, nil
		}
	}
	return k, nil
}

// violated lists the checkers with a violation, in report order.
func violated(r *judge.Report) []string {
	var out []string
	for _, c := range r.Checkers() {
		if r.Verdict(c) == judge.Violated {
			out = append(out, c)
		}
	}
	return out
}
