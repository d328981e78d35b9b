package contracts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckText(t *testing.T) {
	cases := []struct {
		name string
		col  Column
		v    string
		ok   bool
	}{
		{"plain name", ColName, "dev box", true},
		{"empty text", ColDescription, "", true},
		{"NUL in a name", ColName, "a\x00b", false},
		{"NUL in unbounded text", ColMemo, "\x00", false},
		{"invalid UTF-8", ColImageRef, "img\xff", false},
		{"a lone continuation byte", ColDescription, "\x80", false},
		{"255 multi-byte characters fit varchar(255)", ColName, strings.Repeat("é", 255), true},
		{"256 characters do not", ColName, strings.Repeat("é", 256), false},
		{"512 four-byte characters fit image_ref", ColImageRef, strings.Repeat("😀", 512), true},
		{"513 do not", ColImageRef, strings.Repeat("a", 513), false},
		{"a megabyte of memo is fine", ColMemo, strings.Repeat("m", 1<<20), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckText(tc.col, tc.v)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidInput)
			require.Contains(t, err.Error(), string(tc.col))
			require.NotContains(t, err.Error(), tc.v, "the value is never echoed")
		})
	}
}

func TestSanitizeText(t *testing.T) {
	require.Equal(t, "ab\uFFFDc", SanitizeText("a\x00b\xffc"))
	require.NoError(t, CheckText(ColErrorMessage, SanitizeText("x\x00\x80y")))
	require.Equal(t, "plain", SanitizeText("plain"))
}

func TestCheckRowAndPatch(t *testing.T) {
	w := row()
	require.NoError(t, CheckRow(w))
	bad := *w
	bad.Memo = "m\x00"
	require.ErrorIs(t, CheckRow(&bad), ErrInvalidInput)
	bad = *w
	bad.ErrorInfo = &ErrorInfo{Reason: ReasonActionFailed, Message: "ok", Context: map[string]any{"nested": []any{map[string]any{"k": "v\x00"}}}}
	require.ErrorIs(t, CheckRow(&bad), ErrInvalidInput, "strings nested in error_info.context are checked")
	bad = *w
	bad.HomeCtx = &HomeCtx{RestoreMarker: "\xfe"}
	require.ErrorIs(t, CheckRow(&bad), ErrInvalidInput)

	require.NoError(t, CheckPatch(&Patch{Name: Some("ok"), Memo: Some("")}))
	require.ErrorIs(t, CheckPatch(&Patch{Description: Some("\xc3")}), ErrInvalidInput)
	require.ErrorIs(t, CheckPatch(&Patch{Name: Some(strings.Repeat("n", 256))}), ErrInvalidInput)
	require.ErrorIs(t, CheckPatch(&Patch{ErrorInfo: Some(&ErrorInfo{Message: "a\x00"})}), ErrInvalidInput)
	require.NoError(t, CheckPatch(&Patch{ErrorInfo: Some[*ErrorInfo](nil)}))
}

func TestCheckRowEnumsAndKeys(t *testing.T) {
	for name, mut := range map[string]func(*Workspace){
		"empty id":              func(w *Workspace) { w.ID = "" },
		"empty owner":           func(w *Workspace) { w.OwnerUserID = "" },
		"unknown observed":      func(w *Workspace) { w.ObservedStatus = "ERROR" },
		"unknown health":        func(w *Workspace) { w.HealthStatus = "" },
		"unknown operation":     func(w *Workspace) { w.Operation = "REBOOTING" },
		"unknown desired":       func(w *Workspace) { w.DesiredState = "DELETED" },
		"unknown previous":      func(w *Workspace) { w.PreviousStatus = "X" },
		"unknown instance kind": func(w *Workspace) { w.InstanceBackend = "vm" },
		"unknown storage kind":  func(w *Workspace) { w.StorageBackend = "" },
	} {
		w := row()
		mut(w)
		require.ErrorIs(t, CheckRow(w), ErrInvalidInput, name)
	}
	require.ErrorIs(t, CheckPatch(&Patch{Operation: Some(Operation("X"))}), ErrInvalidInput)
	require.ErrorIs(t, CheckPatch(&Patch{DesiredState: Some(DesiredState("ERROR"))}), ErrInvalidInput)
	require.NoError(t, CheckPatch(&Patch{PreviousStatus: Some(ObservedStatus(""))}), "previous_status may be cleared")
}
