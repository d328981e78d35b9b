package contracts

import (
	"time"
)

// Component names a writer or actor of the control plane.
type Component string

// Components. API covers every write made through the API service layer,
// including those it makes on behalf of the TTL Manager, the proxy's
// auto-wake and the StateReconciler's last_access_at stamps; Admin is the
// administrator's recovery through the API.
const (
	CompAPI             Component = "api"
	CompAdmin           Component = "admin"
	CompHealthMonitor   Component = "health_monitor"
	CompStateReconciler Component = "state_reconciler"
	CompTTLManager      Component = "ttl_manager"
	CompArchiveGC       Component = "archive_gc"
	CompEventListener   Component = "event_listener"
	CompProxy           Component = "proxy"
)

// Writer attributes a write: the component, the coordinator instance (empty
// for API processes) and the leader epoch it acted under (0: not a
// coordinator write, no fencing), plus, for API writes, on whose behalf.
type Writer struct {
	Component Component
	Instance  string
	Epoch     int64
	OnBehalf  Component
}

// Opt is an optional column assignment in a Patch.
type Opt[T any] struct {
	Set bool
	V   T
}

// Some is a set Opt.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, V: v} }

// Column names a column of the workspaces table.
type Column string

// Columns, in table order.
const (
	ColID                Column = "id"
	ColOwnerUserID       Column = "owner_user_id"
	ColName              Column = "name"
	ColDescription       Column = "description"
	ColMemo              Column = "memo"
	ColImageRef          Column = "image_ref"
	ColInstanceBackend   Column = "instance_backend"
	ColStorageBackend    Column = "storage_backend"
	ColHomeStoreKey      Column = "home_store_key"
	ColHomeCtx           Column = "home_ctx"
	ColObservedStatus    Column = "observed_status"
	ColHealthStatus      Column = "health_status"
	ColObservedAt        Column = "observed_at"
	ColOperation         Column = "operation"
	ColOpStartedAt       Column = "op_started_at"
	ColOpID              Column = "op_id"
	ColArchiveKey        Column = "archive_key"
	ColErrorCount        Column = "error_count"
	ColErrorInfo         Column = "error_info"
	ColErrorMessage      Column = "error_message"
	ColPreviousStatus    Column = "previous_status"
	ColDesiredState      Column = "desired_state"
	ColDeletedAt         Column = "deleted_at"
	ColStandbyTTLSeconds Column = "standby_ttl_seconds"
	ColArchiveTTLSeconds Column = "archive_ttl_seconds"
	ColLastAccessAt      Column = "last_access_at"
	ColCreatedAt         Column = "created_at"
	ColUpdatedAt         Column = "updated_at"
)

// Patch is a set of column assignments to one row. Only the updatable
// columns appear; updated_at is bookkeeping stamped by the store.
type Patch struct {
	Name              Opt[string]
	Description       Opt[string]
	Memo              Opt[string]
	HomeCtx           Opt[*HomeCtx]
	ObservedStatus    Opt[ObservedStatus]
	HealthStatus      Opt[HealthStatus]
	ObservedAt        Opt[time.Time]
	Operation         Opt[Operation]
	OpStartedAt       Opt[time.Time]
	OpID              Opt[string]
	ArchiveKey        Opt[string]
	ErrorCount        Opt[int]
	ErrorInfo         Opt[*ErrorInfo]
	ErrorMessage      Opt[string]
	PreviousStatus    Opt[ObservedStatus]
	DesiredState      Opt[DesiredState]
	DeletedAt         Opt[time.Time]
	StandbyTTLSeconds Opt[int]
	ArchiveTTLSeconds Opt[int]
	LastAccessAt      Opt[time.Time]
}

// patchColumns is the updatable columns in table order, indexed like Mask.
var patchColumns = [...]Column{
	ColName, ColDescription, ColMemo, ColHomeCtx, ColObservedStatus, ColHealthStatus, ColObservedAt,
	ColOperation, ColOpStartedAt, ColOpID, ColArchiveKey, ColErrorCount, ColErrorInfo, ColErrorMessage,
	ColPreviousStatus, ColDesiredState, ColDeletedAt, ColStandbyTTLSeconds, ColArchiveTTLSeconds, ColLastAccessAt,
}

