package streams

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSubSeedStreamsAreDistinctAndStable(t *testing.T) {
	seen := map[uint64]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		for _, path := range [][]uint64{{}, {1}, {2}, {3}, {4, 1, 1}, {4, 1, 2}, {4, 2, 1}} {
			s := SubSeed(seed, path...)
			require.Equal(t, s, SubSeed(seed, path...), "stable")
			require.False(t, seen[s], "seed %d path %v collides", seed, path)
			seen[s] = true
		}
	}
	a, b := NewRand(7), NewRand(7)
	for range 10 {
		require.Equal(t, a.Uint64(), b.Uint64())
	}
}
