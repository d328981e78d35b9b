package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wsconverge/converge/contracts"
)

// NullString is a nullable text column: "" in Go is null on the wire (the
// store cannot tell them apart either). Both null and "" decode to "".
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return null, nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads a string or null.
func (s *NullString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, null) {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a string or null, got %s", clip(b))
	}
	*s = NullString(v)
	return nil
}

// Workspace is a row of the workspaces table, with the column names of
// SPEC 1.1.
type Workspace struct {
	ID                string                    `json:"id"`
	OwnerUserID       string                    `json:"owner_user_id"`
	Name              string                    `json:"name"`
	Description       NullString                `json:"description"`
	Memo              NullString                `json:"memo"`
	ImageRef          string                    `json:"image_ref"`
	InstanceBackend   contracts.InstanceBackend `json:"instance_backend"`
	StorageBackend    contracts.StorageBackend  `json:"storage_backend"`
	HomeStoreKey      string                    `json:"home_store_key"`
	HomeCtx           *contracts.HomeCtx        `json:"home_ctx"`
	ObservedStatus    contracts.ObservedStatus  `json:"observed_status"`
	HealthStatus      contracts.HealthStatus    `json:"health_status"`
	ObservedAt        Time                      `json:"observed_at"`
	Operation         contracts.Operation       `json:"operation"`
	OpStartedAt       Time                      `json:"op_started_at"`
	OpID              NullString                `json:"op_id"`
	ArchiveKey        NullString                `json:"archive_key"`
	ErrorCount        int                       `json:"error_count"`
	ErrorInfo         *ErrorInfo                `json:"error_info"`
	ErrorMessage      NullString                `json:"error_message"`
	PreviousStatus    NullString                `json:"previous_status"`
	DesiredState      contracts.DesiredState    `json:"desired_state"`
	DeletedAt         Time                      `json:"deleted_at"`
	StandbyTTLSeconds int                       `json:"standby_ttl_seconds"`
	ArchiveTTLSeconds int                       `json:"archive_ttl_seconds"`
	LastAccessAt      Time                      `json:"last_access_at"`
	CreatedAt         Time                      `json:"created_at"`
	UpdatedAt         Time                      `json:"updated_at"`
}

// ErrorInfo is the error_info column (SPEC 1.5).
type ErrorInfo struct {
	Reason     contracts.Reason    `json:"reason"`
	Message    string              `json:"message"`
	IsTerminal bool                `json:"is_terminal"`
	Operation  contracts.Operation `json:"operation"`
	ErrorCount int                 `json:"error_count"`
	Context    map[string]any      `json:"context"`
	OccurredAt Time                `json:"occurred_at"`
}

// FromErrorInfo is e's wire form (nil for nil).
func FromErrorInfo(e *contracts.ErrorInfo) *ErrorInfo {
	if e == nil {
		return nil
	}
	return &ErrorInfo{Reason: e.Reason, Message: e.Message, IsTerminal: e.IsTerminal, Operation: e.Operation,
		ErrorCount: e.ErrorCount, Context: e.Context, OccurredAt: T(e.OccurredAt)}
}

// Contracts is e as the contracts type, validated.
func (e *ErrorInfo) Contracts() (*contracts.ErrorInfo, error) {
	if e == nil {
		return nil, nil
	}
	switch {
	case !validReason(e.Reason):
		return nil, fmt.Errorf("error_info.reason %q: want one of Mismatch, Unreachable, ActionFailed, Timeout, RetryExceeded, DataLost", e.Reason)
	case e.Operation != "" && !e.Operation.Valid():
		return nil, fmt.Errorf("error_info.operation %q is not an operation", e.Operation)
	}
	return &contracts.ErrorInfo{Reason: e.Reason, Message: e.Message, IsTerminal: e.IsTerminal, Operation: e.Operation,
		ErrorCount: e.ErrorCount, Context: e.Context, OccurredAt: e.OccurredAt.Time}, nil
}

func validReason(r contracts.Reason) bool {
	switch r {
	case contracts.ReasonMismatch, contracts.ReasonUnreachable, contracts.ReasonActionFailed,
		contracts.ReasonTimeout, contracts.ReasonRetryExceeded, contracts.ReasonDataLost:
		return true
	}
	return false
}

