package workspace

import (
	"context"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// The per-instance views World.Deps hands out: each passes its instance
// name to the world's implementation.

type storeView struct {
	s    *Store
	inst string
}

func (v storeView) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	return v.s.get(ctx, v.inst, id)
}

func (v storeView) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	return v.s.list(ctx, v.inst, f)
}

func (v storeView) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	return v.s.scan(ctx, v.inst, f, fn)
}

func (v storeView) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	return v.s.insert(ctx, v.inst, w, ws)
}

func (v storeView) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	return v.s.update(ctx, v.inst, w, id, cond, p)
}

func (v storeView) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	return v.s.insertGuarded(ctx, v.inst, w, ws, &l)
}

func (v storeView) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	return v.s.updateGuarded(ctx, v.inst, w, id, cond, p, &l)
}

func (v storeView) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	return v.s.markObserved(ctx, v.inst, w, ids, at)
}

func (v storeView) UpdateMany(ctx context.Context, w contracts.Writer, updates []ports.RowUpdate) error {
	return v.s.updateMany(ctx, v.inst, w, updates)
}

type feedView struct {
	s    *Store
	inst string
}

func (v feedView) Listen(ctx context.Context) (ports.Listener, error) { return v.s.listen(ctx, v.inst) }

type instancesView struct {
	x    *Instances
	inst string
}

func (v instancesView) Start(ctx context.Context, id, imageRef string) error {
	return v.x.start(ctx, v.inst, id, imageRef)
}

func (v instancesView) Delete(ctx context.Context, id string) error {
	return v.x.delete(ctx, v.inst, id)
}

func (v instancesView) List(ctx context.Context) ([]ports.InstanceState, error) {
	return v.x.list(ctx, v.inst)
}

type storageView struct {
	x    *Storage
	inst string
}

func (v storageView) Provision(ctx context.Context, id string) error {
	return v.x.provision(ctx, v.inst, id)
}

func (v storageView) ListVolumes(ctx context.Context) ([]string, error) {
	return v.x.listVolumes(ctx, v.inst)
}

func (v storageView) Archive(ctx context.Context, id, opID string) (string, error) {
	return v.x.archive(ctx, v.inst, id, opID)
}

func (v storageView) Restore(ctx context.Context, id, key string) (string, error) {
	return v.x.restore(ctx, v.inst, id, key)
}

func (v storageView) DeleteVolume(ctx context.Context, id string) error {
	return v.x.deleteVolume(ctx, v.inst, id)
}

type objectsView struct {
	x    *Objects
	inst string
}

func (v objectsView) Put(ctx context.Context, key string, data []byte) error {
	return v.x.put(ctx, v.inst, key, data)
}

func (v objectsView) Get(ctx context.Context, key string) ([]byte, error) {
	return v.x.get(ctx, v.inst, key)
}

func (v objectsView) Head(ctx context.Context, key string) (bool, error) {
	return v.x.head(ctx, v.inst, key)
}

func (v objectsView) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	return v.x.list(ctx, v.inst, prefix)
}

func (v objectsView) Delete(ctx context.Context, key string) error {
	return v.x.delete(ctx, v.inst, key)
}

type busView struct {
	x    *Bus
	inst string
}

func (v busView) Publish(ctx context.Context, channel, payload string) error {
	return v.x.publish(ctx, v.inst, channel, payload)
}

func (v busView) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	return v.x.subscribe(ctx, v.inst, channels)
}

func (v busView) Incr(ctx context.Context, key string) (int64, error) {
	return v.x.add(ctx, v.inst, mBusIncr, key, 1)
}

func (v busView) Decr(ctx context.Context, key string) (int64, error) {
	return v.x.add(ctx, v.inst, mBusDecr, key, -1)
}

func (v busView) Get(ctx context.Context, key string) (string, bool, error) {
	return v.x.get(ctx, v.inst, key)
}

func (v busView) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	_, err := v.x.set(ctx, v.inst, mBusSet, key, value, ttl)
	return err
}

func (v busView) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	return v.x.set(ctx, v.inst, mBusSetNX, key, value, ttl)
}

func (v busView) Del(ctx context.Context, keys ...string) error { return v.x.del(ctx, v.inst, keys) }

var (
	_ ports.Store      = storeView{}
	_ ports.ChangeFeed = feedView{}
	_ ports.Leadership = (*leadershipView)(nil)
	_ ports.Instances  = instancesView{}
	_ ports.Storage    = storageView{}
	_ ports.Objects    = objectsView{}
	_ ports.Bus        = busView{}
	_ ports.Clock      = (*Clock)(nil)
	_ ports.IDs        = (*IDs)(nil)
)
