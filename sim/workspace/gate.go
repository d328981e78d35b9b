package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/engine"
)

// gate stands between one coordinator instance and every port it was
// given: an engine.Gate (fail-stop crashes, crash at the k-th call) plus
// lost responses (of world-changing provider calls, and of every store
// call: the statement ran, the answer never came).
type gate struct {
	engine.Gate
	// after, when set, is asked after a world-changing provider call
	// succeeded; an error it returns replaces the success (a response
	// lost after the effect).
	after func(port, method, id string) error
}

// lost asks g.after about a successful call.
func (g *gate) lost(port, method, id string) error {
	if g.after == nil {
		return nil
	}
	return g.after(port, method, id)
}

func newGate(instance string) *gate {
	return &gate{Gate: engine.Gate{Err: fmt.Errorf("instance %s: %w", instance, contracts.ErrCrashed)}}
}

// pass admits one call or fails it.
func (g *gate) pass() error { return g.Pass() }

// gateDeps wraps every port of d behind g. Clock and IDs are not ports of
// the outside world and pass through.
func gateDeps(d ports.Deps, g *gate) ports.Deps {
	d.Store = gatedStore{d.Store, g}
	d.Leadership = gatedLeadership{d.Leadership, g}
	d.Feed = gatedFeed{d.Feed, g}
	d.Instances = gatedInstances{d.Instances, g}
	d.Storage = gatedStorage{d.Storage, g}
	d.Objects = gatedObjects{d.Objects, g}
	d.Bus = gatedBus{d.Bus, g}
	return d
}

type gatedStore struct {
	s ports.Store
	g *gate
}

func (x gatedStore) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	if err := x.g.pass(); err != nil {
		return contracts.Workspace{}, err
	}
	w, err := x.s.Get(ctx, id)
	if err != nil {
		return w, err
	}
	if err := x.g.lost("store", "Get", id); err != nil {
		return contracts.Workspace{}, err
	}
	return w, nil
}

func (x gatedStore) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	ws, err := x.s.List(ctx, f)
	if err != nil {
		return ws, err
	}
	if err := x.g.lost("store", "List", ""); err != nil {
		return nil, err
	}
	return ws, nil
}

// Scan is a List read through a cursor (the fakes record it as
// store.List), so List's faults reach it: a lost answer is an error after
// the rows were passed, which the caller must discard (ports.Store.Scan).
func (x gatedStore) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.Scan(ctx, f, fn); err != nil {
		return err
	}
	return x.g.lost("store", "List", "")
}

func (x gatedStore) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.Insert(ctx, w, ws); err != nil {
		return err
	}
	return x.g.lost("store", "Insert", ws.ID)
}

func (x gatedStore) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	if err := x.g.pass(); err != nil {
		return false, err
	}
	applied, err := x.s.Update(ctx, w, id, c, p)
	if err != nil {
		return applied, err
	}
	if err := x.g.lost("store", "Update", id); err != nil {
		return false, err
	}
	return applied, nil
}

func (x gatedStore) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.InsertWithinLimits(ctx, w, ws, l); err != nil {
		return err
	}
	return x.g.lost("store", "Insert", ws.ID)
}

func (x gatedStore) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	if err := x.g.pass(); err != nil {
		return false, err
	}
	applied, err := x.s.UpdateWithinLimits(ctx, w, id, c, p, l)
	if err != nil {
		return applied, err
	}
	if err := x.g.lost("store", "Update", id); err != nil {
		return false, err
	}
	return applied, nil
}

func (x gatedStore) UpdateMany(ctx context.Context, w contracts.Writer, u []ports.RowUpdate) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.UpdateMany(ctx, w, u); err != nil {
		return err
	}
	return x.g.lost("store", "UpdateMany", "")
}

func (x gatedStore) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.MarkObserved(ctx, w, ids, at); err != nil {
		return err
	}
	return x.g.lost("store", "MarkObserved", "")
}

type gatedLeadership struct {
	l ports.Leadership
	g *gate
}

func (x gatedLeadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	if err := x.g.pass(); err != nil {
		return nil, false, err
	}
	lease, ok, err := x.l.TryAcquire(ctx, holder)
	if err != nil {
		return nil, false, err
	}
	if err := x.g.lost("store", "TryAcquire", ""); err != nil {
		return nil, false, err
	}
	if lease != nil {
		lease = gatedLease{lease, x.g}
	}
	return lease, ok, nil
}

type gatedLease struct {
	l ports.Lease
	g *gate
}

func (x gatedLease) Epoch() int64 { return x.l.Epoch() }

func (x gatedLease) Check(ctx context.Context) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.l.Check(ctx); err != nil {
		return err
	}
	return x.g.lost("store", "Check", "")
}

func (x gatedLease) Release(ctx context.Context) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.l.Release(ctx); err != nil {
		return err
	}
	return x.g.lost("store", "Release", "")
}

type gatedFeed struct {
	f ports.ChangeFeed
	g *gate
}

