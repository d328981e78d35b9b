package recorded_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/history"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/sim/workspace/recorded"
)

// A listing records what it returned, so that the observation-truth
// checker can judge each observation against it; an unchanged listing is
// recorded as "same".
func TestListingsRecordTheirContents(t *testing.T) {
	ctx := context.Background()
	w := wsfakes.NewWorld(wsfakes.NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)), nil)
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	require.NoError(t, w.Storage.Provision(ctx, "b"))
	require.NoError(t, w.Instances.Start(ctx, "a", "img"))
	rec := history.NewRecorder()
	d := recorded.Deps(w.Deps("c1"), rec)

	for range 2 {
		_, err := d.Instances.List(ctx)
		require.NoError(t, err)
		_, err = d.Storage.ListVolumes(ctx)
		require.NoError(t, err)
	}
	var got []string
	var view history.ListingView
	for _, e := range rec.Events() {
		got = append(got, e.Method+": "+e.Result)
		set, ok := view.Apply(&e)
		require.True(t, ok, e.Result)
		require.NotZero(t, set.Len())
	}
	require.Equal(t, []string{
		"instances.List: 1 = a+", "storage.ListVolumes: 2 = a b",
		"instances.List: 1 same", "storage.ListVolumes: 2 same",
	}, got)
}
