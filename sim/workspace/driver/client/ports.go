package client

import (
	"context"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// The ports a served system is given: every method is one port call
// (wire.PortMethods), answered by the harness.

type store struct{ c *conn }

func (s store) row(w *wire.Workspace) contracts.Workspace {
	ws, err := w.Contracts()
	if err != nil {
		s.c.fail("a row from the harness: %v", err)
	}
	return ws
}

func (s store) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	var w wire.Workspace
	if err := s.c.call(wire.MStoreGet, wire.ID{ID: id}, &w); err != nil {
		return contracts.Workspace{}, err
	}
	return s.row(&w), nil
}

func (s store) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	rows, err := s.rows(f)
	if err != nil {
		return nil, err
	}
	out := make([]contracts.Workspace, len(rows))
	for i := range rows {
		out[i] = s.row(&rows[i])
	}
	return out, nil
}

// rows lists the selection f as the harness wrote it, into the room of
// the last listing (conn.listed): valid until the next listing. A
// HealthMonitor lists the fleet every few seconds, and these were two
// slices of the fleet's size a pass (DR605).
func (s store) rows(f contracts.Filter) ([]wire.Workspace, error) {
	rows := s.c.listed[:0]
	err := s.c.call(wire.MStoreList, wire.StoreList{Filter: wire.FromFilter(f)}, &rows)
	if rows != nil {
		s.c.listed = rows[:0]
	}
	return rows, err
}

// Scan lists the selection in one call of the protocol (it has no
// cursor) and passes each row to fn. The rows fn gets live in room
// reused from scan to scan (conn.scanned): they are valid only during
// the call, as Scan's contract says.
func (s store) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	rows, err := s.rows(f)
	if err != nil {
		return err
	}
	// Every row is checked before fn sees any, as ports.ScanList does.
	out := s.c.scanned[:0]
	for i := range rows {
		out = append(out, s.row(&rows[i]))
	}
	s.c.scanned = out[:0]
	for i := range out {
		fn(&out[i])
	}
	return nil
}

func (s store) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	return s.c.call(wire.MStoreInsert, wire.StoreInsert{Writer: wire.FromWriter(w), Workspace: wire.FromWorkspace(&ws)}, nil)
}

func (s store) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	return s.c.call(wire.MStoreInsertLimits, wire.StoreInsertWithinLimits{Writer: wire.FromWriter(w), Workspace: wire.FromWorkspace(&ws), Limits: wire.FromLimits(l)}, nil)
}

func (s store) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	var a wire.Applied
	err := s.c.call(wire.MStoreUpdateLimits, wire.StoreUpdateWithinLimits{Writer: wire.FromWriter(w), ID: id, Cond: wire.FromCond(cond), Patch: wire.Patch{Patch: p}, Limits: wire.FromLimits(l)}, &a)
	return a.Applied, err
}

func (s store) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	var a wire.Applied
	err := s.c.call(wire.MStoreUpdate, wire.StoreUpdate{Writer: wire.FromWriter(w), ID: id, Cond: wire.FromCond(cond), Patch: wire.Patch{Patch: p}}, &a)
	return a.Applied, err
}

func (s store) UpdateMany(ctx context.Context, w contracts.Writer, updates []ports.RowUpdate) error {
	rows := make([]wire.RowUpdate, len(updates))
	for i, u := range updates {
		rows[i] = wire.RowUpdate{ID: u.ID, Cond: wire.FromCond(u.Cond), Patch: wire.Patch{Patch: u.Patch}}
	}
	return s.c.call(wire.MStoreUpdateMany, wire.StoreUpdateMany{Writer: wire.FromWriter(w), Updates: rows}, nil)
}

func (s store) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	if ids == nil {
		ids = []string{}
	}
	return s.c.call(wire.MStoreMarkObserved, wire.StoreMarkObserved{Writer: wire.FromWriter(w), IDs: ids, At: wire.T(at)}, nil)
}

type leadership struct{ c *conn }

