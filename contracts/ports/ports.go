package ports

import (
	"context"
	"time"

	"github.com/wsconverge/converge/contracts"
)

// Clock tells the time. The simulator's clock is virtual.
type Clock interface {
	Now() time.Time
}

// IDs issues new unique ids (UUID strings). The simulator's are seeded.
type IDs interface {
	NewID() string
}

// Store is the workspaces table.
//
// Every write checks the values it stores first: a string the table cannot
// hold (contracts.CheckRow, contracts.CheckPatch: a NUL character, invalid
// UTF-8, more characters than its column) fails the whole write with an
// error wrapping contracts.ErrInvalidInput, and nothing is written.
type Store interface {
	// Get returns one row, or contracts.ErrNotFound.
	Get(ctx context.Context, id string) (contracts.Workspace, error)
	// List returns the rows selected by f, ordered by id.
	List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error)
	// Scan calls fn with each row selected by f, ordered by id, as a
	// cursor does, without building the whole selection: the
	// HealthMonitor's pass reads every row of the fleet every few seconds.
	// The row fn gets is valid only during the call (fn copies what it
	// keeps, and may change its copy freely); fn must not call the store.
	// An error (of the query, not of fn) can come after some rows were
	// passed to fn: the caller then discards what it read.
	Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error
	// Insert adds a new row, attributed to w.
	Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error
	// InsertWithinLimits is Insert under the running-limit guard (SPEC
	// 4.3): atomically with the write, and serialised with every other
	// guarded write, the store counts the rows that count toward the
	// limits (contracts.CountsRunning), and inserts only if
	// contracts.CheckGuard(l, ws.OwnerUserID, ws.ID, rows) passes. When it
	// does not, nothing is written and the error is the
	// *contracts.LimitExceeded it returned (the 429 body). Callers guard
	// the writes that ask for RUNNING.
	InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error
	// Update applies p to row id if cond holds, attributed to w. A writer
	// with a non-zero epoch is fenced: the update fails with
	// contracts.ErrFenced unless the epoch is the current leader epoch.
	// applied is false (and err nil) when cond does not hold.
	Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (applied bool, err error)
	// UpdateWithinLimits is Update under the running-limit guard, as
	// InsertWithinLimits: cond is evaluated first (applied false, err nil
	// when it fails), then the guard for the row's owner; a guard that
	// fails writes nothing and returns its *contracts.LimitExceeded.
	UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (applied bool, err error)
	// UpdateMany applies one patch per row with the same writer, each under
	// its own condition, in one round trip (the HealthMonitor's pass).
	// Rows whose condition fails are skipped. Fencing applies as in Update.
	UpdateMany(ctx context.Context, w contracts.Writer, updates []RowUpdate) error
	// MarkObserved sets observed_at = at on every row in ids, in one round
	// trip: the HealthMonitor's write for every workspace whose
	// observation changed nothing else. It ends an observation pass, so
	// stores that record history note the pass here. Fencing applies as
	// in Update.
	MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error
}

// RowUpdate is one row's part of an UpdateMany.
type RowUpdate struct {
	ID    string
	Cond  contracts.Cond
	Patch contracts.Patch
}

// Leadership is leader election (SPEC 3.1): a session-level lock on a
// dedicated session, and a fencing epoch incremented on each acquisition.
type Leadership interface {
	// TryAcquire tries to take the leader lock for holder without waiting.
	// ok is false when another session holds it.
	TryAcquire(ctx context.Context, holder string) (lease Lease, ok bool, err error)
}

// Lease is a held leader lock.
type Lease interface {
	// Epoch is the fencing epoch this acquisition received.
	Epoch() int64
	// Check verifies the lock is still held (the session is alive); it
	// returns contracts.ErrNotLeader once it is not.
	Check(ctx context.Context) error
	// Release gives the lock up.
	Release(ctx context.Context) error
}

// InstanceState is one workspace container as listed.
type InstanceState struct {
	WorkspaceID string
	Running     bool
}

// Instances controls workspace containers (SPEC 5.1). Errors are
// *contracts.ProviderError.
type Instances interface {
	// Start creates and starts ws-{id} with its volume mounted; it returns
	// once running. Running already is success; a stopped leftover is
	// recreated; it fails with VOLUME_NOT_FOUND when there is no volume.
	Start(ctx context.Context, id, imageRef string) error
	// Delete kills and removes the container; absent is success.
	Delete(ctx context.Context, id string) error
	// List returns every workspace container, in one call, ordered by
	// workspace id (ascending, each once).
	List(ctx context.Context) ([]InstanceState, error)
}

