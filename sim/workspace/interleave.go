package workspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// interleaver runs several API calls "at the same virtual instant" as
// concurrent requests would run: each in its own goroutine, switching
// between them at every port call of the API (before the call goes out),
// the next one to run drawn from the run's seed. One goroutine runs at a
// time, so the run stays deterministic; what it exposes is every order in
// which concurrent requests' reads and writes can reach the DB (a check
// made outside the guarded write, say).
//
// An implementation may serialise its requests itself (an in-process
// mutex): a goroutine resumed while another, parked at a port call, holds
// that lock cannot run. The scheduler sees it blocked (its stack is
// waiting, not at a port call) and runs another one; a goroutine that
// gets such a lock when its holder lets go runs to its next port call
// before the scheduler chooses again. Choices are made only when no
// goroutine runs, so they depend on the seed and the code, not on timing.
type interleaver struct {
	rng *rand.Rand
	// serial runs the calls one after another, in an order drawn from
	// the seed: the system's API lives in another process (SerialAPI),
	// where the scheduler cannot stop a request at its port calls.
	serial bool
	// During a run: cur is the goroutine the scheduler resumed; resume
	// wakes goroutine i; back carries each goroutine's "parked at a port
	// call" or "finished" message; gids are the goroutines' ids.
	active bool
	cur    int
	resume []chan struct{}
	back   chan step
	gids   []string
	// parkedAt maps a goroutine id to its index, for yield.
	mu      sync.Mutex
	indexOf map[string]int
}

// step is a goroutine's message to the scheduler.
type step struct {
	i        int
	finished bool
}

func newInterleaver(seed uint64, system ports.System) *interleaver {
	il := &interleaver{rng: newRand(SubSeed(seed, streamInterleave))}
	if sa, ok := system.(SerialAPI); ok {
		il.serial = sa.SerialAPI()
	}
	return il
}

// SerialAPI is implemented by a system whose API the simulator cannot
// interleave (an implementation in a child process, reached through the
// driver protocol): when SerialAPI returns true, an api-race runs its
// concurrent requests one after another, in an order drawn from the seed.
// The same plan then records another history than in process, where the
// requests interleave at their port calls.
type SerialAPI interface {
	SerialAPI() bool
}