// FromWorkspace is w's wire form.
func FromWorkspace(w *contracts.Workspace) Workspace {
	return Workspace{
		ID: w.ID, OwnerUserID: w.OwnerUserID, Name: w.Name,
		Description: NullString(w.Description), Memo: NullString(w.Memo), ImageRef: w.ImageRef,
		InstanceBackend: w.InstanceBackend, StorageBackend: w.StorageBackend, HomeStoreKey: w.HomeStoreKey,
		HomeCtx:        w.HomeCtx,
		ObservedStatus: w.ObservedStatus, HealthStatus: w.HealthStatus, ObservedAt: T(w.ObservedAt),
		Operation: w.Operation, OpStartedAt: T(w.OpStartedAt), OpID: NullString(w.OpID),
		ArchiveKey: NullString(w.ArchiveKey), ErrorCount: w.ErrorCount, ErrorInfo: FromErrorInfo(w.ErrorInfo),
		ErrorMessage: NullString(w.ErrorMessage), PreviousStatus: NullString(w.PreviousStatus),
		DesiredState: w.DesiredState, DeletedAt: T(w.DeletedAt),
		StandbyTTLSeconds: w.StandbyTTLSeconds, ArchiveTTLSeconds: w.ArchiveTTLSeconds,
		LastAccessAt: T(w.LastAccessAt), CreatedAt: T(w.CreatedAt), UpdatedAt: T(w.UpdatedAt),
	}
}

// FromWorkspaces is rows' wire form (an empty list, never null).
func FromWorkspaces(rows []contracts.Workspace) []Workspace {
	out := make([]Workspace, len(rows))
	for i := range rows {
		out[i] = FromWorkspace(&rows[i])
	}
	return out
}

// Contracts is w as the contracts type, its enums validated.
func (w *Workspace) Contracts() (contracts.Workspace, error) {
	switch {
	case !w.ObservedStatus.Valid():
		return contracts.Workspace{}, fmt.Errorf("observed_status %q: want PENDING, STANDBY, RUNNING or DELETED", w.ObservedStatus)
	case !w.HealthStatus.Valid():
		return contracts.Workspace{}, fmt.Errorf("health_status %q: want OK or ERROR", w.HealthStatus)
	case !w.Operation.Valid():
		return contracts.Workspace{}, fmt.Errorf("operation %q is not an operation", w.Operation)
	case !w.DesiredState.Valid():
		return contracts.Workspace{}, fmt.Errorf("desired_state %q: want PENDING, STANDBY or RUNNING", w.DesiredState)
	case w.PreviousStatus != "" && !contracts.ObservedStatus(w.PreviousStatus).Valid():
		return contracts.Workspace{}, fmt.Errorf("previous_status %q is not an observed status", w.PreviousStatus)
	}
	ei, err := w.ErrorInfo.Contracts()
	if err != nil {
		return contracts.Workspace{}, err
	}
	return contracts.Workspace{
		ID: w.ID, OwnerUserID: w.OwnerUserID, Name: w.Name,
		Description: string(w.Description), Memo: string(w.Memo), ImageRef: w.ImageRef,
		InstanceBackend: w.InstanceBackend, StorageBackend: w.StorageBackend, HomeStoreKey: w.HomeStoreKey,
		HomeCtx:        w.HomeCtx,
		ObservedStatus: w.ObservedStatus, HealthStatus: w.HealthStatus, ObservedAt: w.ObservedAt.Time,
		Operation: w.Operation, OpStartedAt: w.OpStartedAt.Time, OpID: string(w.OpID),
		ArchiveKey: string(w.ArchiveKey), ErrorCount: w.ErrorCount, ErrorInfo: ei,
		ErrorMessage: string(w.ErrorMessage), PreviousStatus: contracts.ObservedStatus(w.PreviousStatus),
		DesiredState: w.DesiredState, DeletedAt: w.DeletedAt.Time,
		StandbyTTLSeconds: w.StandbyTTLSeconds, ArchiveTTLSeconds: w.ArchiveTTLSeconds,
		LastAccessAt: w.LastAccessAt.Time, CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}, nil
}

// ContractsList converts a list of rows, naming the first bad one.
func ContractsList(rows []Workspace) ([]contracts.Workspace, error) {
	out := make([]contracts.Workspace, len(rows))
	for i := range rows {
		w, err := rows[i].Contracts()
		if err != nil {
			return nil, fmt.Errorf("row %d (%s): %w", i, rows[i].ID, err)
		}
		out[i] = w
	}
	return out, nil
}
