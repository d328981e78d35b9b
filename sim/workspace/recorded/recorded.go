package recorded

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// writeLocks holds one mutex per recorder: every recorded store write of
// every instance sharing a recorder holds it across the write and its
// recording, so the history's order is the order writes committed in (two
// processes' writes recorded after they return could otherwise appear
// swapped: a claim recorded before the API write that preceded it).
var writeLocks sync.Map // *history.Recorder → *sync.Mutex

// Deps returns d with every port wrapped to record into rec under the
// instance name d.Instance. Clock and IDs pass through. Store writes of
// all instances recording into rec are serialised (see writeLocks).
func Deps(d ports.Deps, rec *history.Recorder) ports.Deps {
	mu, _ := writeLocks.LoadOrStore(rec, &sync.Mutex{})
	r := &recorder{rec: rec, inst: d.Instance, clock: d.Clock, writes: mu.(*sync.Mutex)}
	if d.Store != nil {
		d.Store = store{d.Store, r}
	}
	if d.Leadership != nil {
		d.Leadership = leadership{d.Leadership, r}
	}
	if d.Instances != nil {
		d.Instances = instances{d.Instances, r}
	}
	if d.Storage != nil {
		d.Storage = storage{d.Storage, r}
	}
	if d.Objects != nil {
		d.Objects = objects{d.Objects, r}
	}
	if d.Bus != nil {
		d.Bus = bus{d.Bus, r}
	}
	return d
}

type recorder struct {
	rec    *history.Recorder
	inst   string
	clock  ports.Clock
	writes *sync.Mutex
	// listings writes what each successful listing returned into its
	// Result (the observation-truth checker's evidence, C1).
	listings history.Listings
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (r *recorder) call(method, ws, args, result string, err error) {
	r.rec.Add(history.Event{At: r.clock.Now(), Kind: history.KindCall, Instance: r.inst, Method: method, Workspace: ws, Args: args, Result: result, Err: errText(err)})
}

func (r *recorder) write(method string, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, applied bool, err error) {
	inst := w.Instance
	if inst == "" {
		inst = r.inst
	}
	pc, cc := p, cond
	e := history.Event{At: r.clock.Now(), Kind: history.KindWrite, Instance: inst, Component: w.Component, Epoch: w.Epoch,
		Workspace: id, Method: method, Patch: &pc, Cond: &cc, Applied: applied, Err: errText(err)}
	e.Args = history.OnBehalfArgs(w)
	r.rec.Add(e)
}

// ---- store ----

type store struct {
	ports.Store
	r *recorder
}

func (s store) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	err := s.Store.Insert(ctx, w, ws)
	s.r.insert(w, ws, err)
	return err
}

// InsertWithinLimits records like Insert: a guarded write is a write (the
// limits checker judges every acceptance of desired RUNNING alike).
func (s store) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	err := s.Store.InsertWithinLimits(ctx, w, ws, l)
	s.r.insert(w, ws, err)
	return err
}

func (r *recorder) insert(w contracts.Writer, ws contracts.Workspace, err error) {
	if err == nil {
		row := ws.Clone()
		r.rec.Add(history.Event{At: r.clock.Now(), Kind: history.KindInsert, Instance: r.inst, Component: w.Component, Epoch: w.Epoch, Workspace: ws.ID, Method: "store.Insert", Applied: true, Row: &row})
	} else {
		r.call("store.Insert", ws.ID, "", "", err)
	}
}

func (s store) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	ok, err := s.Store.Update(ctx, w, id, cond, p)
	s.r.write("store.Update", w, id, cond, p, ok && err == nil, err)
	return ok, err
}

// UpdateWithinLimits records like Update.
func (s store) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	ok, err := s.Store.UpdateWithinLimits(ctx, w, id, cond, p, l)
	s.r.write("store.Update", w, id, cond, p, ok && err == nil, err)
	return ok, err
}

// UpdateMany cannot tell which rows applied; rows are re-read to find out
// (a recording cost only).
func (s store) UpdateMany(ctx context.Context, w contracts.Writer, updates []ports.RowUpdate) error {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	err := s.Store.UpdateMany(ctx, w, updates)
	for _, u := range updates {
		applied := false
		if err == nil {
			if row, gerr := s.Store.Get(ctx, u.ID); gerr == nil {
				applied = appliedTo(&row, &u.Patch)
			}
		}
		s.r.write("store.UpdateMany", w, u.ID, u.Cond, u.Patch, applied, err)
	}
	return err
}