// Mask is a bit set of the columns p assigns (bit i = patchColumns[i]);
// it allocates nothing, for hot paths.
func (p *Patch) Mask() uint32 {
	var m uint32
	for i, set := range [...]bool{
		p.Name.Set, p.Description.Set, p.Memo.Set, p.HomeCtx.Set, p.ObservedStatus.Set, p.HealthStatus.Set, p.ObservedAt.Set,
		p.Operation.Set, p.OpStartedAt.Set, p.OpID.Set, p.ArchiveKey.Set, p.ErrorCount.Set, p.ErrorInfo.Set, p.ErrorMessage.Set,
		p.PreviousStatus.Set, p.DesiredState.Set, p.DeletedAt.Set, p.StandbyTTLSeconds.Set, p.ArchiveTTLSeconds.Set, p.LastAccessAt.Set,
	} {
		if set {
			m |= 1 << i
		}
	}
	return m
}

// MaskObservedAt is the Mask of a patch that sets observed_at alone.
const MaskObservedAt uint32 = 1 << 6

// Columns lists the columns p assigns, in table order.
func (p *Patch) Columns() []Column {
	m := p.Mask()
	cols := make([]Column, 0, 4)
	for i, c := range patchColumns {
		if m&(1<<i) != 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// Empty reports whether p assigns nothing.
func (p *Patch) Empty() bool { return p.Mask() == 0 }

// Apply writes p's assignments into w (deep-copying pointer values) and
// stamps updated_at.
func (p *Patch) Apply(w *Workspace, now time.Time) {
	if p.Name.Set {
		w.Name = p.Name.V
	}
	if p.Description.Set {
		w.Description = p.Description.V
	}
	if p.Memo.Set {
		w.Memo = p.Memo.V
	}
	if p.HomeCtx.Set {
		w.HomeCtx = nil
		if p.HomeCtx.V != nil {
			h := *p.HomeCtx.V
			w.HomeCtx = &h
		}
	}
	if p.ObservedStatus.Set {
		w.ObservedStatus = p.ObservedStatus.V
	}
	if p.HealthStatus.Set {
		w.HealthStatus = p.HealthStatus.V
	}
	if p.ObservedAt.Set {
		w.ObservedAt = p.ObservedAt.V
	}
	if p.Operation.Set {
		w.Operation = p.Operation.V
	}
	if p.OpStartedAt.Set {
		w.OpStartedAt = p.OpStartedAt.V
	}
	if p.OpID.Set {
		w.OpID = p.OpID.V
	}
	if p.ArchiveKey.Set {
		w.ArchiveKey = p.ArchiveKey.V
	}
	if p.ErrorCount.Set {
		w.ErrorCount = p.ErrorCount.V
	}
	if p.ErrorInfo.Set {
		w.ErrorInfo = nil
		if p.ErrorInfo.V != nil {
			e := p.ErrorInfo.V.Clone()
			w.ErrorInfo = &e
		}
	}
	if p.ErrorMessage.Set {
		w.ErrorMessage = p.ErrorMessage.V
	}
	if p.PreviousStatus.Set {
		w.PreviousStatus = p.PreviousStatus.V
	}
	if p.DesiredState.Set {
		w.DesiredState = p.DesiredState.V
	}
	if p.DeletedAt.Set {
		w.DeletedAt = p.DeletedAt.V
	}
	if p.StandbyTTLSeconds.Set {
		w.StandbyTTLSeconds = p.StandbyTTLSeconds.V
	}
	if p.ArchiveTTLSeconds.Set {
		w.ArchiveTTLSeconds = p.ArchiveTTLSeconds.V
	}
	if p.LastAccessAt.Set {
		w.LastAccessAt = p.LastAccessAt.V
	}
	w.UpdatedAt = now
}

// Cond is the WHERE clause of a conditional (compare-and-set) update. Every
// set field must hold for the update to apply.
type Cond struct {
	// Operation: the row's operation must equal this.
	Operation Opt[Operation]
	// DesiredState: the row's desired_state must equal this.
	DesiredState Opt[DesiredState]
	// NotTerminal: error_info must not be terminal.
	NotTerminal bool
	// NotDeleted: deleted_at must be null.
	NotDeleted bool
	// ErrorInfoNull: error_info must be null.
	ErrorInfoNull bool
	// Terminal: error_info must be terminal (the workspace is in ERROR):
	// the administrator's recovery applies only then (SPEC 4.3), so of
	// concurrent recoveries exactly one resets the row.
	Terminal bool
}

// Holds reports whether c holds on w.
func (c Cond) Holds(w *Workspace) bool {
	if c.Operation.Set && w.Operation != c.Operation.V {
		return false
	}
	if c.DesiredState.Set && w.DesiredState != c.DesiredState.V {
		return false
	}
	if c.NotTerminal && w.Terminal() {
		return false
	}
	if c.NotDeleted && w.Deleted() {
		return false
	}
	if c.ErrorInfoNull && w.ErrorInfo != nil {
		return false
	}
	if c.Terminal && !w.Terminal() {
		return false
	}
	return true
}

// Owners is column ownership (SPEC 1.1, C3): the components allowed to write
// each updatable column. HealthMonitor's one-time error_info write and the
// administrator's reset are exceptions checked by ExceptionAllowed.
var Owners = map[Column][]Component{
	ColName:              {CompAPI},
	ColDescription:       {CompAPI},
	ColMemo:              {CompAPI},
	ColHomeCtx:           {CompStateReconciler},
	ColObservedStatus:    {CompHealthMonitor},
	ColHealthStatus:      {CompHealthMonitor},
	ColObservedAt:        {CompHealthMonitor},
	ColOperation:         {CompStateReconciler},
	ColOpStartedAt:       {CompStateReconciler},
	ColOpID:              {CompStateReconciler},
	ColArchiveKey:        {CompStateReconciler},
	ColErrorCount:        {CompStateReconciler},
	ColErrorInfo:         {CompStateReconciler},
	ColErrorMessage:      {CompStateReconciler},
	ColPreviousStatus:    {CompStateReconciler},
	ColDesiredState:      {CompAPI},
	ColDeletedAt:         {CompAPI},
	ColStandbyTTLSeconds: {CompAPI},
	ColArchiveTTLSeconds: {CompAPI},
	ColLastAccessAt:      {CompAPI},
}

// OwnerAllowed reports whether component c may write column col under the
// ownership table alone.
func OwnerAllowed(col Column, c Component) bool {
	for _, o := range Owners[col] {
		if o == c {
			return true
		}
	}
	return false
}

// WriteAllowed judges a whole write against C3: every column must be owned by
// the writer, or the write must be one of the two exceptions. before is the
// row as it was before the write.
func WriteAllowed(w Writer, before *Workspace, p *Patch) (ok bool, badColumn Column) {
	if w.Component == CompAdmin {
		// Recovery resets error_info, error_count and error_message
		// (its display copy, SPEC 4.3 as amended) and nothing else: a
		// reset, never another value.
		for _, c := range p.Columns() {
			reset := c == ColErrorInfo && p.ErrorInfo.V == nil ||
				c == ColErrorCount && p.ErrorCount.V == 0 ||
				c == ColErrorMessage && p.ErrorMessage.V == ""
			if !reset {
				return false, c
			}
		}
		return true, ""
	}
	for _, c := range p.Columns() {
		if OwnerAllowed(c, w.Component) {
			continue
		}
		if c == ColErrorInfo && w.Component == CompHealthMonitor && HealthMonitorErrorInfoAllowed(before, p) {
			continue
		}
		return false, c
	}
	return true, ""
}

// HealthMonitorErrorInfoAllowed is the C3 exception: the HealthMonitor may set
// error_info once, only while it is null, to the terminal
// container-without-volume Mismatch.
func HealthMonitorErrorInfoAllowed(before *Workspace, p *Patch) bool {
	if before == nil || before.ErrorInfo != nil || !p.ErrorInfo.Set || p.ErrorInfo.V == nil {
		return false
	}
	e := p.ErrorInfo.V
	return e.Reason == ReasonMismatch && e.IsTerminal && e.Context["violation"] == ViolationContainerWithoutVolume
}
