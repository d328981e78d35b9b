package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// handler serves one protocol method: it decodes the arguments, calls the
// port the simulator gave the child, and returns the wire result.
type handler struct {
	// role, when set, is the only role that may call the method.
	role  string
	serve func(ctx context.Context, s *session, args []byte) (any, error)
}

// method builds a handler whose arguments decode strictly into A (at
// once when A reads the exact layout a client writes, wire.FastArgs).
func method[A any](f func(ctx context.Context, s *session, a *A) (any, error)) handler {
	return handler{serve: func(ctx context.Context, s *session, raw []byte) (any, error) {
		var a A
		if fa, ok := any(&a).(wire.FastArgs); ok && fa.DecodeFast(raw) {
			return f(ctx, s, &a)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&a); err != nil {
			return nil, &badArgs{fmt.Errorf("arguments: %w", err)}
		}
		return f(ctx, s, &a)
	}}
}

// coordinatorOnly restricts h to coordinators.
func coordinatorOnly(h handler) handler {
	h.role = wire.RoleCoordinator
	return h
}

// invalid wraps a validation error of the arguments.
func invalid(err error) error { return &badArgs{err} }

// none is the result of a call that returns nothing.
var none any

// handlers is the protocol's port-method table: one entry per method of
// every port (wire.PortMethods names the Go method each stands for). A
// new port method needs one entry here, one in wire.PortMethods and one
// in each client.
var handlers = map[string]handler{
	wire.MStoreGet: method(func(ctx context.Context, s *session, a *wire.ID) (any, error) {
		w, err := s.deps.Store.Get(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		return wire.Row{W: s.rows, Row: &w}, nil
	}),
	wire.MStoreList: method(func(ctx context.Context, s *session, a *wire.StoreList) (any, error) {
		f, err := a.Filter.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		// Read through the store's cursor, as a coordinator in process
		// does, straight into the answer: List copied every row, its
		// objects too, before it was written (DR605). Scan meets the
		// simulator's gate and faults as List does; rows written
		// before a failed scan are dropped, and the RowWriter forgets
		// them (a child of row changes holds the versions before).
		b := append(s.listed[:0], '[')
		s.rows.Tentative()
		err = s.deps.Store.Scan(ctx, f, func(w *contracts.Workspace) {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = s.rows.AppendWorkspace(b, w)
		})
		s.rows.Settle(err == nil)
		if cap(b) <= 1<<20 {
			s.listed = b[:0] // a listing of megabytes is not kept around
		}
		if err != nil {
			return nil, err
		}
		return json.RawMessage(append(b, ']')), nil
	}),
	wire.MStoreInsert: method(func(ctx context.Context, s *session, a *wire.StoreInsert) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		ws, err := a.Workspace.Contracts()
		if err != nil {
			return nil, invalid(fmt.Errorf("workspace: %w", err))
		}
		return none, s.deps.Store.Insert(ctx, w, ws)
	}),
	wire.MStoreInsertLimits: method(func(ctx context.Context, s *session, a *wire.StoreInsertWithinLimits) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		ws, err := a.Workspace.Contracts()
		if err != nil {
			return nil, invalid(fmt.Errorf("workspace: %w", err))
		}
		return none, s.deps.Store.InsertWithinLimits(ctx, w, ws, a.Limits.Contracts())
	}),
	wire.MStoreUpdateLimits: method(func(ctx context.Context, s *session, a *wire.StoreUpdateWithinLimits) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		c, err := a.Cond.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		applied, err := s.deps.Store.UpdateWithinLimits(ctx, w, a.ID, c, a.Patch.Patch, a.Limits.Contracts())
		if err != nil {
			return nil, err
		}
		return wire.Applied{Applied: applied}, nil
	}),
	wire.MStoreUpdate: method(func(ctx context.Context, s *session, a *wire.StoreUpdate) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		c, err := a.Cond.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		applied, err := s.deps.Store.Update(ctx, w, a.ID, c, a.Patch.Patch)
		if err != nil {
			return nil, err
		}
		return wire.Applied{Applied: applied}, nil
	}),
	wire.MStoreUpdateMany: method(func(ctx context.Context, s *session, a *wire.StoreUpdateMany) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		updates := make([]ports.RowUpdate, len(a.Updates))
		for i, u := range a.Updates {
			c, err := u.Cond.Contracts()
			if err != nil {
				return nil, invalid(fmt.Errorf("updates[%d]: %w", i, err))
			}
			updates[i] = ports.RowUpdate{ID: u.ID, Cond: c, Patch: u.Patch.Patch}
		}
		return none, s.deps.Store.UpdateMany(ctx, w, updates)
	}),
	wire.MStoreMarkObserved: method(func(ctx context.Context, s *session, a *wire.StoreMarkObserved) (any, error) {
		w, err := a.Writer.Contracts()
		if err != nil {
			return nil, invalid(err)
		}
		return none, s.deps.Store.MarkObserved(ctx, w, a.IDs, a.At.Time)
	}),

	wire.MLeadershipTryAcquire: coordinatorOnly(method(func(ctx context.Context, s *session, a *wire.TryAcquire) (any, error) {
		return s.tryAcquire(ctx, a.Holder)
	})),
	wire.MLeaseCheck: coordinatorOnly(method(func(ctx context.Context, s *session, a *wire.Lease) (any, error) {
		l, err := s.lease(a.Lease)
		if err != nil {
			return nil, err
		}
		return none, l.Check(ctx)
	})),
	wire.MLeaseRelease: coordinatorOnly(method(func(ctx context.Context, s *session, a *wire.Lease) (any, error) {
		l, err := s.lease(a.Lease)
		if err != nil {
			return nil, err
		}
		return none, l.Release(ctx)
	})),

	wire.MFeedListen: method(func(ctx context.Context, s *session, _ *wire.None) (any, error) {
		l, err := s.deps.Feed.Listen(ctx)
		if err != nil {
			return nil, err
		}
		h := s.handle()
		s.listeners[h] = l
		return wire.Listening{Listener: h}, nil
	}),
	wire.MListenerPoll: method(func(ctx context.Context, s *session, a *wire.Listener) (any, error) {
		l, err := s.listener(a.Listener)
		if err != nil {
			return nil, err
		}
		return pollListener(ctx, l)
	}),
	wire.MListenerClose: method(func(ctx context.Context, s *session, a *wire.Listener) (any, error) {
		l, err := s.listener(a.Listener)
		if err != nil {
			return nil, err
		}
		return none, l.Close()
	}),

	wire.MInstancesStart: method(func(ctx context.Context, s *session, a *wire.InstancesStart) (any, error) {
		return none, s.deps.Instances.Start(ctx, a.ID, a.ImageRef)
	}),
	wire.MInstancesDelete: method(func(ctx context.Context, s *session, a *wire.ID) (any, error) {
		return none, s.deps.Instances.Delete(ctx, a.ID)
	}),
	wire.MInstancesList: method(func(ctx context.Context, s *session, _ *wire.None) (any, error) {
		list, err := s.deps.Instances.List(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]wire.InstanceState, len(list))
		for i, x := range list {
			out[i] = wire.InstanceState{WorkspaceID: x.WorkspaceID, Running: x.Running}
		}
		return out, nil
	}),

	wire.MStorageProvision: method(func(ctx context.Context, s *session, a *wire.ID) (any, error) {
		return none, s.deps.Storage.Provision(ctx, a.ID)
	}),
	wire.MStorageListVolumes: method(func(ctx context.Context, s *session, _ *wire.None) (any, error) {
		ids, err := s.deps.Storage.ListVolumes(ctx)
		if err != nil {
			return nil, err
		}
		return nonNil(ids), nil
	}),
	wire.MStorageArchive: method(func(ctx context.Context, s *session, a *wire.StorageArchive) (any, error) {
		return result(s.deps.Storage.Archive(ctx, a.ID, a.OpID))
	}),
	wire.MStorageRestore: method(func(ctx context.Context, s *session, a *wire.StorageRestore) (any, error) {
		return result(s.deps.Storage.Restore(ctx, a.ID, a.Key))
	}),
	wire.MStorageDeleteVolume: method(func(ctx context.Context, s *session, a *wire.ID) (any, error) {
		return none, s.deps.Storage.DeleteVolume(ctx, a.ID)
	}),

	wire.MObjectsPut: method(func(ctx context.Context, s *session, a *wire.ObjectsPut) (any, error) {
		return none, s.deps.Objects.Put(ctx, a.Key, a.Data)
	}),
	wire.MObjectsGet: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		return result(s.deps.Objects.Get(ctx, a.Key))
	}),
	wire.MObjectsHead: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		return result(s.deps.Objects.Head(ctx, a.Key))
	}),
	wire.MObjectsList: method(func(ctx context.Context, s *session, a *wire.ObjectsList) (any, error) {
		list, err := s.deps.Objects.List(ctx, a.Prefix)
		if err != nil {
			return nil, err
		}
		out := make([]wire.ObjectInfo, len(list))
		for i, o := range list {
			out[i] = wire.ObjectInfo{Key: o.Key, Size: o.Size}
		}
		return out, nil
	}),
	wire.MObjectsDelete: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		return none, s.deps.Objects.Delete(ctx, a.Key)
	}),

	wire.MBusPublish: method(func(ctx context.Context, s *session, a *wire.BusPublish) (any, error) {
		return none, s.deps.Bus.Publish(ctx, a.Channel, a.Payload)
	}),
	wire.MBusSubscribe: method(func(ctx context.Context, s *session, a *wire.BusSubscribe) (any, error) {
		sub, err := s.deps.Bus.Subscribe(ctx, a.Channels...)
		if err != nil {
			return nil, err
		}
		h := s.handle()
		s.subs[h] = sub
		return wire.Subscribed{Subscription: h}, nil
	}),
	wire.MSubscriptionPoll: method(func(ctx context.Context, s *session, a *wire.Subscription) (any, error) {
		sub, err := s.subscription(a.Subscription)
		if err != nil {
			return nil, err
		}
		return pollSubscription(sub), nil
	}),
	wire.MSubscriptionClose: method(func(ctx context.Context, s *session, a *wire.Subscription) (any, error) {
		sub, err := s.subscription(a.Subscription)
		if err != nil {
			return nil, err
		}
		return none, sub.Close()
	}),
	wire.MBusIncr: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		return result(s.deps.Bus.Incr(ctx, a.Key))
	}),
	wire.MBusDecr: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		return result(s.deps.Bus.Decr(ctx, a.Key))
	}),
	wire.MBusGet: method(func(ctx context.Context, s *session, a *wire.Key) (any, error) {
		v, ok, err := s.deps.Bus.Get(ctx, a.Key)
		if err != nil {
			return nil, err
		}
		return wire.BusValue{Value: v, OK: ok}, nil
	}),
	wire.MBusSet: method(func(ctx context.Context, s *session, a *wire.BusSet) (any, error) {
		ttl, err := ttlOf(a)
		if err != nil {
			return nil, err
		}
		return none, s.deps.Bus.Set(ctx, a.Key, a.Value, ttl)
	}),
	wire.MBusSetNX: method(func(ctx context.Context, s *session, a *wire.BusSet) (any, error) {
		ttl, err := ttlOf(a)
		if err != nil {
			return nil, err
		}
		return result(s.deps.Bus.SetNX(ctx, a.Key, a.Value, ttl))
	}),
	wire.MBusDel: method(func(ctx context.Context, s *session, a *wire.BusDel) (any, error) {
		return none, s.deps.Bus.Del(ctx, a.Keys...)
	}),

	wire.MIDsNewID: method(func(ctx context.Context, s *session, _ *wire.None) (any, error) {
		return s.deps.IDs.NewID(), nil
	}),
}