// appliedTo reports whether row carries the status columns p set (enough
// to tell an applied observation from a skipped one).
func appliedTo(row *contracts.Workspace, p *contracts.Patch) bool {
	if p.ObservedStatus.Set && row.ObservedStatus != p.ObservedStatus.V {
		return false
	}
	if p.HealthStatus.Set && row.HealthStatus != p.HealthStatus.V {
		return false
	}
	if p.ErrorInfo.Set && (row.ErrorInfo == nil) != (p.ErrorInfo.V == nil) {
		return false
	}
	return true
}

func (s store) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	s.r.writes.Lock()
	defer s.r.writes.Unlock()
	err := s.Store.MarkObserved(ctx, w, ids, at)
	if err != nil {
		s.r.call("store.MarkObserved", "", strconv.Itoa(len(ids))+" rows", "", err)
		return err
	}
	s.r.rec.CountObservedAt(len(ids))
	s.r.rec.Add(history.Event{At: s.r.clock.Now(), Kind: history.KindNote, Instance: s.r.inst, Component: w.Component, Epoch: w.Epoch,
		Method: history.NoteHealthPass, Args: "observed_at=" + at.UTC().Format(time.RFC3339Nano), Result: strconv.Itoa(len(ids)) + " rows observed"})
	return nil
}

// ---- leadership ----

type leadership struct {
	ports.Leadership
	r *recorder
}

func (l leadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	lease, ok, err := l.Leadership.TryAcquire(ctx, holder)
	if err != nil || !ok {
		return lease, ok, err
	}
	l.r.rec.Add(history.Event{At: l.r.clock.Now(), Kind: history.KindLeader, Instance: l.r.inst, Method: "acquire", Epoch: lease.Epoch()})
	return &lease_{Lease: lease, r: l.r}, true, nil
}

type lease_ struct {
	ports.Lease
	r    *recorder
	once sync.Once
}

func (x *lease_) lost(what string) {
	x.once.Do(func() {
		x.r.rec.Add(history.Event{At: x.r.clock.Now(), Kind: history.KindLeader, Instance: x.r.inst, Method: what, Epoch: x.Epoch()})
	})
}

// Check records every check of the lock, a successful one included
// (SPEC 3.1's re-check is judged on the history).
func (x *lease_) Check(ctx context.Context) error {
	err := x.Lease.Check(ctx)
	x.r.rec.Add(history.Event{At: x.r.clock.Now(), Kind: history.KindCall, Instance: x.r.inst, Method: "store.Check",
		Args: x.r.inst, Epoch: x.Epoch(), Err: errText(err)})
	if errors.Is(err, contracts.ErrNotLeader) {
		x.lost("lost")
	}
	return err
}

func (x *lease_) Release(ctx context.Context) error {
	err := x.Lease.Release(ctx)
	x.lost("release")
	return err
}

// ---- providers ----

type instances struct {
	ports.Instances
	r *recorder
}

func (x instances) Start(ctx context.Context, id, image string) error {
	err := x.Instances.Start(ctx, id, image)
	x.r.call("instances.Start", id, image, "", err)
	return err
}

func (x instances) Delete(ctx context.Context, id string) error {
	err := x.Instances.Delete(ctx, id)
	x.r.call("instances.Delete", id, "", "", err)
	return err
}

func (x instances) List(ctx context.Context) ([]ports.InstanceState, error) {
	out, err := x.Instances.List(ctx)
	if err != nil {
		x.r.call(history.MethodListInstances, "", "", "", err)
		return out, err
	}
	entries := make([]string, len(out))
	for i, c := range out {
		entries[i] = history.InstanceEntry(c.WorkspaceID, c.Running)
	}
	x.r.listings.Record(x.r.inst, history.MethodListInstances, entries, func(result string) {
		x.r.call(history.MethodListInstances, "", "", result, nil)
	})
	return out, nil
}

type storage struct {
	ports.Storage
	r *recorder
}

func (x storage) Provision(ctx context.Context, id string) error {
	err := x.Storage.Provision(ctx, id)
	x.r.call("storage.Provision", id, "", "", err)
	return err
}