// Storage manages home volumes and their archives (SPEC 5.2).
type Storage interface {
	// Provision creates the volume; existing is success.
	Provision(ctx context.Context, id string) error
	// ListVolumes returns the ids of every workspace with a volume, in
	// ascending order, each once.
	ListVolumes(ctx context.Context) ([]string, error)
	// Archive runs the archive job for (id, opID) and returns the key; a
	// complete archive already there is not uploaded again.
	Archive(ctx context.Context, id, opID string) (key string, err error)
	// Restore makes the volume equal to archive key and returns the marker
	// (= key). A missing object or checksum, or a mismatch, is DataLost.
	Restore(ctx context.Context, id, key string) (marker string, err error)
	// DeleteVolume removes the volume; absent is success; in use is an
	// error (VOLUME_IN_USE).
	DeleteVolume(ctx context.Context, id string) error
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key  string
	Size int64
}

// Objects is the archive bucket.
type Objects interface {
	Put(ctx context.Context, key string, data []byte) error
	// Get returns contracts.ErrNotFound for a missing key.
	Get(ctx context.Context, key string) ([]byte, error)
	// Head reports whether key exists.
	Head(ctx context.Context, key string) (bool, error)
	// List returns every object under prefix, ordered by key.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Delete removes key; absent is success.
	Delete(ctx context.Context, key string) error
}

// Message is one pub/sub message.
type Message struct {
	Channel string
	Payload string
}

// Subscription receives messages published after it was made.
type Subscription interface {
	// Poll returns the messages received since the last Poll, oldest first,
	// without waiting.
	Poll() []Message
	// Ready is signalled (without blocking the sender) when messages
	// arrive, for callers that wait on real time.
	Ready() <-chan struct{}
	Close() error
}

// Bus is Redis: pub/sub (at most once), counters and expiring keys.
type Bus interface {
	Publish(ctx context.Context, channel, payload string) error
	Subscribe(ctx context.Context, channels ...string) (Subscription, error)
	// Incr and Decr change an integer counter and return its new value.
	Incr(ctx context.Context, key string) (int64, error)
	Decr(ctx context.Context, key string) (int64, error)
	// Get returns a key's value; ok is false when it is absent or expired.
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	// Set stores value; ttl 0 means no expiry.
	Set(ctx context.Context, key, value string, ttl time.Duration) error
	// SetNX stores value only if key is absent and reports whether it did.
	SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	Del(ctx context.Context, keys ...string) error
}

// Change is one notification of the workspace_changes feed (SPEC 4.6).
type Change struct {
	WorkspaceID    string                   `json:"workspace_id"`
	ObservedStatus contracts.ObservedStatus `json:"observed_status"`
	HealthStatus   contracts.HealthStatus   `json:"health_status"`
	Operation      contracts.Operation      `json:"operation"`
	DesiredState   contracts.DesiredState   `json:"desired_state"`
	Deleted        bool                     `json:"deleted"`
	ArchiveKey     string                   `json:"archive_key,omitempty"`
	ErrorMessage   string                   `json:"error_message,omitempty"`
	ErrorCount     int                      `json:"error_count"`
	Display        contracts.DisplayState   `json:"display"`
	At             time.Time                `json:"at"`
}

// ChangeFeed is the store's notification channel (PG LISTEN/NOTIFY).
type ChangeFeed interface {
	// Listen starts listening; notifications sent before are not seen.
	Listen(ctx context.Context) (Listener, error)
}

// Listener receives change notifications.
type Listener interface {
	// Poll returns the notifications received since the last Poll
	// without waiting, or an error once the session is lost (notifications
	// sent meanwhile are gone: re-Listen and resynchronise).
	Poll(ctx context.Context) ([]Change, error)
	// Ready is signalled when notifications arrive.
	Ready() <-chan struct{}
	Close() error
}

// ChangeOf builds the change notification of row w at time at.
func ChangeOf(w *contracts.Workspace, at time.Time) Change {
	return Change{
		WorkspaceID:    w.ID,
		ObservedStatus: w.ObservedStatus,
		HealthStatus:   w.HealthStatus,
		Operation:      w.Operation,
		DesiredState:   w.DesiredState,
		Deleted:        w.Deleted(),
		ArchiveKey:     w.ArchiveKey,
		ErrorMessage:   w.ErrorMessage,
		ErrorCount:     w.ErrorCount,
		Display:        contracts.Display(w),
		At:             at,
	}
}

// NotifyColumns are the columns whose change fires a notification (SPEC 4.6).
var NotifyColumns = []contracts.Column{
	contracts.ColObservedStatus, contracts.ColHealthStatus, contracts.ColOperation,
	contracts.ColDesiredState, contracts.ColDeletedAt, contracts.ColErrorInfo,
}

// Deps is everything the harness hands an implementation under test to
// build one coordinator instance or one API service. Each coordinator
// instance gets its own Deps: its own Leadership session, its own
// (possibly crash-wrapped) ports.
type Deps struct {
	// Instance names the coordinator instance or API process.
	Instance   string
	Store      Store
	Leadership Leadership
	Feed       ChangeFeed
	Instances  Instances
	Storage    Storage
	Objects    Objects
	Bus        Bus
	Clock      Clock
	IDs        IDs
	Limits     contracts.Limits
	// Note, when set, leaves a line of text in the run's history (a
	// KindNote event of this instance): what an implementation run out
	// of process wrote to its standard error, or a message of its own.
	// Nil drops notes.
	Note func(text string)
}