// goid is the calling goroutine's id, from its stack header.
func goid() string {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := strings.Fields(string(buf[:n]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// run runs calls concurrently, interleaved at their port calls, and
// returns once every one has returned. A panic in a call is re-raised
// here, in the caller's goroutine.
func (il *interleaver) run(calls []func()) {
	if len(calls) < 2 || il.active {
		for _, c := range calls {
			c()
		}
		return
	}
	if il.serial {
		for _, i := range il.rng.Perm(len(calls)) {
			calls[i]()
		}
		return
	}
	n := len(calls)
	il.active = true
	defer func() { il.active = false }()
	il.resume = make([]chan struct{}, n)
	il.back = make(chan step, 2*n+2)
	il.gids = make([]string, n)
	il.indexOf = map[string]int{}
	started := make(chan struct{})
	panics := make([]any, n)
	for i, c := range calls {
		il.resume[i] = make(chan struct{})
		go func() {
			id := goid()
			il.mu.Lock()
			il.gids[i], il.indexOf[id] = id, i
			il.mu.Unlock()
			started <- struct{}{}
			<-il.resume[i]
			defer func() {
				panics[i] = recover()
				il.back <- step{i: i, finished: true}
			}()
			c()
		}()
	}
	for range n {
		<-started
	}
	// parked: waiting at a port call (or not started); blocked: waiting
	// on something else; done: returned.
	parked := make([]bool, n)
	done := make([]bool, n)
	for i := range parked {
		parked[i] = true
	}
	left := n
	for left > 0 {
		var ready []int
		for i := range n {
			if parked[i] && !done[i] {
				ready = append(ready, i)
			}
		}
		if len(ready) == 0 {
			panic("api-race: every concurrent request is blocked: a deadlock in the API under test")
		}
		il.cur = ready[il.rng.IntN(len(ready))]
		parked[il.cur] = false
		il.resume[il.cur] <- struct{}{}
		left -= il.settle(parked, done)
	}
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
}

// settle waits until no goroutine of the run is running: each is parked
// at a port call, finished, or blocked. It returns how many finished.
func (il *interleaver) settle(parked, done []bool) int {
	finished := 0
	take := func(m step) {
		if m.finished {
			done[m.i] = true
			finished++
		} else {
			parked[m.i] = true
		}
	}
	for {
		// Take what has arrived; once every goroutine is parked or
		// finished there is nothing to wait for.
		select {
		case m := <-il.back:
			take(m)
			continue
		default:
		}
		pending := false
		for i := range parked {
			if !parked[i] && !done[i] {
				pending = true
			}
		}
		if !pending {
			return finished
		}
		select {
		case m := <-il.back:
			take(m)
			continue
		case <-time.After(time.Millisecond):
		}
		// Some goroutine neither parked nor finished: settled only if
		// each such one is waiting (blocked), none running.
		waiting := il.waiting()
		settled := true
		for i := range parked {
			if !parked[i] && !done[i] && !waiting[il.gids[i]] {
				settled = false
			}
		}
		if settled && len(il.back) == 0 {
			return finished
		}
	}
}

// waiting returns the ids of the run's goroutines that are waiting (not
// running, not runnable), from a dump of every goroutine's stack.
func (il *interleaver) waiting() map[string]bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]bool{}
	for _, block := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(block, "\n")
		f := strings.Fields(header)
		if len(f) < 3 || f[0] != "goroutine" {
			continue
		}
		if _, ours := il.indexOf[f[1]]; !ours {
			continue
		}
		_, state, _ := strings.Cut(header, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		if blockedStates[state] {
			out[f[1]] = true
		}
	}
	return out
}

// blockedStates are the goroutine states (runtime.Stack's wait reasons)
// of a request that waits on something another request must release: a
// lock, a channel, a condition, a pipe. Anything else — running,
// runnable, preempted, or helping the garbage collector ("GC assist
// wait"), which a loaded machine shows often — is a request still on its
// way to its next port call: taking it for blocked let two requests run at
// once, and the run depend on timing (an audit run of acme under load).
// "semacquire" is left out too: it is the runtime's own semaphores (a
// request starting a GC cycle waits on the one the scheduler's stack dump
// holds), never the API's locks, which wait as "sync.Mutex.Lock".
var blockedStates = map[string]bool{
	"sync.Mutex.Lock": true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true,
	"sync.Cond.Wait": true, "chan receive": true, "chan send": true, "chan receive (nil chan)": true,
	"chan send (nil chan)": true, "select": true, "select (no cases)": true, "IO wait": true, "sleep": true,
	"sync.WaitGroup.Wait": true,
}

// yield parks the calling goroutine of a concurrent run until the
// scheduler resumes it (a no-op outside a run, or for another goroutine).
func (il *interleaver) yield() {
	if !il.active {
		return
	}
	il.mu.Lock()
	i, ok := il.indexOf[goid()]
	il.mu.Unlock()
	if !ok {
		return
	}
	il.back <- step{i: i}
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

// interleavedBus is the API's bus: every call first yields.
type interleavedBus struct {
	ports.Bus
	il *interleaver
}

func (x interleavedBus) Publish(ctx context.Context, channel, payload string) error {
	x.il.yield()
	return x.Bus.Publish(ctx, channel, payload)
}

func (x interleavedBus) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	x.il.yield()
	return x.Bus.Subscribe(ctx, channels...)
}

func (x interleavedBus) Incr(ctx context.Context, key string) (int64, error) {
	x.il.yield()
	return x.Bus.Incr(ctx, key)
}

func (x interleavedBus) Decr(ctx context.Context, key string) (int64, error) {
	x.il.yield()
	return x.Bus.Decr(ctx, key)
}

func (x interleavedBus) Get(ctx context.Context, key string) (string, bool, error) {
	x.il.yield()
	return x.Bus.Get(ctx, key)
}

func (x interleavedBus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	x.il.yield()
	return x.Bus.Set(ctx, key, value, ttl)
}

func (x interleavedBus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	x.il.yield()
	return x.Bus.SetNX(ctx, key, value, ttl)
}

func (x interleavedBus) Del(ctx context.Context, keys ...string) error {
	x.il.yield()
	return x.Bus.Del(ctx, keys...)
}

// interleavedIDs is the API's id source: drawing an id yields too, so
// that concurrent requests draw in the scheduler's order.
type interleavedIDs struct {
	ports.IDs
	il *interleaver
}

func (x interleavedIDs) NewID() string {
	x.il.yield()
	return x.IDs.NewID()
}

// apiRace has the owners of up to N workspaces ask for RUNNING at the same
// instant, their requests interleaved: the workspaces of one owner when
// one has several that are not running (the per-user limit is what such a
// race tests), else of anyone. Then, when a workspace is in ERROR, N
// administrators recover it at the same instant (recoveryRace).
func (f *faults) apiRace(a Action) {
	f.runningRace(a)
	f.recoveryRace(a)
	if !f.s.work.legacy {
		f.rowRace(a)
	}
}

// rowRace has up to N requests on one workspace arrive at the same
// instant, interleaved: its owner's desired change, DELETE and edit, and
// an administrator's recovery when it is in ERROR (SPEC 4.3: every write
// is conditioned on what its request checked, so a DELETE that lands
// first makes the desired change answer 409, not resurrect the row). The
// workspace is one with an operation running (Pick even, when there is
// one) or any of the workload's live ones.
func (f *faults) rowRace(a Action) {
	s := f.s
	var busy, live []*userWorkspace
	snap := s.world.Store.Snapshot()
	for i := range snap {
		w := &snap[i]
		u := s.work.byI[w.ID]
		if u == nil || u.deleted || u.scripted || u.state == stGone || w.Deleted() {
			continue
		}
		live = append(live, u)
		if w.Operation != contracts.OpNone {
			busy = append(busy, u)
		}
	}
	cands := live
	if a.Pick%2 == 0 && len(busy) > 0 {
		cands = busy
	}
	if len(cands) == 0 {
		return
	}
	u := cands[(a.Pick/2)%len(cands)]
	row, err := s.world.Store.Get(s.ctx, u.id)
	if err != nil {
		return
	}
	to := otherLevel(row.DesiredState)
	menu := []func(){
		func() { _, _ = s.api.Patch(s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: to}) },
		func() { s.work.deleteNow(u) },
		func() {
			memo := "raced at " + s.Elapsed().String()
			_, _ = s.api.Patch(s.ctx, u.owner, u.id, ports.PatchRequest{Memo: &memo})
		},
	}
	if row.Terminal() {
		menu = append(menu, func() { s.work.recover(u) })
	}
	n := min(max(a.N, 2), len(menu))
	start := a.Pick % len(menu)
	calls := make([]func(), n)
	for i := range calls {
		calls[i] = menu[(start+i)%len(menu)]
	}
	s.record(history.Event{Kind: history.KindFault, Method: evAPIRace, Workspace: u.id, Args: fmt.Sprintf("%d concurrent requests on one workspace", n)})
	f.il.run(calls)
}

