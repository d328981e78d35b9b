package history

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// recordAndRead records a listing through l and reads it back through v.
func recordAndRead(t require.TestingT, l *Listings, v *ListingView, inst, method string, entries []string) (result string, back []string) {
	var ev Event
	l.Record(inst, method, entries, func(r string) {
		ev = Event{Kind: KindCall, Instance: inst, Method: method, Result: r}
	})
	set, ok := v.Apply(&ev)
	require.True(t, ok, ev.Result)
	return ev.Result, set.Sorted()
}

func TestListingsRoundTrip(t *testing.T) {
	var l Listings
	var v ListingView
	var got []string
	rec := func(inst, method string, entries []string) []string {
		r, back := recordAndRead(t, &l, &v, inst, method, entries)
		got = append(got, r)
		return back
	}
	fleet := []string{"a+", "b-", "c+", "d+", "e-", "f+"}
	require.Equal(t, []string{"a+", "b-"}, rec("c1", MethodListInstances, []string{"a+", "b-"}))
	require.Equal(t, []string{"a+", "b-"}, rec("c1", MethodListInstances, []string{"a+", "b-"}))
	require.Equal(t, []string{"a"}, rec("c1", MethodListVolumes, []string{"a"}))
	require.Equal(t, []string{"a+", "b-"}, rec("c2", MethodListInstances, []string{"a+", "b-"}))
	require.Empty(t, rec("c1", MethodListInstances, nil))
	require.Equal(t, fleet, rec("c1", MethodListInstances, fleet))
	// b starts and g appears: two changes in seven entries.
	require.Equal(t, []string{"a+", "b+", "c+", "d+", "e-", "f+", "g-"},
		rec("c1", MethodListInstances, []string{"a+", "b+", "c+", "d+", "e-", "f+", "g-"}))
	// Not ascending: written in full, read back as a set.
	require.Equal(t, []string{"a+", "b+", "c+"}, rec("c1", MethodListInstances, []string{"c+", "a+", "b+"}))
	require.Equal(t, []string{
		"2 = a+ b-", "2 same", "1 = a", "2 = a+ b-", "0 = ",
		"6 = a+ b- c+ d+ e- f+",
		"7 ~ +b+ -b- +g-",
		"3 = c+ a+ b+",
	}, got)
}

func TestListingViewRefusesWhatDoesNotAddUp(t *testing.T) {
	read := func(results ...string) bool {
		var v ListingView
		ok := false
		for _, r := range results {
			_, ok = v.Apply(&Event{Kind: KindCall, Instance: "c1", Method: MethodListVolumes, Result: r})
		}
		return ok
	}
	require.True(t, read("2 = a b", "2 ~ -a +c"))
	require.False(t, read("2 same"), "same with nothing before it")
	require.False(t, read("1 ~ +a"), "a change with nothing before it")
	require.False(t, read("2 = a b", "2 ~ -x +c"), "removes an entry the listing did not have")
	require.False(t, read("2 = a b", "3 ~ +a"), "adds an entry the listing had")
	require.False(t, read("2 = a b", "3 ~ +c +d"), "count does not match")
	require.False(t, read("3 = a b"), "count does not match")
	require.False(t, read("2 = a b", "2 ~ -a +c", "9 ~ +z", "2 same"), "unknown after an unreadable listing")
	require.True(t, read("2 = a b", "9 ~ +z", "1 = q"), "a full listing is read again")
	require.False(t, read("x = a"))
	require.False(t, read("2 ? a b"))
	require.False(t, read("2 = a b", "3 ~ + +c"))

	var v ListingView
	_, ok := v.Apply(&Event{Kind: KindCall, Method: MethodListVolumes, Err: "unreachable"})
	require.False(t, ok, "a failed listing returned nothing")
	_, ok = v.Apply(&Event{Kind: KindCall, Method: "objects.List", Result: "1 = a"})
	require.False(t, ok, "not a listing of the observer's")

	id, running := ParseInstanceEntry("ws-1+")
	require.Equal(t, "ws-1", id)
	require.True(t, running)
}

func TestListingSetContainer(t *testing.T) {
	var v ListingView
	set, ok := v.Apply(&Event{Kind: KindCall, Instance: "c1", Method: MethodListInstances, Result: "2 = a+ b-"})
	require.True(t, ok)
	for id, want := range map[string][2]bool{"a": {true, true}, "b": {true, false}, "c": {false, false}} {
		exists, running := set.Container(id)
		require.Equal(t, want, [2]bool{exists, running}, id)
	}
	require.Equal(t, 2, set.Len())
}

// Whatever sequence of listings an instance returns, what the view reads
// back is what was listed, as a set.
func TestListingsRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l Listings
		var v ListingView
		pool := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		var cur []string
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "how") {
			case 0: // a fresh subset
				cur = rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, len(pool), rapid.ID[string]).Draw(t, "fresh")
			case 1: // one entry toggled
				e := rapid.SampledFrom(pool).Draw(t, "toggle")
				if i := slices.Index(cur, e); i >= 0 {
					cur = slices.Delete(slices.Clone(cur), i, i+1)
				} else {
					cur = append(slices.Clone(cur), e)
				}
			case 2: // sorted
				cur = slices.Sorted(slices.Values(cur))
			}
			inst := rapid.SampledFrom([]string{"c1", "c2"}).Draw(t, "inst")
			_, back := recordAndRead(t, &l, &v, inst, MethodListVolumes, cur)
			require.Equal(t, append([]string{}, slices.Sorted(slices.Values(cur))...), back)
		}
	})
}
