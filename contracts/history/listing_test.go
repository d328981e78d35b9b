package history

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListingsRoundTrip(t *testing.T) {
	var l Listings
	var v ListingView
	var got []string
	rec := func(inst, method string, entries []string) []string {
		var ev Event
		l.Record(inst, method, entries, func(result string) {
			ev = Event{Kind: KindCall, Instance: inst, Method: method, Result: result}
		})
		got = append(got, ev.Result)
		out, ok := v.Entries(&ev)
		require.True(t, ok, ev.Result)
		return out
	}
	require.Equal(t, []string{"a+", "b-"}, rec("c1", MethodListInstances, []string{"a+", "b-"}))
	require.Equal(t, []string{"a+", "b-"}, rec("c1", MethodListInstances, []string{"a+", "b-"}))
	require.Equal(t, []string{"a"}, rec("c1", MethodListVolumes, []string{"a"}))
	require.Equal(t, []string{"a+", "b-"}, rec("c2", MethodListInstances, []string{"a+", "b-"}))
	require.Empty(t, rec("c1", MethodListInstances, nil))
	require.Equal(t, []string{"2 = a+ b-", "2 same", "1 = a", "2 = a+ b-", "0 = "}, got)

	_, ok := v.Entries(&Event{Kind: KindCall, Method: MethodListVolumes, Err: "unreachable"})
	require.False(t, ok, "a failed listing returned nothing")
	id, running := ParseInstanceEntry("ws-1+")
	require.Equal(t, "ws-1", id)
	require.True(t, running)
}
