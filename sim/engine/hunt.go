package engine

import (
	"context"
	"slices"
	"time"
)

// Failure is the pseudo-checker a harness failure (a panic, a failed
// check, nondeterminism) counts as in a kill.
const Failure = "failure"

// Hunt is the kill matrix's search for one mutant, over any world: run
// seeds 1, 2, … against the mutant until one makes it fail a checker that
// the reference, run on the very same configuration, does not fail; then
// shrink that run; and when no seed within the budget kills it, replay the
// mutant's stored counterexamples (a corpus, as fuzzers keep one) and say
// so.
type Hunt[C, R any] struct {
	// Seeds is the most seeds searched.
	Seeds int
	// Config is the run of seed for the mutant.
	Config func(seed uint64) C
	// Mutant and Reference are the world judging a configuration with
	// the mutant and with the reference (the same configuration, the
	// other system); their Violated lists the checkers a run violates.
	Mutant, Reference World[C, R]
	// Shrink, when set, shrinks c while the mutant still violates checker
	// and returns the smaller configuration, its run and the runs spent.
	Shrink func(ctx context.Context, c C, r R, checker string) (C, R, int, error)
	// Corpus, when set, returns the mutant's stored counterexamples.
	Corpus func() ([]C, error)
	// Now is the wall clock.
	Now func() time.Time
}

// Kill is the outcome of a Hunt.
type Kill[C, R any] struct {
	Killed bool
	// ByCorpus: the search did not kill it within Seeds; a stored
	// counterexample did.
	ByCorpus bool
	// Seed killed it; Seeds is how many seeds the search ran.
	Seed  uint64
	Seeds int
	// Wall is the time to the first kill (or to giving up), the
	// reference's runs included; ShrinkWall the time spent shrinking.
	Wall, ShrinkWall time.Duration
	// Checkers flagged the mutant and not the reference.
	Checkers []string
	// Config and Run are the killing run (shrunk when Shrunk).
	Config     C
	Run        R
	Shrunk     bool
	ShrinkRuns int
}

// Beyond lists the checkers of mutant that ref does not list, in order.
func Beyond(mutant, ref []string) []string {
	var out []string
	for _, c := range mutant {
		if !slices.Contains(ref, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// killsOn judges c with the mutant and, if it fails, with the reference,
// and returns the checkers only the mutant fails.
func (h *Hunt[C, R]) killsOn(ctx context.Context, c C) ([]string, R, error) {
	r, err := h.Mutant.Run(ctx, c, true)
	if err != nil {
		return nil, r, err
	}
	bad := h.Mutant.Violated(r)
	if len(bad) == 0 {
		return nil, r, nil
	}
	ref, err := h.Reference.Run(ctx, c, true)
	if err != nil {
		return nil, r, err
	}
	return Beyond(bad, h.Reference.Violated(ref)), r, nil
}

// Run searches for a kill.
func (h *Hunt[C, R]) Run(ctx context.Context) (Kill[C, R], error) {
	var k Kill[C, R]
	start := h.Now()
	for seed := uint64(1); seed <= uint64(h.Seeds); seed++ {
		if err := ctx.Err(); err != nil {
			return k, err
		}
		k.Seeds++
		c := h.Config(seed)
		kills, r, err := h.killsOn(ctx, c)
		if err != nil {
			return k, err
		}
		if len(kills) == 0 {
			continue
		}
		k.Killed, k.Seed, k.Checkers, k.Config, k.Run = true, seed, kills, c, r
		k.Wall = h.Now().Sub(start)
		if h.Shrink != nil {
			h.shrink(ctx, &k)
		}
		return k, nil
	}
	if h.Corpus != nil {
		stored, err := h.Corpus()
		if err != nil {
			return k, err
		}
		for _, c := range stored {
			kills, r, err := h.killsOn(ctx, c)
			if err != nil {
				return k, err
			}
			if len(kills) > 0 {
				k.Killed, k.ByCorpus, k.Seed, k.Checkers, k.Config, k.Run = true, true, h.Mutant.Seed(c), kills, c, r
				break
			}
		}
	}
	k.Wall = h.Now().Sub(start)
	return k, nil
}

// shrink shrinks the kill while the mutant still fails its first checker,
// keeping the smaller run only if the reference passes that checker on it.
func (h *Hunt[C, R]) shrink(ctx context.Context, k *Kill[C, R]) {
	start := h.Now()
	defer func() { k.ShrinkWall = h.Now().Sub(start) }()
	checker := k.Checkers[0]
	c, r, runs, err := h.Shrink(ctx, k.Config, k.Run, checker)
	k.ShrinkRuns = runs
	if err != nil {
		return
	}
	ref, err := h.Reference.Run(ctx, c, true)
	if err != nil || slices.Contains(h.Reference.Violated(ref), checker) {
		return
	}
	k.Config, k.Run, k.Shrunk = c, r, true
}
