package conform

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLagWatchKeepsTheWorstAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l := watchLag(ctx)
	t0 := time.Now()
	l.note(20*time.Millisecond, t0)
	l.note(70*time.Millisecond, t0.Add(time.Second))
	l.note(30*time.Millisecond, t0.Add(2*time.Second))
	worst, at := l.worst()
	require.GreaterOrEqual(t, worst, 70*time.Millisecond, "the watcher's own measurements only add to it")
	if worst == 70*time.Millisecond {
		require.Equal(t, t0.Add(time.Second), at)
	}
	cancel()
	<-l.done // the goroutine ends with its context

	require.True(t, (&Result{MaxStall: 51 * time.Millisecond}).Stalled())
	require.False(t, (&Result{MaxStall: 50 * time.Millisecond}).Stalled(), "within the tolerance")
}
