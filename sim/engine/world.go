package engine

import (
	"context"
	"errors"
	"fmt"
)

// World is what the engine asks of a simulated world (sim/workspace,
// sim/oracle) to run, double-check and shrink its seeds. C is a run's
// configuration (its seed, its shape and the system under test), R what a
// run gives back.
type World[C, R any] interface {
	// Seed is c's seed.
	Seed(c C) uint64
	// Run runs c once. judged is false for a run made only for its
	// history hash (the second run of Twice): the world may skip the
	// checkers then.
	Run(ctx context.Context, c C, judged bool) (R, error)
	// Hash is r's history hash: the run's determinism fingerprint.
	Hash(r R) string
	// Violated lists the checkers r violates, in report order, and
	// Failure for a harness failure.
	Violated(r R) []string
}

// ErrNondeterministic marks a seed whose two runs recorded different
// histories.
var ErrNondeterministic = errors.New("nondeterministic: the same seed gave two different histories")

// Twice runs c twice, the first run judged and the second only for its
// hash, and returns both. When the two history hashes differ the error
// wraps ErrNondeterministic and both runs are returned, so that the world
// can say where they part; when the second run could not be made, the
// first is returned with the error.
func Twice[C, R any](ctx context.Context, w World[C, R], c C) (first, second R, err error) {
	first, err = w.Run(ctx, c, true)
	if err != nil {
		return first, second, err
	}
	second, err = w.Run(ctx, c, false)
	if err != nil {
		return first, second, fmt.Errorf("second run of seed %d: %w", w.Seed(c), err)
	}
	if a, b := w.Hash(first), w.Hash(second); a != b {
		return first, second, fmt.Errorf("seed %d: %w (hashes %.12s and %.12s)", w.Seed(c), ErrNondeterministic, a, b)
	}
	return first, second, nil
}
