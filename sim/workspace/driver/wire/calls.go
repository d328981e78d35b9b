package wire

import (
	"github.com/wsconverge/converge/contracts/ports"
)

// Port call methods a child sends (TCall), one per method of the ports a
// coordinator or API process is given.
const (
	MStoreGet          = "store.get"
	MStoreList         = "store.list"
	MStoreInsert       = "store.insert"
	MStoreInsertLimits = "store.insert_within_limits"
	MStoreUpdate       = "store.update"
	MStoreUpdateLimits = "store.update_within_limits"
	MStoreUpdateMany   = "store.update_many"
	MStoreMarkObserved = "store.mark_observed"

	MLeadershipTryAcquire = "leadership.try_acquire"
	MLeaseCheck           = "lease.check"
	MLeaseRelease         = "lease.release"

	MFeedListen    = "feed.listen"
	MListenerPoll  = "listener.poll"
	MListenerClose = "listener.close"

	MInstancesStart  = "instances.start"
	MInstancesDelete = "instances.delete"
	MInstancesList   = "instances.list"

	MStorageProvision    = "storage.provision"
	MStorageListVolumes  = "storage.list_volumes"
	MStorageArchive      = "storage.archive"
	MStorageRestore      = "storage.restore"
	MStorageDeleteVolume = "storage.delete_volume"

	MObjectsPut    = "objects.put"
	MObjectsGet    = "objects.get"
	MObjectsHead   = "objects.head"
	MObjectsList   = "objects.list"
	MObjectsDelete = "objects.delete"

	MBusPublish        = "bus.publish"
	MBusSubscribe      = "bus.subscribe"
	MSubscriptionPoll  = "subscription.poll"
	MSubscriptionClose = "subscription.close"
	MBusIncr           = "bus.incr"
	MBusDecr           = "bus.decr"
	MBusGet            = "bus.get"
	MBusSet            = "bus.set"
	MBusSetNX          = "bus.set_nx"
	MBusDel            = "bus.del"

	MIDsNewID = "ids.new_id"
)

// Method ties a protocol method to the Go interface method of package
// ports it stands for.
type Method struct {
	// Name is the protocol's name ("store.get"); empty for a method that
	// never crosses the protocol.
	Name string
	// Port and Go name the interface and method in package ports
	// ("Store", "Get").
	Port, Go string
	// Local, for a method that does not cross, says how the other side
	// answers it.
	Local string
}

// PortMethods maps every method of every port to the protocol: each is a
// call the child sends, or answered locally (and says how).
var PortMethods = []Method{
	{MStoreGet, "Store", "Get", ""},
	{MStoreList, "Store", "List", ""},
	{"", "Store", "Scan", "the Go client lists (store.list) and passes each row to fn: a child without a cursor lists"},
	{MStoreInsert, "Store", "Insert", ""},
	{MStoreInsertLimits, "Store", "InsertWithinLimits", ""},
	{MStoreUpdate, "Store", "Update", ""},
	{MStoreUpdateLimits, "Store", "UpdateWithinLimits", ""},
	{MStoreUpdateMany, "Store", "UpdateMany", ""},
	{MStoreMarkObserved, "Store", "MarkObserved", ""},
	{MLeadershipTryAcquire, "Leadership", "TryAcquire", ""},
	{MLeaseCheck, "Lease", "Check", ""},
	{MLeaseRelease, "Lease", "Release", ""},
	{"", "Lease", "Epoch", "try_acquire returns the epoch with the lease"},
	{MFeedListen, "ChangeFeed", "Listen", ""},
	{MListenerPoll, "Listener", "Poll", ""},
	{MListenerClose, "Listener", "Close", ""},
	{"", "Listener", "Ready", "nothing waits on real time under the simulator: poll"},
	{MInstancesStart, "Instances", "Start", ""},
	{MInstancesDelete, "Instances", "Delete", ""},
	{MInstancesList, "Instances", "List", ""},
	{MStorageProvision, "Storage", "Provision", ""},
	{MStorageListVolumes, "Storage", "ListVolumes", ""},
	{MStorageArchive, "Storage", "Archive", ""},
	{MStorageRestore, "Storage", "Restore", ""},
	{MStorageDeleteVolume, "Storage", "DeleteVolume", ""},
	{MObjectsPut, "Objects", "Put", ""},
	{MObjectsGet, "Objects", "Get", ""},
	{MObjectsHead, "Objects", "Head", ""},
	{MObjectsList, "Objects", "List", ""},
	{MObjectsDelete, "Objects", "Delete", ""},
	{MBusPublish, "Bus", "Publish", ""},
	{MBusSubscribe, "Bus", "Subscribe", ""},
	{MSubscriptionPoll, "Subscription", "Poll", ""},
	{MSubscriptionClose, "Subscription", "Close", ""},
	{"", "Subscription", "Ready", "nothing waits on real time under the simulator: poll"},
	{MBusIncr, "Bus", "Incr", ""},
	{MBusDecr, "Bus", "Decr", ""},
	{MBusGet, "Bus", "Get", ""},
	{MBusSet, "Bus", "Set", ""},
	{MBusSetNX, "Bus", "SetNX", ""},
	{MBusDel, "Bus", "Del", ""},
	{MIDsNewID, "IDs", "NewID", ""},
	{"", "Clock", "Now", "the now of the exchange (step, api or close) in progress"},
}