func (x storage) ListVolumes(ctx context.Context) ([]string, error) {
	out, err := x.Storage.ListVolumes(ctx)
	if err != nil {
		x.r.call(history.MethodListVolumes, "", "", "", err)
		return out, err
	}
	x.r.listings.Record(x.r.inst, history.MethodListVolumes, out, func(result string) {
		x.r.call(history.MethodListVolumes, "", "", result, nil)
	})
	return out, nil
}

// Archive records "archived <key>": a real storage job does not say
// whether it uploaded or skipped, and the checkers treat it so.
func (x storage) Archive(ctx context.Context, id, opID string) (string, error) {
	key, err := x.Storage.Archive(ctx, id, opID)
	result := ""
	if err == nil {
		result = "archived " + key
	}
	x.r.call("storage.Archive", id, opID, result, err)
	return key, err
}

func (x storage) Restore(ctx context.Context, id, key string) (string, error) {
	m, err := x.Storage.Restore(ctx, id, key)
	x.r.call("storage.Restore", id, key, m, err)
	return m, err
}

func (x storage) DeleteVolume(ctx context.Context, id string) error {
	err := x.Storage.DeleteVolume(ctx, id)
	x.r.call("storage.DeleteVolume", id, "", "", err)
	return err
}

type objects struct {
	ports.Objects
	r *recorder
}

func workspaceOf(key string) string {
	id, _, _ := contracts.ParseArchiveKey(key)
	return id
}

func (x objects) Put(ctx context.Context, key string, data []byte) error {
	err := x.Objects.Put(ctx, key, data)
	x.r.call("objects.Put", workspaceOf(key), key, strconv.Itoa(len(data))+" bytes", err)
	return err
}

func (x objects) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	out, err := x.Objects.List(ctx, prefix)
	x.r.call("objects.List", "", prefix, strconv.Itoa(len(out)), err)
	return out, err
}

func (x objects) Delete(ctx context.Context, key string) error {
	err := x.Objects.Delete(ctx, key)
	x.r.call("objects.Delete", workspaceOf(key), key, "", err)
	return err
}

type bus struct {
	ports.Bus
	r *recorder
}

func (x bus) Publish(ctx context.Context, channel, payload string) error {
	err := x.Bus.Publish(ctx, channel, payload)
	if len(payload) > 120 {
		payload = payload[:120] + "…"
	}
	ws := ""
	if id, ok := strings.CutPrefix(channel, "workspace:"); ok {
		ws = id
	}
	x.r.call("bus.Publish", ws, channel, payload, err)
	return err
}

func (x bus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	err := x.Bus.Set(ctx, key, value, ttl)
	args := key + "=" + value
	if ttl != 0 {
		args += " ttl=" + ttl.String()
	}
	x.r.call("bus.Set", "", args, "", err)
	return err
}

// SetNX is recorded only when it gives the key an expiry: a key set
// without one was never recorded, and the reference's pinned histories
// (sim/workspace/pinned_test.go) keep their hashes; a key that expires by
// itself is the evidence gc-timer-no-expiry needs (SPEC 4.5: an orphan
// timer "must not expire by itself").
func (x bus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ok, err := x.Bus.SetNX(ctx, key, value, ttl)
	if ttl != 0 {
		x.r.call(MethodSetNX, "", key+"="+value+" ttl="+ttl.String(), strconv.FormatBool(ok), err)
	}
	return ok, err
}

// MethodSetNX names a recorded bus.SetNX.
const MethodSetNX = "bus.SetNX"

func (x bus) Incr(ctx context.Context, key string) (int64, error) {
	n, err := x.Bus.Incr(ctx, key)
	x.r.call("bus.Incr", "", key, strconv.FormatInt(n, 10), err)
	return n, err
}

func (x bus) Decr(ctx context.Context, key string) (int64, error) {
	n, err := x.Bus.Decr(ctx, key)
	x.r.call("bus.Decr", "", key, strconv.FormatInt(n, 10), err)
	return n, err
}

func (x bus) Del(ctx context.Context, keys ...string) error {
	err := x.Bus.Del(ctx, keys...)
	x.r.call("bus.Del", "", strings.Join(keys, ","), "", err)
	return err
}
