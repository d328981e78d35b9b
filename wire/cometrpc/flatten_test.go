package cometrpc

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveEventsMap is EventsMap as first written: the definition flatten
// must keep.
func naiveEventsMap(tmEvent string, events []ABCIEvent, extra map[string]string) map[string][]string {
	m := map[string][]string{"tm.event": {tmEvent}}
	for _, e := range events {
		for _, a := range e.Attributes {
			k := e.Type + "." + a.Key
			m[k] = append(m[k], a.Value)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		m[k] = append(m[k], extra[k])
	}
	return m
}

func TestEventsMapAgreesWithItsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 500 {
		types := 1 + rng.IntN(6)
		keys := 1 + rng.IntN(12) // up to 72 distinct keys: past the switch to an index
		var events []ABCIEvent
		for range rng.IntN(30) {
			e := ABCIEvent{Type: "t" + strconv.Itoa(rng.IntN(types))}
			if rng.IntN(10) == 0 {
				e.Type = "tm" // "tm.event" collides with the frame's own key
			}
			for range rng.IntN(8) {
				k := "k" + strconv.Itoa(rng.IntN(keys))
				if e.Type == "tm" && rng.IntN(2) == 0 {
					k = "event"
				}
				if rng.IntN(20) == 0 {
					k = strings.Repeat("long", 20) // past the scratch buffer
				}
				e.Attributes = append(e.Attributes, EventAttribute{Key: k, Value: strconv.Itoa(rng.IntN(1000))})
			}
			events = append(events, e)
		}
		var extra map[string]string
		if run%2 == 0 {
			extra = map[string]string{"tx.hash": "AB", "tx.height": "7", "t0.k0": "x"}
		}
		got := EventsMap("Tx", events, extra)
		require.Equal(t, naiveEventsMap("Tx", events, extra), got)
		for k := range got { // each key's values are its own: an append does not reach another key's
			got[k] = append(got[k], "appended")
		}
		require.Equal(t, 1, countOf(got, "appended", "tm.event"))
	}
	h := TxEventsMap("AB", 7, []ABCIEvent{{Type: "tx", Attributes: []EventAttribute{{Key: "hash", Value: "first"}}}})
	require.Equal(t, naiveEventsMap(TMEventTx, []ABCIEvent{{Type: "tx", Attributes: []EventAttribute{{Key: "hash", Value: "first"}}}},
		map[string]string{"tx.hash": "AB", "tx.height": "7"}), h)
}

func countOf(m map[string][]string, v, key string) int {
	n := 0
	for _, x := range m[key] {
		if x == v {
			n++
		}
	}
	return n
}