// API methods the harness sends an API process (TAPI).
const (
	APICreate  = "create"
	APIGet     = "get"
	APIList    = "list"
	APIPatch   = "patch"
	APIDelete  = "delete"
	APIRecover = "recover"
	APIWake    = "wake"
)

// HarnessMethods maps the methods the harness calls on an implementation
// (ports.API and ports.Coordinator) to the protocol.
var HarnessMethods = []Method{
	{APICreate, "API", "Create", ""},
	{APIGet, "API", "Get", ""},
	{APIList, "API", "List", ""},
	{APIPatch, "API", "Patch", ""},
	{APIDelete, "API", "Delete", ""},
	{APIRecover, "API", "Recover", ""},
	{APIWake, "API", "Wake", ""},
	{"", "AdminAPI", "AdminList", "an optional interface the HTTP admin listing uses; the simulator never calls it, so a child need not offer it"},
	{TStep, "Coordinator", "Step", ""},
	{TClose, "Coordinator", "Close", ""},
	{"", "Coordinator", "IsLeader", "the leader flag of the child's last call or done"},
	{"", "Quieter", "Quiet", "the wake-up of a step's done (version 2): the Go client declares it from Quiet"},
	{"", "System", "Name", "the harness's own name for the command"},
	{THello, "System", "NewCoordinator", ""},
	{THello, "System", "NewAPI", ""},
}

// ---- arguments and results of port calls ---------------------------------

// None is the arguments of a call that takes none: {}.
type None struct{}

// ID names a workspace: store.get, instances.delete, storage.provision,
// storage.delete_volume.
type ID struct {
	ID string `json:"id"`
}

// Key names an object or a bus key: objects.get, objects.head,
// objects.delete, bus.incr, bus.decr, bus.get.
type Key struct {
	Key string `json:"key"`
}

// StoreList is store.list's arguments.
type StoreList struct {
	Filter Filter `json:"filter"`
}

// StoreInsert is store.insert's arguments.
type StoreInsert struct {
	Writer    Writer    `json:"writer"`
	Workspace Workspace `json:"workspace"`
}

// StoreInsertWithinLimits is store.insert_within_limits's arguments: an
// insert the store makes only if the running limits allow one more.
type StoreInsertWithinLimits struct {
	Writer    Writer    `json:"writer"`
	Workspace Workspace `json:"workspace"`
	Limits    Limits    `json:"limits"`
}

// StoreUpdateWithinLimits is store.update_within_limits's arguments: an
// update under the running-limit guard.
type StoreUpdateWithinLimits struct {
	Writer Writer `json:"writer"`
	ID     string `json:"id"`
	Cond   Cond   `json:"cond"`
	Patch  Patch  `json:"patch"`
	Limits Limits `json:"limits"`
}

// StoreUpdate is store.update's arguments.
type StoreUpdate struct {
	Writer Writer `json:"writer"`
	ID     string `json:"id"`
	Cond   Cond   `json:"cond"`
	Patch  Patch  `json:"patch"`
}

// Applied is store.update's result.
type Applied struct {
	Applied bool `json:"applied"`
}

// RowUpdate is one row of store.update_many.
type RowUpdate struct {
	ID    string `json:"id"`
	Cond  Cond   `json:"cond"`
	Patch Patch  `json:"patch"`
}

// StoreUpdateMany is store.update_many's arguments.
type StoreUpdateMany struct {
	Writer  Writer      `json:"writer"`
	Updates []RowUpdate `json:"updates"`
}

// StoreMarkObserved is store.mark_observed's arguments.
type StoreMarkObserved struct {
	Writer Writer   `json:"writer"`
	IDs    []string `json:"ids"`
	At     Time     `json:"at"`
}

// TryAcquire is leadership.try_acquire's arguments.
type TryAcquire struct {
	Holder string `json:"holder"`
}

// Acquired is leadership.try_acquire's result: when OK, a lease handle
// for lease.check and lease.release, and its fencing epoch.
type Acquired struct {
	OK    bool  `json:"ok"`
	Lease int64 `json:"lease,omitempty"`
	Epoch int64 `json:"epoch,omitempty"`
}