func (l leadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	var a wire.Acquired
	if err := l.c.call(wire.MLeadershipTryAcquire, wire.TryAcquire{Holder: holder}, &a); err != nil {
		return nil, false, err
	}
	if !a.OK {
		return nil, false, nil
	}
	return lease{c: l.c, h: a.Lease, epoch: a.Epoch}, true, nil
}

type lease struct {
	c     *conn
	h     int64
	epoch int64
}

func (l lease) Epoch() int64 { return l.epoch }

func (l lease) Check(ctx context.Context) error {
	return l.c.call(wire.MLeaseCheck, wire.Lease{Lease: l.h}, nil)
}

func (l lease) Release(ctx context.Context) error {
	return l.c.call(wire.MLeaseRelease, wire.Lease{Lease: l.h}, nil)
}

type feed struct{ c *conn }

func (f feed) Listen(ctx context.Context) (ports.Listener, error) {
	var l wire.Listening
	if err := f.c.call(wire.MFeedListen, wire.None{}, &l); err != nil {
		return nil, err
	}
	return listener{c: f.c, h: l.Listener}, nil
}

type listener struct {
	c *conn
	h int64
}

func (l listener) Poll(ctx context.Context) ([]ports.Change, error) {
	var changes []ports.Change
	if err := l.c.call(wire.MListenerPoll, wire.Listener{Listener: l.h}, &changes); err != nil {
		return nil, err
	}
	return changes, nil
}

// Ready never fires: under the simulator nothing waits on real time.
func (l listener) Ready() <-chan struct{} { return nil }

func (l listener) Close() error {
	return l.c.call(wire.MListenerClose, wire.Listener{Listener: l.h}, nil)
}

type instances struct{ c *conn }

func (x instances) Start(ctx context.Context, id, imageRef string) error {
	return x.c.call(wire.MInstancesStart, wire.InstancesStart{ID: id, ImageRef: imageRef}, nil)
}

func (x instances) Delete(ctx context.Context, id string) error {
	return x.c.call(wire.MInstancesDelete, wire.ID{ID: id}, nil)
}

func (x instances) List(ctx context.Context) ([]ports.InstanceState, error) {
	var list []wire.InstanceState
	if err := x.c.call(wire.MInstancesList, wire.None{}, &list); err != nil {
		return nil, err
	}
	out := make([]ports.InstanceState, len(list))
	for i, s := range list {
		out[i] = ports.InstanceState{WorkspaceID: s.WorkspaceID, Running: s.Running}
	}
	return out, nil
}

type storage struct{ c *conn }

func (x storage) Provision(ctx context.Context, id string) error {
	return x.c.call(wire.MStorageProvision, wire.ID{ID: id}, nil)
}

func (x storage) ListVolumes(ctx context.Context) ([]string, error) {
	var ids []string
	if err := x.c.call(wire.MStorageListVolumes, wire.None{}, &ids); err != nil {
		return nil, err
	}
	return ids, nil
}

func (x storage) Archive(ctx context.Context, id, opID string) (string, error) {
	var key string
	err := x.c.call(wire.MStorageArchive, wire.StorageArchive{ID: id, OpID: opID}, &key)
	return key, err
}

func (x storage) Restore(ctx context.Context, id, key string) (string, error) {
	var marker string
	err := x.c.call(wire.MStorageRestore, wire.StorageRestore{ID: id, Key: key}, &marker)
	return marker, err
}

func (x storage) DeleteVolume(ctx context.Context, id string) error {
	return x.c.call(wire.MStorageDeleteVolume, wire.ID{ID: id}, nil)
}

type objects struct{ c *conn }

func (o objects) Put(ctx context.Context, key string, data []byte) error {
	return o.c.call(wire.MObjectsPut, wire.ObjectsPut{Key: key, Data: data}, nil)
}

func (o objects) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	if err := o.c.call(wire.MObjectsGet, wire.Key{Key: key}, &data); err != nil {
		return nil, err
	}
	return data, nil
}

func (o objects) Head(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := o.c.call(wire.MObjectsHead, wire.Key{Key: key}, &ok)
	return ok, err
}

