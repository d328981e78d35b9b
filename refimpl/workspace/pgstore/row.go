package pgstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wsconverge/converge/contracts"
)

// selectColumns reads a workspaces row in the order scanWorkspace expects.
const selectColumns = `id::text, owner_user_id, name, description, memo, image_ref,
	instance_backend::text, storage_backend::text, home_store_key, home_ctx,
	observed_status::text, health_status::text, observed_at,
	operation::text, op_started_at, op_id::text, archive_key, error_count, error_info, error_message,
	previous_status::text, desired_state::text, deleted_at, standby_ttl_seconds, archive_ttl_seconds,
	last_access_at, created_at, updated_at`

// scanWorkspace scans one row selected with selectColumns. Nullable
// columns follow the contracts' conventions: NULL is "", the zero time or
// a nil pointer. Times are in UTC.
func scanWorkspace(r pgx.Row) (contracts.Workspace, error) {
	var (
		w                                         contracts.Workspace
		description, memo, opID, archiveKey       *string
		errorMessage, previousStatus              *string
		homeCtx, errorInfo                        []byte
		observedAt, opStartedAt, deletedAt        *time.Time
		lastAccessAt                              *time.Time
		errorCount, standbyTTL, archiveTTL        int32
		instanceBackend, storageBackend           string
		observedStatus, healthStatus, op, desired string
	)
	err := r.Scan(&w.ID, &w.OwnerUserID, &w.Name, &description, &memo, &w.ImageRef,
		&instanceBackend, &storageBackend, &w.HomeStoreKey, &homeCtx,
		&observedStatus, &healthStatus, &observedAt,
		&op, &opStartedAt, &opID, &archiveKey, &errorCount, &errorInfo, &errorMessage,
		&previousStatus, &desired, &deletedAt, &standbyTTL, &archiveTTL,
		&lastAccessAt, &w.CreatedAt, &w.UpdatedAt)
	if err != nil {
		return contracts.Workspace{}, err
	}
	w.Description, w.Memo = deref(description), deref(memo)
	w.InstanceBackend = contracts.InstanceBackend(instanceBackend)
	w.StorageBackend = contracts.StorageBackend(storageBackend)
	w.ObservedStatus = contracts.ObservedStatus(observedStatus)
	w.HealthStatus = contracts.HealthStatus(healthStatus)
	w.ObservedAt = derefTime(observedAt)
	w.Operation = contracts.Operation(op)
	w.OpStartedAt = derefTime(opStartedAt)
	w.OpID, w.ArchiveKey = deref(opID), deref(archiveKey)
	w.ErrorCount = int(errorCount)
	w.ErrorMessage = deref(errorMessage)
	w.PreviousStatus = contracts.ObservedStatus(deref(previousStatus))
	w.DesiredState = contracts.DesiredState(desired)
	w.DeletedAt = derefTime(deletedAt)
	w.StandbyTTLSeconds, w.ArchiveTTLSeconds = int(standbyTTL), int(archiveTTL)
	w.LastAccessAt = derefTime(lastAccessAt)
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	if w.HomeCtx, err = decodeHomeCtx(homeCtx); err != nil {
		return contracts.Workspace{}, fmt.Errorf("workspace %s: %w", w.ID, err)
	}
	if w.ErrorInfo, err = decodeErrorInfo(errorInfo); err != nil {
		return contracts.Workspace{}, fmt.Errorf("workspace %s: %w", w.ID, err)
	}
	return w, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func decodeHomeCtx(b []byte) (*contracts.HomeCtx, error) {
	if b == nil || string(b) == "null" {
		return nil, nil
	}
	var h contracts.HomeCtx
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("decode home_ctx: %w", err)
	}
	return &h, nil
}

func decodeErrorInfo(b []byte) (*contracts.ErrorInfo, error) {
	if b == nil || string(b) == "null" {
		return nil, nil
	}
	var e contracts.ErrorInfo
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode error_info: %w", err)
	}
	if !e.OccurredAt.IsZero() {
		e.OccurredAt = e.OccurredAt.UTC()
	}
	return &e, nil
}

// Parameter values: the contracts' empty values are NULL in nullable
// columns.

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// jsonText renders a jsonb parameter: nil pointers are NULL.
func jsonText[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// validUUID reports whether s is a UUID in its canonical text form (the
// only ids the uuid columns can hold; any other id names no row).
func validUUID(s string) bool { return len(s) == 36 && uuid.Validate(s) == nil }