// Lease names a held lease: lease.check, lease.release.
type Lease struct {
	Lease int64 `json:"lease"`
}

// Listening is feed.listen's result: a listener handle.
type Listening struct {
	Listener int64 `json:"listener"`
}

// Listener names a listener: listener.poll (result: a list of
// ports.Change), listener.close.
type Listener struct {
	Listener int64 `json:"listener"`
}

// Change is a change notification (SPEC 4.6).
type Change = ports.Change

// InstancesStart is instances.start's arguments.
type InstancesStart struct {
	ID       string `json:"id"`
	ImageRef string `json:"image_ref"`
}

// InstanceState is one container of instances.list's result.
type InstanceState struct {
	WorkspaceID string `json:"workspace_id"`
	Running     bool   `json:"running"`
}

// StorageArchive is storage.archive's arguments (result: the key).
type StorageArchive struct {
	ID   string `json:"id"`
	OpID string `json:"op_id"`
}

// StorageRestore is storage.restore's arguments (result: the marker).
type StorageRestore struct {
	ID  string `json:"id"`
	Key string `json:"key"`
}

// ObjectsPut is objects.put's arguments; data is base64 (standard
// alphabet, padded), as objects.get's result is.
type ObjectsPut struct {
	Key  string `json:"key"`
	Data []byte `json:"data"`
}

// ObjectsList is objects.list's arguments.
type ObjectsList struct {
	Prefix string `json:"prefix"`
}

// ObjectInfo is one object of objects.list's result.
type ObjectInfo struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

// BusPublish is bus.publish's arguments.
type BusPublish struct {
	Channel string `json:"channel"`
	Payload string `json:"payload"`
}

// BusSubscribe is bus.subscribe's arguments.
type BusSubscribe struct {
	Channels []string `json:"channels"`
}

// Subscribed is bus.subscribe's result: a subscription handle.
type Subscribed struct {
	Subscription int64 `json:"subscription"`
}

// Subscription names a subscription: subscription.poll (result: a list
// of Message), subscription.close.
type Subscription struct {
	Subscription int64 `json:"subscription"`
}

// Message is one bus message.
type Message struct {
	Channel string `json:"channel"`
	Payload string `json:"payload"`
}

// BusValue is bus.get's result.
type BusValue struct {
	Value string `json:"value"`
	OK    bool   `json:"ok"`
}

// BusSet is bus.set's and bus.set_nx's arguments; ttl_ns 0 means no
// expiry.
type BusSet struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	TTLNs int64  `json:"ttl_ns"`
}

// BusDel is bus.del's arguments.
type BusDel struct {
	Keys []string `json:"keys"`
}

// ---- arguments of API calls ----------------------------------------------

// CreateRequest is an API create's request; id, when given, is the id to
// use (the harness's workload leaves it out: the API takes one from
// ids.new_id).
type CreateRequest struct {
	ID                string  `json:"id,omitempty"`
	Name              string  `json:"name"`
	ImageRef          string  `json:"image_ref"`
	Description       string  `json:"description,omitempty"`
	DesiredState      *string `json:"desired_state,omitempty"`
	StandbyTTLSeconds *int    `json:"standby_ttl_seconds,omitempty"`
	ArchiveTTLSeconds *int    `json:"archive_ttl_seconds,omitempty"`
}

// FromCreate is r's wire form.
func FromCreate(r ports.CreateRequest) CreateRequest {
	return CreateRequest{ID: r.ID, Name: r.Name, ImageRef: r.ImageRef, Description: r.Description,
		DesiredState: r.DesiredState, StandbyTTLSeconds: r.StandbyTTLSeconds, ArchiveTTLSeconds: r.ArchiveTTLSeconds}
}

// Ports is r as the ports type.
func (r CreateRequest) Ports() ports.CreateRequest {
	return ports.CreateRequest{ID: r.ID, Name: r.Name, ImageRef: r.ImageRef, Description: r.Description,
		DesiredState: r.DesiredState, StandbyTTLSeconds: r.StandbyTTLSeconds, ArchiveTTLSeconds: r.ArchiveTTLSeconds}
}

// APIArgs is every API call's arguments; the method says which are set:
// create (user, request), get (user, id), list (user), patch (user, id,
// request), delete (user, id), recover (admin, id), wake (id).
type APIArgs struct {
	User   string              `json:"user,omitempty"`
	Admin  string              `json:"admin,omitempty"`
	ID     string              `json:"id,omitempty"`
	Create *CreateRequest      `json:"create,omitempty"`
	Patch  *ports.PatchRequest `json:"patch,omitempty"`
}
