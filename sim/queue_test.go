package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestQueuePopsByTimeThenSchedulingOrder(t *testing.T) {
	var q queue
	q.push(event{at: 30, name: "c"})
	q.push(event{at: 10, name: "a1"})
	q.push(event{at: 20, name: "b"})
	q.push(event{at: 10, name: "a2"})
	q.push(event{at: 10, name: "a3"})
	var got []string
	for q.len() > 0 {
		got = append(got, q.pop().name)
	}
	require.Equal(t, []string{"a1", "a2", "a3", "b", "c"}, got)
	_, ok := q.peek()
	require.False(t, ok)
}

// TestQueueProperty: whatever is pushed, in whatever interleaving with
// pops, each pop returns the least (time, sequence) pending.
func TestQueueProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q queue
		var pending []event
		steps := rapid.IntRange(1, 200).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			if len(pending) > 0 && rapid.Bool().Draw(t, "pop") {
				best := 0
				for j := range pending {
					if pending[j].before(&pending[best]) {
						best = j
					}
				}
				top, ok := q.peek()
				if !ok || top.seq != pending[best].seq {
					t.Fatalf("peek: got %+v, want seq %d", top, pending[best].seq)
				}
				got := q.pop()
				if got.seq != pending[best].seq || got.at != pending[best].at {
					t.Fatalf("pop: got (%d,%d), want (%d,%d)", got.at, got.seq, pending[best].at, pending[best].seq)
				}
				pending = append(pending[:best], pending[best+1:]...)
				continue
			}
			at := rapid.Int64Range(0, 20).Draw(t, "at")
			seq := q.push(event{at: at})
			pending = append(pending, event{at: at, seq: seq})
		}
		if q.len() != len(pending) {
			t.Fatalf("len %d, want %d", q.len(), len(pending))
		}
	})
}

func TestSubSeedStreamsAreDistinctAndStable(t *testing.T) {
	seen := map[uint64]string{}
	for seed := uint64(0); seed < 50; seed++ {
		for _, path := range [][]uint64{{}, {streamWorkload}, {streamAPIIDs}, {streamFaults}, {streamCoordinatorIDs, 1, 1}, {streamCoordinatorIDs, 1, 2}, {streamCoordinatorIDs, 2, 1}} {
			s := SubSeed(seed, path...)
			require.Equal(t, s, SubSeed(seed, path...), "stable")
			_, dup := seen[s]
			require.False(t, dup, "seed %d path %v collides with %s", seed, path, seen[s])
			seen[s] = "x"
		}
	}
}
