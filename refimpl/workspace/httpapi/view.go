package httpapi

import (
	"time"

	"github.com/wsconverge/converge/contracts"
)

// workspaceView is a workspace as the API shows it. Nullable columns are
// null when unset; times are RFC 3339 in UTC.
type workspaceView struct {
	ID                string                   `json:"id"`
	Name              string                   `json:"name"`
	Description       *string                  `json:"description"`
	Memo              *string                  `json:"memo"`
	ImageRef          string                   `json:"image_ref"`
	DisplayState      contracts.DisplayState   `json:"display_state"`
	ObservedStatus    contracts.ObservedStatus `json:"observed_status"`
	HealthStatus      contracts.HealthStatus   `json:"health_status"`
	Operation         contracts.Operation      `json:"operation"`
	DesiredState      contracts.DesiredState   `json:"desired_state"`
	ArchiveKey        *string                  `json:"archive_key"`
	Error             *errorView               `json:"error"`
	StandbyTTLSeconds int                      `json:"standby_ttl_seconds"`
	ArchiveTTLSeconds int                      `json:"archive_ttl_seconds"`
	LastAccessAt      *string                  `json:"last_access_at"`
	CreatedAt         string                   `json:"created_at"`
	UpdatedAt         string                   `json:"updated_at"`
}

// errorView is the recorded error of a workspace (error_info).
type errorView struct {
	Message    string           `json:"message"`
	Reason     contracts.Reason `json:"reason"`
	Count      int              `json:"count"`
	Terminal   bool             `json:"terminal"`
	OccurredAt *string          `json:"occurred_at"`
}

// listView is GET /workspaces.
type listView struct {
	Workspaces []workspaceView `json:"workspaces"`
}

// adminView is a workspace as an administrator sees it: the user's view
// plus its owner and soft deletion.
type adminView struct {
	workspaceView
	OwnerUserID string  `json:"owner_user_id"`
	DeletedAt   *string `json:"deleted_at"`
}

// adminListView is GET /admin/workspaces.
type adminListView struct {
	Workspaces []adminView `json:"workspaces"`
}

func adminViewOf(w *contracts.Workspace) adminView {
	return adminView{workspaceView: viewOf(w), OwnerUserID: w.OwnerUserID, DeletedAt: nullTime(w.DeletedAt)}
}

func viewOf(w *contracts.Workspace) workspaceView {
	v := workspaceView{
		ID:                w.ID,
		Name:              w.Name,
		Description:       nullString(w.Description),
		Memo:              nullString(w.Memo),
		ImageRef:          w.ImageRef,
		DisplayState:      contracts.Display(w),
		ObservedStatus:    w.ObservedStatus,
		HealthStatus:      w.HealthStatus,
		Operation:         w.Operation,
		DesiredState:      w.DesiredState,
		ArchiveKey:        nullString(w.ArchiveKey),
		StandbyTTLSeconds: w.StandbyTTLSeconds,
		ArchiveTTLSeconds: w.ArchiveTTLSeconds,
		LastAccessAt:      nullTime(w.LastAccessAt),
		CreatedAt:         formatTime(w.CreatedAt),
		UpdatedAt:         formatTime(w.UpdatedAt),
	}
	if e := w.ErrorInfo; e != nil {
		msg := w.ErrorMessage
		if msg == "" {
			msg = e.Message
		}
		v.Error = &errorView{Message: msg, Reason: e.Reason, Count: w.ErrorCount, Terminal: e.IsTerminal, OccurredAt: nullTime(e.OccurredAt)}
	}
	return v
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func nullTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
