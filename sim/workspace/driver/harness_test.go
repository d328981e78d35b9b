package driver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// world is a fake world and the deps of instance name on it, with the
// notes it takes collected.
type world struct {
	w     *wsfakes.World
	clock *wsfakes.Clock
	notes []string
}

func newWorld() *world {
	clock := wsfakes.NewClock(t0)
	return &world{w: wsfakes.NewWorld(clock, history.NewRecorder()), clock: clock}
}

func (w *world) deps(name string) ports.Deps {
	d := w.w.Deps(name)
	d.IDs = wsfakes.NewIDs(1)
	d.Limits = contracts.DefaultLimits
	d.Note = func(text string) { w.notes = append(w.notes, text) }
	return d
}

// What a child writes to standard error lands in the history as notes at
// the end of the exchange it was written in, after the notes it sent
// in-band during it; what it writes while closing is noted when it
// exits.
func TestStandardErrorAndNotesLandInTheHistoryInOrder(t *testing.T) {
	sys := fakeSystem(t, "notes", DefaultTimeout)
	w := newWorld()
	_, err := sys.NewAPI(w.deps("api"))
	require.NoError(t, err)
	c, err := sys.NewCoordinator(w.deps("coord-1"))
	require.NoError(t, err)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		next, err := c.Step(ctx)
		require.NoError(t, err)
		require.Equal(t, w.clock.Now().Add(time.Second), next)
		w.clock.Set(next)
	}
	require.NoError(t, c.Close(ctx))
	require.Equal(t, []string{
		"coord-1#1: note 1", "coord-1#1: stderr: stderr 1", "coord-1#1: stderr: line two",
		"coord-1#1: note 2", "coord-1#1: stderr: stderr 2", "coord-1#1: stderr: line two",
		"coord-1#1: stderr: closing",
	}, w.notes)
	_, err = c.Step(ctx)
	require.ErrorContains(t, err, "closed", "a closed coordinator is dead")
}

// A child that writes more to standard error in one exchange than a pipe
// holds does not block on it (the harness drains the pipe while it waits
// for the child's next message), and what it wrote is noted within the
// limits: 50 lines, 64 KiB.
func TestAChildThatWritesALotToStandardErrorGoesOn(t *testing.T) {
	sys := fakeSystem(t, "chatty", 5*time.Second)
	w := newWorld()
	_, err := sys.NewAPI(w.deps("api"))
	require.NoError(t, err)
	c, err := sys.NewCoordinator(w.deps("coord-1"))
	require.NoError(t, err)
	next, err := c.Step(context.Background())
	require.NoError(t, err, "the child went on after writing %d KiB", chattyLines)
	require.Equal(t, w.clock.Now().Add(time.Second), next)
	require.Empty(t, sys.Failures())
	require.Len(t, w.notes, maxNoteLines+2)
	require.True(t, strings.HasPrefix(w.notes[0], "coord-1#1: stderr: 000 xxx"), w.notes[0])
	kept := maxSegment / 1024
	require.Equal(t, []string{
		fmt.Sprintf("coord-1#1: stderr: … %d more lines", kept-maxNoteLines),
		fmt.Sprintf("coord-1#1: stderr: … %d more bytes", (chattyLines-kept)*1024),
	}, w.notes[maxNoteLines:])
}

// Overlapping API calls each get a process of their own; the idle process
// with the lowest number serves the next call.
func TestOverlappingAPICallsGetAProcessEach(t *testing.T) {
	sys := fakeSystem(t, "notes", DefaultTimeout)
	w := newWorld()
	d := w.deps("api")
	entered, release := make(chan struct{}), make(chan struct{})
	d.Store = blockingStore{Store: d.Store, entered: entered, release: release}
	svc, err := sys.NewAPI(d)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = svc.Get(context.Background(), "u", "missing")
		}()
		<-entered // call i is inside its store.get: the next must not wait for it
	}
	close(release)
	wg.Wait()
	for _, err := range errs {
		require.ErrorIs(t, err, contracts.ErrNotFound)
	}
	a := svc.(*api)
	require.Len(t, a.all, 2)
	require.Equal(t, []string{"api#1", "api#2"}, []string{a.idle[0].label, a.idle[1].label})
	_, err = svc.Get(context.Background(), "u", "missing")
	require.ErrorIs(t, err, contracts.ErrNotFound)
	require.Len(t, a.all, 2, "an idle process is reused")
}

type blockingStore struct {
	ports.Store
	entered chan struct{}
	release chan struct{}
}

func (s blockingStore) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	select {
	case s.entered <- struct{}{}:
	case <-s.release:
	}
	<-s.release
	return s.Store.Get(ctx, id)
}

// An API process that calls a coordinator's method breaks the protocol:
// the call fails, the failure is reported, and the next call gets a new
// process.
func TestAnAPIProcessMayNotTakeTheLeaderLock(t *testing.T) {
	sys := fakeSystem(t, "wrong-role", DefaultTimeout)
	w := newWorld()
	svc, err := sys.NewAPI(w.deps("api"))
	require.NoError(t, err)
	_, err = svc.Get(context.Background(), "u", "x")
	require.ErrorContains(t, err, `method "leadership.try_acquire" is for a coordinator, not for a api`)
	require.Len(t, sys.Failures(), 1)
	_, err = svc.Get(context.Background(), "u", "x")
	require.Error(t, err)
	require.Len(t, svc.(*api).all, 2, "a new process took the dead one's place")
}
