package workspace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDelayedStartRunsLater(t *testing.T) {
	clock := NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	w := NewWorld(clock, nil)
	ctx := context.Background()
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	require.NoError(t, w.Storage.Provision(ctx, "b"))

	w.Instances.DelayStarts(2 * time.Minute)
	require.NoError(t, w.Instances.Start(ctx, "a", "img"))
	exists, running := w.Instances.State("a")
	require.True(t, exists)
	require.False(t, running, "a delayed start returns before the container runs")
	list, err := w.Instances.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.False(t, list[0].Running)
	require.NoError(t, w.Instances.Start(ctx, "a", "img"), "starting a starting container is success")

	w.Instances.DelayStarts(0)
	require.NoError(t, w.Instances.Start(ctx, "b", "img"))
	_, running = w.Instances.State("b")
	require.True(t, running, "immediate starts again")

	clock.Advance(2 * time.Minute)
	_, running = w.Instances.State("a")
	require.True(t, running, "the delayed container runs once its delay is over")

	w.Instances.Kill("a")
	_, running = w.Instances.State("a")
	require.False(t, running)
	var results []string
	for _, e := range w.Rec.Events() {
		if e.Method == "instances.Start" {
			results = append(results, e.Result)
		}
	}
	require.Equal(t, []string{"created, runs in 2m0s", "already starting", "created"}, results)
}
