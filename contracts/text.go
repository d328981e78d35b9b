package contracts

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidInput: a value the workspaces table cannot hold (a NUL
// character, invalid UTF-8, a string longer than its column). Every store
// rejects such a write with this error and writes nothing, so a fake and a
// real database never disagree about it (SPEC 4.3: "text fields reject
// what the store cannot hold").
var ErrInvalidInput = errors.New("invalid input")

// Column lengths in characters (SPEC 1.1's varchar columns). Text columns
// not listed here are unbounded.
var columnMaxChars = map[Column]int{
	ColName:         255,
	ColImageRef:     512,
	ColHomeStoreKey: 512,
	ColArchiveKey:   512,
}

// MaxChars is the length limit of column c in characters, or 0 when the
// column is unbounded text.
func MaxChars(c Column) int { return columnMaxChars[c] }

// CheckText reports why v cannot be stored in text column c: a NUL
// character (PostgreSQL's text types cannot hold one), invalid UTF-8, or
// more characters than the column holds. The error wraps ErrInvalidInput
// and never repeats the value.
func CheckText(c Column, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%w: %s contains a NUL character", ErrInvalidInput, c)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidInput, c)
	}
	if max := MaxChars(c); max > 0 && len(v) > max && utf8.RuneCountInString(v) > max {
		return fmt.Errorf("%w: %s is longer than %d characters", ErrInvalidInput, c, max)
	}
	return nil
}

// SanitizeText makes v storable in an unbounded text column: NUL
// characters are dropped and invalid UTF-8 becomes U+FFFD. For text the
// control plane records from elsewhere (a provider's error message), never
// for user input, which is rejected instead.
func SanitizeText(v string) string {
	if strings.IndexByte(v, 0) >= 0 {
		v = strings.ReplaceAll(v, "\x00", "")
	}
	return strings.ToValidUTF8(v, "\uFFFD")
}

// checkEnums reports the first enum value a store cannot hold (the
// PostgreSQL enum types of SPEC 1.2); ok marks the values that are unset.
func checkEnums(vals ...enumValue) error {
	for _, f := range vals {
		if !f.ok {
			return fmt.Errorf("%w: %s is not one of its enum's values", ErrInvalidInput, f.c)
		}
	}
	return nil
}

type enumValue = struct {
	c  Column
	v  string
	ok bool
}

func validPrevious(s ObservedStatus) bool { return s == "" || s.Valid() }

// CheckRow reports the first value of w a store cannot hold (ErrInvalidInput).
func CheckRow(w *Workspace) error {
	if w.ID == "" || w.OwnerUserID == "" {
		return fmt.Errorf("%w: id and owner_user_id are required", ErrInvalidInput)
	}
	err := checkEnums(
		enumValue{ColInstanceBackend, string(w.InstanceBackend), w.InstanceBackend == InstanceLocalDocker || w.InstanceBackend == InstanceK8s},
		enumValue{ColStorageBackend, string(w.StorageBackend), w.StorageBackend == StorageDockerVolume || w.StorageBackend == StorageMinio},
		enumValue{ColObservedStatus, string(w.ObservedStatus), w.ObservedStatus.Valid()},
		enumValue{ColHealthStatus, string(w.HealthStatus), w.HealthStatus.Valid()},
		enumValue{ColOperation, string(w.Operation), w.Operation.Valid()},
		enumValue{ColPreviousStatus, string(w.PreviousStatus), validPrevious(w.PreviousStatus)},
		enumValue{ColDesiredState, string(w.DesiredState), w.DesiredState.Valid()},
	)
	if err != nil {
		return err
	}
	for _, f := range [...]struct {
		c Column
		v string
	}{
		{ColID, w.ID}, {ColOwnerUserID, w.OwnerUserID}, {ColName, w.Name}, {ColDescription, w.Description},
		{ColMemo, w.Memo}, {ColImageRef, w.ImageRef}, {ColHomeStoreKey, w.HomeStoreKey}, {ColOpID, w.OpID},
		{ColArchiveKey, w.ArchiveKey}, {ColErrorMessage, w.ErrorMessage},
	} {
		if err := CheckText(f.c, f.v); err != nil {
			return err
		}
	}
	if err := checkHomeCtx(w.HomeCtx); err != nil {
		return err
	}
	return checkErrorInfo(w.ErrorInfo)
}

// CheckPatch reports the first value p assigns that a store cannot hold
// (ErrInvalidInput).
func CheckPatch(p *Patch) error {
	err := checkEnums(
		enumValue{ColObservedStatus, string(p.ObservedStatus.V), !p.ObservedStatus.Set || p.ObservedStatus.V.Valid()},
		enumValue{ColHealthStatus, string(p.HealthStatus.V), !p.HealthStatus.Set || p.HealthStatus.V.Valid()},
		enumValue{ColOperation, string(p.Operation.V), !p.Operation.Set || p.Operation.V.Valid()},
		enumValue{ColPreviousStatus, string(p.PreviousStatus.V), !p.PreviousStatus.Set || validPrevious(p.PreviousStatus.V)},
		enumValue{ColDesiredState, string(p.DesiredState.V), !p.DesiredState.Set || p.DesiredState.V.Valid()},
	)
	if err != nil {
		return err
	}
	for _, f := range [...]struct {
		set bool
		c   Column
		v   string
	}{
		{p.Name.Set, ColName, p.Name.V}, {p.Description.Set, ColDescription, p.Description.V},
		{p.Memo.Set, ColMemo, p.Memo.V}, {p.OpID.Set, ColOpID, p.OpID.V},
		{p.ArchiveKey.Set, ColArchiveKey, p.ArchiveKey.V}, {p.ErrorMessage.Set, ColErrorMessage, p.ErrorMessage.V},
	} {
		if f.set {
			if err := CheckText(f.c, f.v); err != nil {
				return err
			}
		}
	}
	if p.HomeCtx.Set {
		if err := checkHomeCtx(p.HomeCtx.V); err != nil {
			return err
		}
	}
	if p.ErrorInfo.Set {
		return checkErrorInfo(p.ErrorInfo.V)
	}
	return nil
}

func checkHomeCtx(h *HomeCtx) error {
	if h == nil {
		return nil
	}
	return checkJSONText(ColHomeCtx, h.RestoreMarker)
}

// checkErrorInfo checks every string of an error_info (its message and
// the strings anywhere in its context): jsonb cannot hold a NUL character,
// and invalid UTF-8 would come back changed.
func checkErrorInfo(e *ErrorInfo) error {
	if e == nil {
		return nil
	}
	for _, s := range [...]string{string(e.Reason), e.Message, string(e.Operation)} {
		if err := checkJSONText(ColErrorInfo, s); err != nil {
			return err
		}
	}
	for k, v := range e.Context {
		if err := checkJSONText(ColErrorInfo, k); err != nil {
			return err
		}
		if err := checkJSONValue(v); err != nil {
			return err
		}
	}
	return nil
}

func checkJSONValue(v any) error {
	switch x := v.(type) {
	case string:
		return checkJSONText(ColErrorInfo, x)
	case map[string]any:
		for k, e := range x {
			if err := checkJSONText(ColErrorInfo, k); err != nil {
				return err
			}
			if err := checkJSONValue(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkJSONValue(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkJSONText(c Column, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s holds a NUL character", ErrInvalidInput, c)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s holds invalid UTF-8", ErrInvalidInput, c)
	}
	return nil
}
