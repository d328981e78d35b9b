package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// A listing is kept as containers change rather than built per call; it
// must list what State reports of each container at the clock's time,
// through slow starts, kills, removals and deletes, and record the same.
func TestInstancesListingFollowsEveryChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := NewWorld(NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)), nil)
		ctx := t.Context()
		ids := []string{"a", "b", "c", "d"}
		for _, id := range ids {
			require.NoError(t, w.Storage.Provision(ctx, id))
		}
		var view history.ListingView
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			id := rapid.SampledFrom(ids).Draw(t, "id")
			switch rapid.IntRange(0, 6).Draw(t, "op") {
			case 0:
				require.NoError(t, w.Instances.Start(ctx, id, "img"))
			case 1:
				w.Instances.DelayStarts(time.Duration(rapid.IntRange(0, 20).Draw(t, "delay")) * time.Second)
			case 2:
				w.Instances.Kill(id)
			case 3:
				w.Instances.Remove(id)
			case 4:
				require.NoError(t, w.Instances.Delete(ctx, id))
			case 5:
				w.Clock.Advance(time.Duration(rapid.IntRange(1, 15).Draw(t, "advance")) * time.Second)
			}
			want := []ports.InstanceState{} // never nil: a JSON answer says []
			var wantEntries []string
			for _, id := range ids {
				if exists, running := w.Instances.State(id); exists {
					want = append(want, ports.InstanceState{WorkspaceID: id, Running: running})
					wantEntries = append(wantEntries, history.InstanceEntry(id, running))
				}
			}
			got, err := w.Instances.List(ctx)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, want, w.Instances.Snapshot())
			ev := w.Rec.Events()
			last := ev[len(ev)-1]
			set, ok := view.Apply(&last)
			require.True(t, ok, last.Result)
			require.Equal(t, append([]string{}, wantEntries...), set.Sorted())
		}
	})
}