func (x gatedFeed) Listen(ctx context.Context) (ports.Listener, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	l, err := x.f.Listen(ctx)
	if err != nil {
		return nil, err
	}
	return gatedListener{l, x.g}, nil
}

type gatedListener struct {
	l ports.Listener
	g *gate
}

func (x gatedListener) Poll(ctx context.Context) ([]ports.Change, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	return x.l.Poll(ctx)
}

func (x gatedListener) Ready() <-chan struct{} { return x.l.Ready() }

func (x gatedListener) Close() error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.l.Close()
}

type gatedInstances struct {
	i ports.Instances
	g *gate
}

func (x gatedInstances) Start(ctx context.Context, id, imageRef string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.i.Start(ctx, id, imageRef); err != nil {
		return err
	}
	return x.g.lost("instances", "Start", id)
}

func (x gatedInstances) Delete(ctx context.Context, id string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.i.Delete(ctx, id); err != nil {
		return err
	}
	return x.g.lost("instances", "Delete", id)
}

func (x gatedInstances) List(ctx context.Context) ([]ports.InstanceState, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	return x.i.List(ctx)
}

type gatedStorage struct {
	s ports.Storage
	g *gate
}

func (x gatedStorage) Provision(ctx context.Context, id string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.Provision(ctx, id); err != nil {
		return err
	}
	return x.g.lost("storage", "Provision", id)
}

func (x gatedStorage) ListVolumes(ctx context.Context) ([]string, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	return x.s.ListVolumes(ctx)
}

func (x gatedStorage) Archive(ctx context.Context, id, opID string) (string, error) {
	if err := x.g.pass(); err != nil {
		return "", err
	}
	key, err := x.s.Archive(ctx, id, opID)
	if err != nil {
		return "", err
	}
	if err := x.g.lost("storage", "Archive", id); err != nil {
		return "", err
	}
	return key, nil
}

func (x gatedStorage) Restore(ctx context.Context, id, key string) (string, error) {
	if err := x.g.pass(); err != nil {
		return "", err
	}
	marker, err := x.s.Restore(ctx, id, key)
	if err != nil {
		return "", err
	}
	if err := x.g.lost("storage", "Restore", id); err != nil {
		return "", err
	}
	return marker, nil
}

func (x gatedStorage) DeleteVolume(ctx context.Context, id string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	if err := x.s.DeleteVolume(ctx, id); err != nil {
		return err
	}
	return x.g.lost("storage", "DeleteVolume", id)
}

type gatedObjects struct {
	o ports.Objects
	g *gate
}

func (x gatedObjects) Put(ctx context.Context, key string, data []byte) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.o.Put(ctx, key, data)
}

func (x gatedObjects) Get(ctx context.Context, key string) ([]byte, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	return x.o.Get(ctx, key)
}

func (x gatedObjects) Head(ctx context.Context, key string) (bool, error) {
	if err := x.g.pass(); err != nil {
		return false, err
	}
	return x.o.Head(ctx, key)
}

func (x gatedObjects) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	return x.o.List(ctx, prefix)
}

func (x gatedObjects) Delete(ctx context.Context, key string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.o.Delete(ctx, key)
}

type gatedBus struct {
	b ports.Bus
	g *gate
}

func (x gatedBus) Publish(ctx context.Context, channel, payload string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.b.Publish(ctx, channel, payload)
}

func (x gatedBus) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	if err := x.g.pass(); err != nil {
		return nil, err
	}
	s, err := x.b.Subscribe(ctx, channels...)
	if err != nil {
		return nil, err
	}
	return gatedSubscription{s, x.g}, nil
}

func (x gatedBus) Incr(ctx context.Context, key string) (int64, error) {
	if err := x.g.pass(); err != nil {
		return 0, err
	}
	return x.b.Incr(ctx, key)
}

func (x gatedBus) Decr(ctx context.Context, key string) (int64, error) {
	if err := x.g.pass(); err != nil {
		return 0, err
	}
	return x.b.Decr(ctx, key)
}

func (x gatedBus) Get(ctx context.Context, key string) (string, bool, error) {
	if err := x.g.pass(); err != nil {
		return "", false, err
	}
	return x.b.Get(ctx, key)
}

func (x gatedBus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.b.Set(ctx, key, value, ttl)
}

func (x gatedBus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if err := x.g.pass(); err != nil {
		return false, err
	}
	return x.b.SetNX(ctx, key, value, ttl)
}

func (x gatedBus) Del(ctx context.Context, keys ...string) error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.b.Del(ctx, keys...)
}

type gatedSubscription struct {
	s ports.Subscription
	g *gate
}

// Poll of a crashed instance returns nothing: the process that would read
// the messages is gone (Poll has no error to report it with).
func (x gatedSubscription) Poll() []ports.Message {
	if err := x.g.pass(); err != nil {
		return nil
	}
	return x.s.Poll()
}

func (x gatedSubscription) Ready() <-chan struct{} { return x.s.Ready() }

func (x gatedSubscription) Close() error {
	if err := x.g.pass(); err != nil {
		return err
	}
	return x.s.Close()
}