// The calls a wake-up makes, shared by their handlers and by the quiet
// steps the harness takes (wake.go).

// tryAcquire is leadership.try_acquire: a lease handle when the lock is
// taken.
func (s *session) tryAcquire(ctx context.Context, holder string) (any, error) {
	lease, ok, err := s.deps.Leadership.TryAcquire(ctx, holder)
	if err != nil {
		return nil, err
	}
	if !ok || lease == nil {
		return wire.Acquired{}, nil
	}
	h := s.handle()
	s.leases[h] = lease
	return wire.Acquired{OK: true, Lease: h, Epoch: lease.Epoch()}, nil
}

// pollListener is listener.poll.
func pollListener(ctx context.Context, l ports.Listener) (any, error) {
	changes, err := l.Poll(ctx)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return wire.EmptyList, nil
	}
	return changes, nil
}

// pollSubscription is subscription.poll.
func pollSubscription(sub ports.Subscription) any {
	msgs := sub.Poll()
	if len(msgs) == 0 {
		return wire.EmptyList
	}
	out := make([]wire.Message, len(msgs))
	for i, m := range msgs {
		out[i] = wire.Message{Channel: m.Channel, Payload: m.Payload}
	}
	return out
}

// result is a port's (value, error) as a handler's.
func result[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// nonNil makes a nil list an empty one (JSON [] rather than null).
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func ttlOf(a *wire.BusSet) (time.Duration, error) {
	if a.TTLNs < 0 {
		return 0, invalid(fmt.Errorf("ttl_ns %d is negative", a.TTLNs))
	}
	return time.Duration(a.TTLNs), nil
}

func (s *session) lease(h int64) (ports.Lease, error) {
	if l, ok := s.leases[h]; ok {
		return l, nil
	}
	return nil, invalid(fmt.Errorf("lease %d was never issued to this child", h))
}

func (s *session) listener(h int64) (ports.Listener, error) {
	if l, ok := s.listeners[h]; ok {
		return l, nil
	}
	return nil, invalid(fmt.Errorf("listener %d was never issued to this child", h))
}

func (s *session) subscription(h int64) (ports.Subscription, error) {
	if l, ok := s.subs[h]; ok {
		return l, nil
	}
	return nil, invalid(fmt.Errorf("subscription %d was never issued to this child", h))
}
