package workspace

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// Call describes one port call to a Hook, before it runs.
type Call struct {
	// Instance is the caller: the name given to World.Deps ("" for a call
	// on the world's ports directly).
	Instance string
	// Port is "store", "feed", "instances", "storage", "objects" or "bus".
	Port string
	// Method is the bare method name: "Update", "Start", "Archive",
	// "Publish"… (leader calls are "TryAcquire", "Check" and "Release" on
	// port "store"; listener polls are "Poll" on "feed").
	Method string
	// Workspace is the workspace id the call concerns, if any (for object
	// calls, parsed from an archive key).
	Workspace string
	// Key is the object key, bus key or channel, or archive key, if any.
	Key string
}

// Hook sees every port call before it runs. A non-nil error fails the call
// with that error: it is recorded and has no effect.
type Hook func(c Call) error

// World is the in-memory reality every port of a simulation acts on.
type World struct {
	Clock     *Clock
	Rec       *history.Recorder
	Store     *Store
	Instances *Instances
	Storage   *Storage
	Objects   *Objects
	Bus       *Bus

	// mu guards the state of every part of the world.
	mu   sync.Mutex
	hook atomic.Pointer[Hook]

	calls           [numMethods]atomic.Int64
	failed          [numMethods]atomic.Int64
	droppedChanges  atomic.Int64
	droppedMessages atomic.Int64

	// listings writes what each successful listing returned into its
	// recorded Result (the observation-truth checker's evidence, C1).
	listings history.Listings
}

// NewWorld returns an empty world on clock, recording into rec. A nil clock
// starts at the zero time; a nil recorder is replaced by a new one.
func NewWorld(clock *Clock, rec *history.Recorder) *World {
	if clock == nil {
		clock = NewClock(time.Time{})
	}
	if rec == nil {
		rec = history.NewRecorder()
	}
	w := &World{Clock: clock, Rec: rec}
	w.Store = &Store{w: w, rows: make(map[string]*contracts.Workspace), sessions: make(map[string]*Session), advisory: make(map[int64]*advisoryHold)}
	w.Instances = &Instances{w: w, ctrs: make(map[string]*container)}
	w.Storage = &Storage{w: w, vols: make(map[string]map[string][]byte)}
	w.Objects = &Objects{w: w, data: make(map[string][]byte)}
	w.Bus = &Bus{w: w, kv: make(map[string]kvEntry)}
	return w
}

// SetHook installs h for every later call (nil removes it).
func (w *World) SetHook(h Hook) {
	if h == nil {
		w.hook.Store(nil)
		return
	}
	w.hook.Store(&h)
}

// Deps returns per-instance views of every port. Calls through them are
// attributed to instance (store writes keep their Writer's instance when it
// is set) and pass through the hook. Leadership is the DB session named
// instance (see Store.Session); when it has been killed, the next
// TryAcquire fails with contracts.ErrUnavailable and the view reconnects
// with a fresh session, as a database client would. A crashed process's
// session should be ended with Store.KillSession, as PostgreSQL ends a dead
// client's session; until then it keeps its lock. IDs and Limits are left
// for the caller.
func (w *World) Deps(instance string) ports.Deps {
	return ports.Deps{
		Instance:   instance,
		Store:      storeView{s: w.Store, inst: instance},
		Leadership: &leadershipView{s: w.Store, inst: instance, cur: w.Store.Session(instance)},
		Feed:       feedView{s: w.Store, inst: instance},
		Instances:  instancesView{x: w.Instances, inst: instance},
		Storage:    storageView{x: w.Storage, inst: instance},
		Objects:    objectsView{x: w.Objects, inst: instance},
		Bus:        busView{x: w.Bus, inst: instance},
		Clock:      w.Clock,
	}
}

// Stats counts calls by "port.Method" (e.g. "store.List").
type Stats struct {
	// Calls counts every call made, failed ones included.
	Calls map[string]int64
	// Failed counts calls failed by the hook or a done context.
	Failed map[string]int64
	// DroppedChanges and DroppedMessages count notifications and bus
	// messages lost to DropFeed and DropMessages.
	DroppedChanges, DroppedMessages int64
}

// Stats returns the call counters so far (methods never called are absent).
func (w *World) Stats() Stats {
	s := Stats{Calls: make(map[string]int64), Failed: make(map[string]int64)}
	for m := range numMethods {
		if n := w.calls[m].Load(); n != 0 {
			s.Calls[methods[m].full] = n
		}
		if n := w.failed[m].Load(); n != 0 {
			s.Failed[methods[m].full] = n
		}
	}
	s.DroppedChanges = w.droppedChanges.Load()
	s.DroppedMessages = w.droppedMessages.Load()
	return s
}

// method enumerates the hooked port methods.
type method uint8

const (
	mStoreGet method = iota
	mStoreList
	mStoreInsert
	mStoreUpdate
	mStoreUpdateMany
	mStoreMarkObserved
	mStoreTryAcquire
	mStoreCheck
	mStoreRelease
	mFeedListen
	mFeedPoll
	mInstStart
	mInstDelete
	mInstList
	mStorProvision
	mStorListVolumes
	mStorArchive
	mStorRestore
	mStorDeleteVolume
	mObjPut
	mObjGet
	mObjHead
	mObjList
	mObjDelete
	mBusPublish
	mBusSubscribe
	mBusPoll
	mBusIncr
	mBusDecr
	mBusGet
	mBusSet
	mBusSetNX
	mBusDel
	numMethods
)

