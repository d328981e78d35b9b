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
// seeds First, First+1, … against the mutant until one makes it fail a
// checker that the reference, run on the very same configuration, does
// not fail (one of the Expected checkers, when the catalogue names them);
// then shrink that run; and when no seed within the budget kills it,
// replay the mutant's stored counterexamples (a corpus, as fuzzers keep
// one) and say so.
type Hunt[C, R any] struct {
	// First is the first seed searched (0: seed 1); Seeds is the most
	// seeds searched.
	First uint64
	Seeds int
	// Expected, when set, are the checkers that may kill the mutant (the
	// catalogue's, as ORACLE-SPEC 5.4 names them): a run whose checkers
	// beyond the reference's include none of them does not kill it. Empty:
	// any checker beyond the reference's kills.
	Expected []string
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
	// Checkers flagged the mutant and not the reference; Target is the
	// first of them that may kill it (Hunt.Expected), the one a shrink
	// keeps failing.
	Checkers []string
	Target   string
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

// killsOn judges c with the mutant and, if it fails (an expected checker,
// when there are some), with the reference, and returns the checkers only
// the mutant fails, none when they include no expected one.
func (h *Hunt[C, R]) killsOn(ctx context.Context, c C) ([]string, R, error) {
	r, err := h.Mutant.Run(ctx, c, true)
	if err != nil {
		return nil, r, err
	}
	bad := h.Mutant.Violated(r)
	if len(bad) == 0 || !h.expected(bad) {
		return nil, r, nil
	}
	ref, err := h.Reference.Run(ctx, c, true)
	if err != nil {
		return nil, r, err
	}
	kills := Beyond(bad, h.Reference.Violated(ref))
	if !h.expected(kills) {
		return nil, r, nil
	}
	return kills, r, nil
}

// expected reports whether checkers include one that may kill the mutant.
func (h *Hunt[C, R]) expected(checkers []string) bool {
	return len(h.Expected) == 0 || slices.ContainsFunc(checkers, func(c string) bool { return slices.Contains(h.Expected, c) })
}

// target is the checker a shrink keeps failing: the first of checkers
// that may kill the mutant.
func (h *Hunt[C, R]) target(checkers []string) string {
	for _, c := range checkers {
		if h.expected([]string{c}) {
			return c
		}
	}
	return checkers[0]
}

// Run searches for a kill.
func (h *Hunt[C, R]) Run(ctx context.Context) (Kill[C, R], error) {
	var k Kill[C, R]
	start := h.Now()
	first := max(h.First, 1)
	for seed := first; seed < first+uint64(h.Seeds); seed++ {
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
		k.Killed, k.Seed, k.Checkers, k.Target, k.Config, k.Run = true, seed, kills, h.target(kills), c, r
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
				k.Killed, k.ByCorpus, k.Seed, k.Checkers, k.Target, k.Config, k.Run = true, true, h.Mutant.Seed(c), kills, h.target(kills), c, r
				break
			}
		}
	}
	k.Wall = h.Now().Sub(start)
	return k, nil
}

// shrink shrinks the kill while the mutant still fails its first checker
// that may kill it, keeping the smaller run only if the reference passes
// that checker on it.
func (h *Hunt[C, R]) shrink(ctx context.Context, k *Kill[C, R]) {
	start := h.Now()
	defer func() { k.ShrinkWall = h.Now().Sub(start) }()
	checker := k.Target
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