// API is the API service layer (SPEC 4.3): the only writer of desired_state.
// Errors that reject a request are *contracts.APIError.
type API interface {
	Create(ctx context.Context, user string, req CreateRequest) (contracts.Workspace, error)
	Get(ctx context.Context, user, id string) (contracts.Workspace, error)
	List(ctx context.Context, user string) ([]contracts.Workspace, error)
	Patch(ctx context.Context, user, id string, req PatchRequest) (contracts.Workspace, error)
	Delete(ctx context.Context, user, id string) error
	Recover(ctx context.Context, admin, id string) error
	// Wake is the proxy's auto-wake of a STANDBY workspace (limits apply).
	Wake(ctx context.Context, id string) error
}

// AdminAPI is the administrators' listing an API may offer besides API
// (GET /api/v1/admin/workspaces), so an administrator can find the
// workspaces to recover. The caller has checked the admin role.
type AdminAPI interface {
	// AdminList returns every workspace q selects, whoever owns it,
	// ordered by id.
	AdminList(ctx context.Context, admin string, q contracts.AdminQuery) ([]contracts.Workspace, error)
}

// CreateRequest is POST /workspaces.
type CreateRequest struct {
	ID                string  `json:"-"`
	Name              string  `json:"name"`
	ImageRef          string  `json:"image_ref"`
	Description       string  `json:"description,omitempty"`
	DesiredState      *string `json:"desired_state,omitempty"`
	StandbyTTLSeconds *int    `json:"standby_ttl_seconds,omitempty"`
	ArchiveTTLSeconds *int    `json:"archive_ttl_seconds,omitempty"`
}

// PatchRequest is PATCH /workspaces/{id}.
type PatchRequest struct {
	DesiredState      *string `json:"desired_state,omitempty"`
	StandbyTTLSeconds *int    `json:"standby_ttl_seconds,omitempty"`
	ArchiveTTLSeconds *int    `json:"archive_ttl_seconds,omitempty"`
	Name              *string `json:"name,omitempty"`
	Description       *string `json:"description,omitempty"`
	Memo              *string `json:"memo,omitempty"`
}

// Coordinator is one coordinator instance of an implementation under test.
type Coordinator interface {
	// Step does everything due at the clock's now — leadership check or
	// acquisition, then each due component's tick, in a fixed order — and
	// returns when it next wants to run. An error means the instance is
	// dead (crashed); the harness drops it.
	Step(ctx context.Context) (next time.Time, err error)
	// IsLeader reports whether the instance currently believes it leads.
	IsLeader() bool
	// Close releases everything (a clean shutdown).
	Close(ctx context.Context) error
}

// Quieter is an optional interface of a Coordinator: it describes the
// steps the instance takes while nothing happens, so that whoever runs it
// can take those steps for it without waking it. The driver protocol
// does (version 2's wake-ups, docs/driver-protocol.md): a child process
// is then stepped only when something happened or its own work is due,
// while the history is the one its own quiet steps would record.
type Quieter interface {
	// Quiet is asked after each Step that did not fail; ok is false when
	// the next step does work whatever the answers it gets.
	Quiet() (q Quiet, ok bool)
}

// Quiet describes an instance's quiet steps. Until Until (exclusive; the
// zero time: no limit), a step at time t makes Calls, in order, and when
// each gets its quiet answer it changes nothing and asks to run again at
// t + Every, or at Until if that is sooner.
type Quiet struct {
	Until time.Time
	Every time.Duration
	Calls []QuietCall
}

// QuietCall is one call of a quiet step: exactly one field is set. Its
// quiet answer is the one that tells the instance nothing new.
type QuietCall struct {
	// Acquire: Leadership.TryAcquire(Acquire); quiet when another holds
	// the lock.
	Acquire string
	// Lease: Lease.Check; quiet when the lock still holds.
	Lease Lease
	// Listener: Listener.Poll; quiet when there is no change.
	Listener Listener
	// Subscription: Subscription.Poll; quiet when there is no message.
	Subscription Subscription
}

// System is an implementation under test: the reference, a mutant, or a
// third party's coordinator behind a small adapter.
type System interface {
	Name() string
	// NewCoordinator builds one coordinator instance on deps.
	NewCoordinator(deps Deps) (Coordinator, error)
	// NewAPI builds the API service layer on deps (deps.Leadership and
	// deps.Instance are unused).
	NewAPI(deps Deps) (API, error)
}

// ScanList is Scan for a store without a cursor: it lists the selection and
// passes each row of it to fn.
func ScanList(ctx context.Context, s interface {
	List(context.Context, contracts.Filter) ([]contracts.Workspace, error)
}, f contracts.Filter, fn func(*contracts.Workspace)) error {
	rows, err := s.List(ctx, f)
	if err != nil {
		return err
	}
	for i := range rows {
		fn(&rows[i])
	}
	return nil
}