// recoveryRace has N administrators recover one workspace in ERROR (a
// terminal error_info) at the same instant, their requests interleaved:
// SPEC 4.3 lets exactly one of them reset the row (the others find it no
// longer in ERROR: 409), which only a recovery conditioned on the error in
// its write achieves. Each goes through the workload's recovery, which
// keeps the user's model (a DataLost recovery acknowledges the loss). It
// draws nothing when no workspace is in ERROR.
func (f *faults) recoveryRace(a Action) {
	s := f.s
	var ids []string
	snap := s.world.Store.Snapshot()
	for i := range snap {
		w := &snap[i]
		if u := s.work.byI[w.ID]; u != nil && !u.deleted && !w.Deleted() && w.Terminal() {
			ids = append(ids, w.ID)
		}
	}
	id := pickOf(a, ids)
	if id == "" {
		return
	}
	n := max(a.N, 2)
	u := s.work.byI[id]
	s.record(history.Event{Kind: history.KindFault, Method: evAPIRace, Workspace: id, Args: fmt.Sprintf("%d concurrent recoveries", n)})
	calls := make([]func(), n)
	for i := range calls {
		calls[i] = func() { s.work.recover(u) }
	}
	f.il.run(calls)
}

// runningRace is the race of requests for RUNNING (see apiRace).
func (f *faults) runningRace(a Action) {
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
