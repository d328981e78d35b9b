package oraclemutants

import (
	"context"
	"fmt"
	"slices"

	"github.com/wsconverge/converge/contracts/judge"
	"github.com/wsconverge/converge/sim/oraclesim"
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
	k := Kill{Mutant: m.name}
	for seed := first; seed < first+uint64(n); seed++ {
		o := m.Options
		o.Seed, o.System = seed, m
		res, err := oraclesim.Run(ctx, o)
		if err != nil {
			return k, fmt.Errorf("mutant %s: %w", m.name, err)
		}
		k.Seeds++
		if by := violated(res.Report); slices.ContainsFunc(m.Kills, func(c string) bool { return slices.Contains(by, c) }) {
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
