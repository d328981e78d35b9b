package contracts

import (
	"fmt"
	"time"
)

// ObservedStatus is what the HealthMonitor last saw of a workspace's real
// resources. It never holds ERROR: health is a separate axis.
type ObservedStatus string

// Observed statuses.
const (
	ObservedPending ObservedStatus = "PENDING"
	ObservedStandby ObservedStatus = "STANDBY"
	ObservedRunning ObservedStatus = "RUNNING"
	ObservedDeleted ObservedStatus = "DELETED"
)

// AllObserved lists every observed status in level order, DELETED last.
var AllObserved = []ObservedStatus{ObservedPending, ObservedStandby, ObservedRunning, ObservedDeleted}

// Level is the status's place in the ordered state machine (C5); DELETED has
// no level and reports ok=false.
func (s ObservedStatus) Level() (level int, ok bool) {
	switch s {
	case ObservedPending:
		return 0, true
	case ObservedStandby:
		return 10, true
	case ObservedRunning:
		return 20, true
	}
	return 0, false
}

// Valid reports whether s is one of the four observed statuses.
func (s ObservedStatus) Valid() bool {
	_, ok := s.Level()
	return ok || s == ObservedDeleted
}

// HealthStatus is the policy judgement on a workspace.
type HealthStatus string

// Health statuses.
const (
	HealthOK    HealthStatus = "OK"
	HealthError HealthStatus = "ERROR"
)

// Valid reports whether h is OK or ERROR.
func (h HealthStatus) Valid() bool { return h == HealthOK || h == HealthError }

// Operation is the action the StateReconciler has in progress.
type Operation string

// Operations.
const (
	OpNone         Operation = "NONE"
	OpProvisioning Operation = "PROVISIONING"
	OpRestoring    Operation = "RESTORING"
	OpStarting     Operation = "STARTING"
	OpStopping     Operation = "STOPPING"
	OpArchiving    Operation = "ARCHIVING"
	OpDeleting     Operation = "DELETING"
)

// AllOperations lists every operation, NONE first.
var AllOperations = []Operation{OpNone, OpProvisioning, OpRestoring, OpStarting, OpStopping, OpArchiving, OpDeleting}

// Valid reports whether o is a known operation.
func (o Operation) Valid() bool {
	for _, x := range AllOperations {
		if x == o {
			return true
		}
	}
	return false
}

// DesiredState is what the user wants. It never holds ERROR or DELETED.
type DesiredState string

// Desired states.
const (
	DesiredPending DesiredState = "PENDING"
	DesiredStandby DesiredState = "STANDBY"
	DesiredRunning DesiredState = "RUNNING"
)

// AllDesired lists every desired state in level order.
var AllDesired = []DesiredState{DesiredPending, DesiredStandby, DesiredRunning}

// Valid reports whether d is PENDING, STANDBY or RUNNING.
func (d DesiredState) Valid() bool {
	return d == DesiredPending || d == DesiredStandby || d == DesiredRunning
}

// Observed is the observed status with the same level as d.
func (d DesiredState) Observed() ObservedStatus { return ObservedStatus(d) }

// ParseDesiredState parses s, naming the accepted values on failure.
func ParseDesiredState(s string) (DesiredState, error) {
	d := DesiredState(s)
	if !d.Valid() {
		return "", fmt.Errorf("desired_state %q: want one of PENDING, STANDBY, RUNNING", s)
	}
	return d, nil
}

// InstanceBackend names the container runtime of a workspace.
type InstanceBackend string

// Instance backends.
const (
	InstanceLocalDocker InstanceBackend = "local-docker"
	InstanceK8s         InstanceBackend = "k8s"
)

// StorageBackend names the volume and archive backend of a workspace.
type StorageBackend string

// Storage backends.
const (
	StorageDockerVolume StorageBackend = "docker-volume"
	StorageMinio        StorageBackend = "minio"
)

// HomeCtx is the StateReconciler's home_ctx column.
type HomeCtx struct {
	RestoreMarker string `json:"restore_marker,omitempty"`
}

// Workspace is one row of the workspaces table (SPEC 1.1).
type Workspace struct {
	ID              string
	OwnerUserID     string
	Name            string
	Description     string
	Memo            string
	ImageRef        string
	InstanceBackend InstanceBackend
	StorageBackend  StorageBackend
	HomeStoreKey    string
	HomeCtx         *HomeCtx

	ObservedStatus ObservedStatus
	HealthStatus   HealthStatus
	ObservedAt     time.Time

	Operation      Operation
	OpStartedAt    time.Time
	OpID           string
	ArchiveKey     string
	ErrorCount     int
	ErrorInfo      *ErrorInfo
	ErrorMessage   string
	PreviousStatus ObservedStatus

	DesiredState      DesiredState
	DeletedAt         time.Time
	StandbyTTLSeconds int
	ArchiveTTLSeconds int
	LastAccessAt      time.Time

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Default TTLs of a new workspace.
const (
	DefaultStandbyTTLSeconds = 300
	DefaultArchiveTTLSeconds = 86400
)

// NewWorkspace returns a row with every column at its schema default.
func NewWorkspace(id, owner, name, imageRef string, now time.Time) Workspace {
	return Workspace{
		ID:                id,
		OwnerUserID:       owner,
		Name:              name,
		ImageRef:          imageRef,
		InstanceBackend:   InstanceLocalDocker,
		StorageBackend:    StorageDockerVolume,
		HomeStoreKey:      VolumeName(id),
		ObservedStatus:    ObservedPending,
		HealthStatus:      HealthOK,
		Operation:         OpNone,
		DesiredState:      DesiredRunning,
		StandbyTTLSeconds: DefaultStandbyTTLSeconds,
		ArchiveTTLSeconds: DefaultArchiveTTLSeconds,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
}

// Deleted reports whether the workspace is soft-deleted.
func (w *Workspace) Deleted() bool { return !w.DeletedAt.IsZero() }

// Terminal reports whether the workspace carries a terminal error_info.
func (w *Workspace) Terminal() bool { return w.ErrorInfo != nil && w.ErrorInfo.IsTerminal }

// RestoreMarker is home_ctx.restore_marker, or "".
func (w *Workspace) RestoreMarker() string {
	if w.HomeCtx == nil {
		return ""
	}
	return w.HomeCtx.RestoreMarker
}

// Clone returns a deep copy (the pointer columns are copied too).
func (w Workspace) Clone() Workspace {
	if w.HomeCtx != nil {
		h := *w.HomeCtx
		w.HomeCtx = &h
	}
	if w.ErrorInfo != nil {
		e := w.ErrorInfo.Clone()
		w.ErrorInfo = &e
	}
	return w
}