type methodInfo struct{ port, name, full string }

func mi(port, name string) methodInfo { return methodInfo{port, name, port + "." + name} }

var methods = [numMethods]methodInfo{
	mStoreGet:          mi("store", "Get"),
	mStoreList:         mi("store", "List"),
	mStoreInsert:       mi("store", "Insert"),
	mStoreUpdate:       mi("store", "Update"),
	mStoreUpdateMany:   mi("store", "UpdateMany"),
	mStoreMarkObserved: mi("store", "MarkObserved"),
	mStoreTryAcquire:   mi("store", "TryAcquire"),
	mStoreCheck:        mi("store", "Check"),
	mStoreRelease:      mi("store", "Release"),
	mFeedListen:        mi("feed", "Listen"),
	mFeedPoll:          mi("feed", "Poll"),
	mInstStart:         mi("instances", "Start"),
	mInstDelete:        mi("instances", "Delete"),
	mInstList:          mi("instances", "List"),
	mStorProvision:     mi("storage", "Provision"),
	mStorListVolumes:   mi("storage", "ListVolumes"),
	mStorArchive:       mi("storage", "Archive"),
	mStorRestore:       mi("storage", "Restore"),
	mStorDeleteVolume:  mi("storage", "DeleteVolume"),
	mObjPut:            mi("objects", "Put"),
	mObjGet:            mi("objects", "Get"),
	mObjHead:           mi("objects", "Head"),
	mObjList:           mi("objects", "List"),
	mObjDelete:         mi("objects", "Delete"),
	mBusPublish:        mi("bus", "Publish"),
	mBusSubscribe:      mi("bus", "Subscribe"),
	mBusPoll:           mi("bus", "Poll"),
	mBusIncr:           mi("bus", "Incr"),
	mBusDecr:           mi("bus", "Decr"),
	mBusGet:            mi("bus", "Get"),
	mBusSet:            mi("bus", "Set"),
	mBusSetNX:          mi("bus", "SetNX"),
	mBusDel:            mi("bus", "Del"),
}

// gate counts a call and runs the hook; a non-nil error means the call
// fails without effect (the caller records it).
func (w *World) gate(ctx context.Context, m method, inst, ws, key string) error {
	w.calls[m].Add(1)
	if err := ctx.Err(); err != nil {
		w.failed[m].Add(1)
		return err
	}
	if h := w.hook.Load(); h != nil {
		if err := (*h)(Call{Instance: inst, Port: methods[m].port, Method: methods[m].name, Workspace: ws, Key: key}); err != nil {
			w.failed[m].Add(1)
			return err
		}
	}
	return nil
}

// recordCall records a KindCall event.
func (w *World) recordCall(inst string, m method, ws, args, result string, err error) {
	e := history.Event{
		At: w.Clock.Now(), Kind: history.KindCall, Instance: inst,
		Workspace: ws, Method: methods[m].full, Args: args, Result: result,
	}
	if err != nil {
		e.Err = err.Error()
	}
	w.Rec.Add(e)
}

// recordCheck records a check of the leader lock by inst (the lease's
// holder and epoch), whatever its outcome.
func (w *World) recordCheck(inst, holder string, epoch int64, err error) {
	e := history.Event{At: w.Clock.Now(), Kind: history.KindCall, Instance: inst, Method: methods[mStoreCheck].full,
		Args: holder, Epoch: epoch}
	if err != nil {
		e.Err = err.Error()
	}
	w.Rec.Add(e)
}

// recordFault records a world fault (a world method called by the harness).
func (w *World) recordFault(what, ws, args string) {
	w.Rec.Add(history.Event{At: w.Clock.Now(), Kind: history.KindFault, Workspace: ws, Method: what, Args: args})
}

// recordLeader records a leadership change.
func (w *World) recordLeader(holder, what string, epoch int64) {
	w.Rec.Add(history.Event{At: w.Clock.Now(), Kind: history.KindLeader, Instance: holder, Method: what, Epoch: epoch})
}

func providerError(code contracts.ErrorCode, msg string) error {
	return &contracts.ProviderError{Code: code, Message: msg}
}

// internLocked lays the ids of rows (in id order) out in one string and
// makes the rows, containers and volumes of the world share it. A pass
// over a large fleet compares ids all the time: their bytes are then
// read in order, from one block, and a row's id compares with its
// container's or volume's without reading them (the same string). The
// ids are the same values: only where their bytes lie changes.
func (w *World) internLocked(rows []*contracts.Workspace) {
	size := 0
	for _, r := range rows {
		size += len(r.ID)
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range rows {
		b.WriteString(r.ID)
	}
	all, off := b.String(), 0
	canon := make(map[string]string, len(rows))
	for _, r := range rows {
		id := all[off : off+len(r.ID)]
		off += len(r.ID)
		canon[id] = id
		r.ID = id
	}
	for i, st := range w.Instances.states {
		if c, ok := canon[st.WorkspaceID]; ok {
			w.Instances.states[i].WorkspaceID = c
		}
	}
	for i, id := range w.Storage.ids {
		if c, ok := canon[id]; ok {
			w.Storage.ids[i] = c
		}
	}
}
