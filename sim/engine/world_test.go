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
