package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// seedWorld runs a configuration (a seed) into a run that fails checker
// "even" on even seeds; its hash is the seed, and a leak makes the second
// run's hash differ, a broken run fail.
type seedWorld struct {
	leak   bool
	broken int // the run that fails to run (1 or 2; 0: none)
	runs   int
	judged []bool
}

type seedRun struct {
	seed uint64
	hash string
}

func (w *seedWorld) Seed(c uint64) uint64 { return c }

func (w *seedWorld) Run(_ context.Context, c uint64, judged bool) (seedRun, error) {
	w.runs++
	w.judged = append(w.judged, judged)
	if w.runs == w.broken {
		return seedRun{}, errors.New("broken")
	}
	h := fmt.Sprint(c)
	if w.leak && w.runs > 1 {
		h += "-leaked"
	}
	return seedRun{seed: c, hash: h}, nil
}

func (w *seedWorld) Hash(r seedRun) string { return r.hash }

func (w *seedWorld) Violated(r seedRun) []string {
	if r.seed%2 == 0 {
		return []string{"even"}
	}
	return nil
}

func TestTwiceJudgesTheFirstRunAndComparesHashes(t *testing.T) {
	ctx := context.Background()
	w := &seedWorld{}
	a, b, err := Twice[uint64, seedRun](ctx, w, 7)
	require.NoError(t, err)
	require.Equal(t, "7", a.hash)
	require.Equal(t, a, b)
	require.Equal(t, []bool{true, false}, w.judged, "the first run is judged, the second only hashed")

	w = &seedWorld{leak: true}
	a, b, err = Twice[uint64, seedRun](ctx, w, 7)
	require.ErrorIs(t, err, ErrNondeterministic)
	require.Contains(t, err.Error(), "seed 7")
	require.Equal(t, "7", a.hash, "both runs come back so the world can say where they part")
	require.Equal(t, "7-leaked", b.hash)

	w = &seedWorld{broken: 2}
	a, _, err = Twice[uint64, seedRun](ctx, w, 7)
	require.ErrorContains(t, err, "second run of seed 7: broken")
	require.Equal(t, "7", a.hash, "the first run comes back with the second's error")

	w = &seedWorld{broken: 1}
	_, _, err = Twice[uint64, seedRun](ctx, w, 7)
	require.EqualError(t, err, "broken")
	require.Equal(t, 1, w.runs, "no second run after the first failed")
}

func TestShrinkKeepsTheSmallestFailingConfigurationWithinItsBudget(t *testing.T) {
	ctx := context.Background()
	fails := func(r seedRun) bool { return len((&seedWorld{}).Violated(r)) > 0 }
	halve := func(s *Shrinking[uint64, seedRun]) error {
		return s.Smallest(1, int(s.Best), func(_ uint64, n int) (uint64, bool) { return uint64(n), n != 4 })
	}
	w := &seedWorld{}
	s, err := Shrink[uint64, seedRun](ctx, w, 12, fails, 40, halve)
	require.NoError(t, err)
	require.Equal(t, uint64(2), s.Best, "1 passes, 2 still fails")
	require.Equal(t, uint64(2), s.Run.seed)
	require.Equal(t, 3, s.Runs, "the original, then 1 and 2")
	require.Equal(t, w.runs, s.Runs)

	// The budget counts runs, the original's included; a skipped
	// candidate costs none.
	w = &seedWorld{}
	s, err = Shrink[uint64, seedRun](ctx, w, 12, fails, 2, halve)
	require.NoError(t, err)
	require.Equal(t, uint64(12), s.Best, "the budget ran out after trying 1")
	require.Equal(t, 2, w.runs)
	w = &seedWorld{}
	s, err = Shrink[uint64, seedRun](ctx, w, 12, func(r seedRun) bool { return r.seed%4 == 0 }, 40, halve)
	require.NoError(t, err)
	require.Equal(t, uint64(8), s.Best, "4 is skipped as no smaller")
	require.Equal(t, 4, w.runs, "12, then 1, 2 and 8")

	_, err = Shrink[uint64, seedRun](ctx, &seedWorld{}, 7, fails, 40, halve)
	require.ErrorContains(t, err, "seed 7 does not fail to begin with")
	w = &seedWorld{broken: 2}
	_, err = Shrink[uint64, seedRun](ctx, w, 12, fails, 40, halve)
	require.EqualError(t, err, "broken", "a run that cannot be made ends the shrink")
}