func (o objects) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	var list []wire.ObjectInfo
	if err := o.c.call(wire.MObjectsList, wire.ObjectsList{Prefix: prefix}, &list); err != nil {
		return nil, err
	}
	out := make([]ports.ObjectInfo, len(list))
	for i, x := range list {
		out[i] = ports.ObjectInfo{Key: x.Key, Size: x.Size}
	}
	return out, nil
}

func (o objects) Delete(ctx context.Context, key string) error {
	return o.c.call(wire.MObjectsDelete, wire.Key{Key: key}, nil)
}

type bus struct{ c *conn }

func (b bus) Publish(ctx context.Context, channel, payload string) error {
	return b.c.call(wire.MBusPublish, wire.BusPublish{Channel: channel, Payload: payload}, nil)
}

func (b bus) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	if channels == nil {
		channels = []string{}
	}
	var s wire.Subscribed
	if err := b.c.call(wire.MBusSubscribe, wire.BusSubscribe{Channels: channels}, &s); err != nil {
		return nil, err
	}
	return subscription{c: b.c, h: s.Subscription}, nil
}

func (b bus) Incr(ctx context.Context, key string) (int64, error) {
	var n int64
	err := b.c.call(wire.MBusIncr, wire.Key{Key: key}, &n)
	return n, err
}

func (b bus) Decr(ctx context.Context, key string) (int64, error) {
	var n int64
	err := b.c.call(wire.MBusDecr, wire.Key{Key: key}, &n)
	return n, err
}

func (b bus) Get(ctx context.Context, key string) (string, bool, error) {
	var v wire.BusValue
	err := b.c.call(wire.MBusGet, wire.Key{Key: key}, &v)
	return v.Value, v.OK, err
}

func (b bus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.c.call(wire.MBusSet, wire.BusSet{Key: key, Value: value, TTLNs: int64(ttl)}, nil)
}

func (b bus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	var ok bool
	err := b.c.call(wire.MBusSetNX, wire.BusSet{Key: key, Value: value, TTLNs: int64(ttl)}, &ok)
	return ok, err
}

func (b bus) Del(ctx context.Context, keys ...string) error {
	if keys == nil {
		keys = []string{}
	}
	return b.c.call(wire.MBusDel, wire.BusDel{Keys: keys}, nil)
}

type subscription struct {
	c *conn
	h int64
}

// Poll returns nothing when the call fails: Poll has no error to report
// it with (as the simulator's crashed ports do).
func (s subscription) Poll() []ports.Message {
	var msgs []wire.Message
	if err := s.c.call(wire.MSubscriptionPoll, wire.Subscription{Subscription: s.h}, &msgs); err != nil {
		return nil
	}
	if len(msgs) == 0 {
		return nil
	}
	out := make([]ports.Message, len(msgs))
	for i, m := range msgs {
		out[i] = ports.Message{Channel: m.Channel, Payload: m.Payload}
	}
	return out
}

// Ready never fires: under the simulator nothing waits on real time.
func (s subscription) Ready() <-chan struct{} { return nil }

func (s subscription) Close() error {
	return s.c.call(wire.MSubscriptionClose, wire.Subscription{Subscription: s.h}, nil)
}

// clock is the exchange's now.
type clock struct{ c *conn }

func (k clock) Now() time.Time { return k.c.now }

// ids asks the harness for each id.
type ids struct{ c *conn }

func (x ids) NewID() string {
	var id string
	if err := x.c.call(wire.MIDsNewID, wire.None{}, &id); err != nil {
		x.c.fail("ids.new_id: %v", err)
	}
	return id
}

var (
	_ ports.Store        = store{}
	_ ports.Leadership   = leadership{}
	_ ports.Lease        = lease{}
	_ ports.ChangeFeed   = feed{}
	_ ports.Listener     = listener{}
	_ ports.Instances    = instances{}
	_ ports.Storage      = storage{}
	_ ports.Objects      = objects{}
	_ ports.Bus          = bus{}
	_ ports.Subscription = subscription{}
	_ ports.Clock        = clock{}
	_ ports.IDs          = ids{}
)
