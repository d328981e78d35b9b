package chain

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The cache behaves as the plainest LRU set, a list in use order, with
// the chain's own txs taking places like any hash.
func TestTxCacheIsAnLRU(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		size := rapid.IntRange(1, 6).Draw(rt, "size")
		c := newTxCache(size)
		own := make([]*memTx, 6)
		for i := range own {
			own[i] = &memTx{}
		}
		// Model entries: 0–9 are hashes, 10–15 own txs.
		var model []int
		push := func(e int) {
			if j := slices.Index(model, e); j >= 0 {
				model = slices.Delete(model, j, j+1)
			} else if len(model) == size {
				model = model[1:]
			}
			model = append(model, e)
		}
		drop := func(e int) {
			if j := slices.Index(model, e); j >= 0 {
				model = slices.Delete(model, j, j+1)
			}
		}
		for i := rapid.IntRange(0, 300).Draw(rt, "ops"); i > 0; i-- {
			k := rapid.IntRange(0, 9).Draw(rt, "key")
			key := [32]byte{byte(k)}
			o := rapid.IntRange(0, 5).Draw(rt, "own")
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				require.Equal(rt, !slices.Contains(model, k), c.push(key))
				push(k)
			case 1:
				c.remove(key)
				drop(k)
			case 2:
				c.pushOwn(own[o])
				push(10 + o)
			case 3:
				c.removeOwn(own[o])
				drop(10 + o)
			default:
				require.Equal(rt, slices.Contains(model, k), c.has(key))
			}
			require.Equal(rt, len(model), c.len())
			for j, m := range own {
				require.Equal(rt, slices.Contains(model, 10+j), c.cachedOwn(m))
			}
			require.LessOrEqual(rt, len(c.queue)-c.head, 2*c.len()+64+1, "stale entries are dropped")
			require.LessOrEqual(rt, len(c.stamps), 2*c.hashes+64, "evicted hashes are swept")
		}
		for k := 0; k < 10; k++ {
			require.Equal(rt, slices.Contains(model, k), c.has([32]byte{byte(k)}))
		}
	})
}
