package recorded_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
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

// Every check of the leader lock is recorded, successful ones included,
// with the lease's epoch (SPEC 3.1's re-check is judged on the history),
// and so is the observed_at a bulk observation stamped.
func TestLeaseChecksAndPassesAreRecorded(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	w := wsfakes.NewWorld(wsfakes.NewClock(at), nil)
	rec := history.NewRecorder()
	d := recorded.Deps(w.Deps("c1"), rec)
	lease, ok, err := d.Leadership.TryAcquire(ctx, "c1")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, lease.Check(ctx))
	w.Store.KillSession("c1")
	require.Error(t, lease.Check(ctx))
	require.NoError(t, d.Store.MarkObserved(ctx, contracts.Writer{Component: contracts.CompHealthMonitor, Instance: "c1"}, nil, at))

	var checks []history.Event
	var pass *history.Event
	for _, e := range rec.Events() {
		switch {
		case e.Method == "store.Check":
			checks = append(checks, e)
		case e.Method == history.NoteHealthPass:
			pass = &e
		}
	}
	require.Len(t, checks, 2)
	require.Empty(t, checks[0].Err, "a successful check is recorded")
	require.Equal(t, lease.Epoch(), checks[0].Epoch)
	require.NotEmpty(t, checks[1].Err)
	require.NotNil(t, pass)
	require.Equal(t, "observed_at="+at.Format(time.RFC3339Nano), pass.Args)
}
