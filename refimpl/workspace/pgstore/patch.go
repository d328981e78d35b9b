package pgstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/wsconverge/converge/contracts"
)

// patchString is the value p assigns to a text column c.
func patchString(p *contracts.Patch, c contracts.Column) string {
	switch c {
	case contracts.ColName:
		return p.Name.V
	case contracts.ColDescription:
		return p.Description.V
	case contracts.ColMemo:
		return p.Memo.V
	case contracts.ColObservedStatus:
		return string(p.ObservedStatus.V)
	case contracts.ColHealthStatus:
		return string(p.HealthStatus.V)
	case contracts.ColOperation:
		return string(p.Operation.V)
	case contracts.ColOpID:
		return p.OpID.V
	case contracts.ColArchiveKey:
		return p.ArchiveKey.V
	case contracts.ColErrorMessage:
		return p.ErrorMessage.V
	case contracts.ColPreviousStatus:
		return string(p.PreviousStatus.V)
	case contracts.ColDesiredState:
		return string(p.DesiredState.V)
	}
	panic("pgstore: not a text column: " + string(c))
}

// patchInt is the value p assigns to an integer column c.
func patchInt(p *contracts.Patch, c contracts.Column) int {
	switch c {
	case contracts.ColErrorCount:
		return p.ErrorCount.V
	case contracts.ColStandbyTTLSeconds:
		return p.StandbyTTLSeconds.V
	case contracts.ColArchiveTTLSeconds:
		return p.ArchiveTTLSeconds.V
	}
	panic("pgstore: not an integer column: " + string(c))
}

// patchTime is the value p assigns to a timestamptz column c.
func patchTime(p *contracts.Patch, c contracts.Column) time.Time {
	switch c {
	case contracts.ColObservedAt:
		return p.ObservedAt.V
	case contracts.ColOpStartedAt:
		return p.OpStartedAt.V
	case contracts.ColDeletedAt:
		return p.DeletedAt.V
	case contracts.ColLastAccessAt:
		return p.LastAccessAt.V
	}
	panic("pgstore: not a time column: " + string(c))
}

// patchJSON is the JSON text p assigns to a jsonb column c (NULL for nil).
func patchJSON(p *contracts.Patch, c contracts.Column) (pgtype.Text, error) {
	var (
		v   any
		err error
	)
	switch c {
	case contracts.ColHomeCtx:
		v, err = jsonText(p.HomeCtx.V)
	case contracts.ColErrorInfo:
		v, err = jsonText(p.ErrorInfo.V)
	default:
		panic("pgstore: not a jsonb column: " + string(c))
	}
	if err != nil || v == nil {
		return pgtype.Text{}, err
	}
	return pgtype.Text{String: v.(string), Valid: true}, nil
}

// setPatchJSON assigns to column c of p the value raw, as PostgreSQL's
// to_jsonb renders it (null for NULL). ok is false for a column a Patch
// cannot assign (id, owner_user_id, created_at…).
func setPatchJSON(p *contracts.Patch, c contracts.Column, raw json.RawMessage) (ok bool, err error) {
	spec, ok := patchColumns[c]
	if !ok {
		return false, nil
	}
	switch spec.kind {
	case kindInt:
		var n *int
		if err := json.Unmarshal(raw, &n); err != nil {
			return true, fmt.Errorf("%s: %w", c, err)
		}
		v := 0
		if n != nil {
			v = *n
		}
		switch c {
		case contracts.ColErrorCount:
			p.ErrorCount = contracts.Some(v)
		case contracts.ColStandbyTTLSeconds:
			p.StandbyTTLSeconds = contracts.Some(v)
		case contracts.ColArchiveTTLSeconds:
			p.ArchiveTTLSeconds = contracts.Some(v)
		}
	case kindTime:
		t, err := jsonTime(raw)
		if err != nil {
			return true, fmt.Errorf("%s: %w", c, err)
		}
		switch c {
		case contracts.ColObservedAt:
			p.ObservedAt = contracts.Some(t)
		case contracts.ColOpStartedAt:
			p.OpStartedAt = contracts.Some(t)
		case contracts.ColDeletedAt:
			p.DeletedAt = contracts.Some(t)
		case contracts.ColLastAccessAt:
			p.LastAccessAt = contracts.Some(t)
		}
	case kindJSON:
		switch c {
		case contracts.ColHomeCtx:
			h, err := decodeHomeCtx(raw)
			if err != nil {
				return true, err
			}
			p.HomeCtx = contracts.Some(h)
		case contracts.ColErrorInfo:
			e, err := decodeErrorInfo(raw)
			if err != nil {
				return true, err
			}
			p.ErrorInfo = contracts.Some(e)
		}
	default:
		var s *string
		if err := json.Unmarshal(raw, &s); err != nil {
			return true, fmt.Errorf("%s: %w", c, err)
		}
		v := ""
		if s != nil {
			v = *s
		}
		setPatchString(p, c, v)
	}
	return true, nil
}

func setPatchString(p *contracts.Patch, c contracts.Column, v string) {
	switch c {
	case contracts.ColName:
		p.Name = contracts.Some(v)
	case contracts.ColDescription:
		p.Description = contracts.Some(v)
	case contracts.ColMemo:
		p.Memo = contracts.Some(v)
	case contracts.ColObservedStatus:
		p.ObservedStatus = contracts.Some(contracts.ObservedStatus(v))
	case contracts.ColHealthStatus:
		p.HealthStatus = contracts.Some(contracts.HealthStatus(v))
	case contracts.ColOperation:
		p.Operation = contracts.Some(contracts.Operation(v))
	case contracts.ColOpID:
		p.OpID = contracts.Some(v)
	case contracts.ColArchiveKey:
		p.ArchiveKey = contracts.Some(v)
	case contracts.ColErrorMessage:
		p.ErrorMessage = contracts.Some(v)
	case contracts.ColPreviousStatus:
		p.PreviousStatus = contracts.Some(contracts.ObservedStatus(v))
	case contracts.ColDesiredState:
		p.DesiredState = contracts.Some(contracts.DesiredState(v))
	}
}

// jsonTime parses a timestamptz as to_jsonb renders it (RFC 3339 with the
// session's offset), in UTC; null is the zero time.
func jsonTime(raw json.RawMessage) (time.Time, error) {
	var s *string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, err
	}
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
