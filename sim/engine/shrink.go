package engine

import (
	"context"
	"fmt"
)

// ShrinkList reduces items by delta debugging: it removes chunks (halves,
// then quarters, …) while try reports that what is left still fails, and
// returns the smallest list found. try reports false once a budget runs
// out, so ShrinkList ends gracefully; an error from try ends it at once.
func ShrinkList[A any](items []A, try func([]A) (bool, error)) ([]A, error) {
	for n := 2; len(items) > 0; {
		if n > len(items) {
			n = len(items)
		}
		removed := false
		for i := 0; i < n; i++ {
			lo, hi := i*len(items)/n, (i+1)*len(items)/n
			rest := append(append([]A{}, items[:lo]...), items[hi:]...)
			ok, err := try(rest)
			if err != nil {
				return items, err
			}
			if ok {
				items, removed = rest, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if n == len(items) {
				break
			}
			n *= 2
		}
	}
	return items, nil
}

// Shrinking is one shrink of a failing run, bounded by a number of runs
// (never by time, so the same failing run always shrinks to the same
// counterexample): the smallest failing configuration found so far, its
// run, and Try, which runs a smaller candidate and keeps it when it still
// fails. A world's shrink is a list of steps (see Shrink), each proposing
// candidates made from Best through Try.
type Shrinking[C, R any] struct {
	// Best is the smallest failing configuration found; Run is its run.
	Best C
	Run  R
	// Runs counts the runs made, the first (of the original) included.
	Runs int

	ctx    context.Context
	world  World[C, R]
	fails  func(R) bool
	budget int
}

// Try runs c and keeps it as Best when its run still fails. Once the
// budget is spent it runs nothing and reports false.
func (s *Shrinking[C, R]) Try(c C) (bool, error) {
	if s.Runs >= s.budget {
		return false, nil
	}
	r, err := s.world.Run(s.ctx, c, true)
	s.Runs++
	if err != nil {
		return false, err
	}
	if !s.fails(r) {
		return false, nil
	}
	s.Best, s.Run = c, r
	return true, nil
}

// Smallest tries the counts from, 2·from, 4·from, … below below, smallest
// first, in the configuration with(Best, n), and stops at the first that
// still fails. A candidate with reports as no smaller (false) is skipped
// without a run.
func (s *Shrinking[C, R]) Smallest(from, below int, with func(c C, n int) (C, bool)) error {
	for n := max(from, 1); n < below; n *= 2 {
		c, smaller := with(s.Best, n)
		if !smaller {
			continue
		}
		ok, err := s.Try(c)
		if err != nil || ok {
			return err
		}
	}
	return nil
}

// A ShrinkStep proposes smaller configurations than s.Best through s.Try.
type ShrinkStep[C, R any] func(s *Shrinking[C, R]) error

// Shrink reduces failing configuration c of world w to a smaller one that
// still fails, as judged by fails: it runs c (which must fail), then each
// step in order, within budget runs in all. It returns the shrink's state:
// Best and Run are the smallest failing configuration found and its run.
func Shrink[C, R any](ctx context.Context, w World[C, R], c C, fails func(R) bool, budget int, steps ...ShrinkStep[C, R]) (*Shrinking[C, R], error) {
	s := &Shrinking[C, R]{ctx: ctx, world: w, fails: fails, budget: budget}
	r, err := w.Run(ctx, c, true)
	s.Runs++
	if err != nil {
		return s, err
	}
	if !fails(r) {
		return s, fmt.Errorf("shrink: seed %d does not fail to begin with", w.Seed(c))
	}
	s.Best, s.Run = c, r
	for _, step := range steps {
		if err := step(s); err != nil {
			return s, err
		}
	}
	return s, nil
}
