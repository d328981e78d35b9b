package runner

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// bubbleClock reads the (bubble's) real clock and keeps the fakes' clock in
// step with it, so the world and the coordinators agree on the time.
type bubbleClock struct {
	mu sync.Mutex
	fc *wsfakes.Clock
}

func (c *bubbleClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().UTC()
	if now.After(c.fc.Now()) {
		c.fc.Set(now)
	}
	return c.fc.Now()
}

// The reference coordinator, driven by the production runner (goroutines,
// timers, the real clock — a synctest bubble's), converges a workspace and
// fails over when its leader is stopped.
func TestReferenceUnderTheProductionRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := wsfakes.NewClock(time.Now().UTC())
		clock := &bubbleClock{fc: fc}
		world := wsfakes.NewWorld(fc, history.NewRecorder())
		sys := wsref.NewSystem()
		deps := func(name string, seed uint64) ports.Deps {
			d := world.Deps(name)
			d.Clock, d.IDs, d.Limits = clock, wsfakes.NewIDs(seed), contracts.DefaultLimits
			return d
		}
		api, err := sys.NewAPI(deps("api", 1))
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		type proc struct {
			coord  ports.Coordinator
			cancel context.CancelFunc
			done   chan error
		}
		start := func(name string, seed uint64) *proc {
			c, err := sys.NewCoordinator(deps(name, seed))
			require.NoError(t, err)
			pctx, pcancel := context.WithCancel(ctx)
			p := &proc{coord: c, cancel: pcancel, done: make(chan error, 1)}
			go func() { p.done <- Run(pctx, c, clock, Config{}) }()
			return p
		}
		a := start("coord-a", 2)
		time.Sleep(10 * time.Millisecond)
		b := start("coord-b", 3)

		ws, err := api.Create(ctx, "alice", ports.CreateRequest{Name: "dev", ImageRef: "img"})
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got, err := world.Store.Get(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, contracts.DisplayRunning, contracts.Display(&got))
		require.True(t, a.coord.IsLeader())
		require.False(t, b.coord.IsLeader())

		// Stop the leader cleanly: it releases the lock and b takes over.
		a.cancel()
		require.ErrorIs(t, <-a.done, context.Canceled)
		_, err = api.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: ptr("STANDBY")})
		require.NoError(t, err)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		require.True(t, b.coord.IsLeader())
		got, err = world.Store.Get(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, contracts.DisplayStandby, contracts.Display(&got))
		require.Equal(t, "coord-b", world.Store.Holder())

		cancel()
		require.ErrorIs(t, <-b.done, context.Canceled)
	})
}

func ptr[T any](v T) *T { return &v }
