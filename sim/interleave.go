package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// interleaver runs several API calls "at the same virtual instant" as
// concurrent requests would run: each in its own goroutine, one at a time,
// switching between them at every store call of the API (before the call
// goes out), the next one to run drawn from the run's seed. Only one
// goroutine ever runs, so the run stays deterministic; what it exposes is
// every order in which concurrent requests' reads and writes can reach
// the DB (a check made outside the guarded write, say).
type interleaver struct {
	rng *rand.Rand
	// During a run: cur is the running call; resume wakes call i; back
	// tells the scheduler that the running call yielded or finished.
	active bool
	cur    int
	resume []chan struct{}
	back   chan bool // true: finished
}

func newInterleaver(seed uint64) *interleaver {
	return &interleaver{rng: newRand(SubSeed(seed, streamInterleave))}
}

// run runs calls concurrently, interleaved at their store calls, and
// returns once every one has returned. A panic in a call is re-raised
// here, in the caller's goroutine.
func (il *interleaver) run(calls []func()) {
	if len(calls) < 2 || il.active {
		for _, c := range calls {
			c()
		}
		return
	}
	il.active = true
	defer func() { il.active = false }()
	il.resume = make([]chan struct{}, len(calls))
	il.back = make(chan bool)
	panics := make([]any, len(calls))
	for i, c := range calls {
		il.resume[i] = make(chan struct{})
		go func() {
			<-il.resume[i]
			defer func() {
				panics[i] = recover()
				il.back <- true
			}()
			c()
		}()
	}
	alive := make([]int, len(calls))
	for i := range alive {
		alive[i] = i
	}
	for len(alive) > 0 {
		k := il.rng.IntN(len(alive))
		il.cur = alive[k]
		il.resume[il.cur] <- struct{}{}
		if <-il.back {
			alive = append(alive[:k], alive[k+1:]...)
		}
	}
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
}

// yield hands the turn back to the scheduler and waits for it, when a
// concurrent run is on (called only from the running call's goroutine).
func (il *interleaver) yield() {
	if !il.active {
		return
	}
	i := il.cur
	il.back <- false
	<-il.resume[i]
}

// interleavedStore is the API's store: every call first yields, so that
// concurrent requests interleave their reads and writes.
type interleavedStore struct {
	ports.Store
	il *interleaver
}

func (x interleavedStore) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	x.il.yield()
	return x.Store.Get(ctx, id)
}

func (x interleavedStore) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	x.il.yield()
	return x.Store.List(ctx, f)
}

func (x interleavedStore) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	x.il.yield()
	return x.Store.Insert(ctx, w, ws)
}

func (x interleavedStore) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	x.il.yield()
	return x.Store.Update(ctx, w, id, c, p)
}

func (x interleavedStore) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	x.il.yield()
	return x.Store.InsertWithinLimits(ctx, w, ws, l)
}

func (x interleavedStore) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	x.il.yield()
	return x.Store.UpdateWithinLimits(ctx, w, id, c, p, l)
}

func (x interleavedStore) UpdateMany(ctx context.Context, w contracts.Writer, u []ports.RowUpdate) error {
	x.il.yield()
	return x.Store.UpdateMany(ctx, w, u)
}

func (x interleavedStore) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	x.il.yield()
	return x.Store.MarkObserved(ctx, w, ids, at)
}

// apiRace has the owners of up to N workspaces ask for RUNNING at the same
// instant, their requests interleaved: the workspaces of one owner when
// one has several that are not running (the per-user limit is what such a
// race tests), else of anyone.
func (f *faults) apiRace(a Action) {
	s := f.s
	byOwner := map[string][]*contracts.Workspace{}
	var owners []string
	snap := s.world.Store.Snapshot()
	for i := range snap {
		w := &snap[i]
		if w.Deleted() || w.Terminal() || w.DesiredState == contracts.DesiredRunning {
			continue
		}
		if byOwner[w.OwnerUserID] == nil {
			owners = append(owners, w.OwnerUserID)
		}
		byOwner[w.OwnerUserID] = append(byOwner[w.OwnerUserID], w)
	}
	var several []string
	for _, o := range owners {
		if len(byOwner[o]) > 1 {
			several = append(several, o)
		}
	}
	var targets []*contracts.Workspace
	if o := pickOf(a, several); o != "" {
		targets = byOwner[o]
	} else {
		for _, o := range owners {
			targets = append(targets, byOwner[o]...)
		}
	}
	n := min(max(a.N, 2), len(targets))
	if n < 2 {
		f.skipped(a, "fewer than two workspaces to race")
		return
	}
	s.record(history.Event{Kind: history.KindFault, Method: evAPIRace, Args: fmt.Sprintf("%d concurrent requests for RUNNING", n)})
	running := string(contracts.DesiredRunning)
	calls := make([]func(), n)
	for i := range n {
		w := targets[(a.Pick/2+i)%len(targets)]
		calls[i] = func() {
			_, _ = s.api.Patch(s.ctx, w.OwnerUserID, w.ID, ports.PatchRequest{DesiredState: &running})
		}
	}
	f.il.run(calls)
}
