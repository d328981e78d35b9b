package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
)

// A row sent again unchanged is copied; any change of any column, nested
// ones included, is written anew.
func TestTheRowWriterWritesWhatTheCodecWrites(t *testing.T) {
	r := NewRowWriter()
	w := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Context: map[string]any{"a": "b"}}
	w.HomeCtx = &contracts.HomeCtx{RestoreMarker: "k1"}
	check := func(w contracts.Workspace) {
		t.Helper()
		require.Equal(t, string(AppendWorkspaces(nil, []contracts.Workspace{w, w})),
			string(r.AppendWorkspaces(nil, []contracts.Workspace{w.Clone(), w.Clone()})))
	}
	check(w)
	require.Len(t, r.last, 1)
	for _, change := range []func(w *contracts.Workspace){
		func(w *contracts.Workspace) { w.ObservedAt = t0.Add(time.Second) },
		func(w *contracts.Workspace) { w.HomeCtx.RestoreMarker = "k2" },
		func(w *contracts.Workspace) { w.HomeCtx = nil },
		func(w *contracts.Workspace) { w.ErrorInfo.Context["a"] = "c" },
		func(w *contracts.Workspace) { w.ErrorInfo.Message = "m" },
		func(w *contracts.Workspace) { w.ErrorInfo = nil },
	} {
		change(&w)
		check(w)
	}
}

// Whatever changes between two lists, the RowWriter writes each as the
// codec does.
func TestRowWriterWritesAsAppendWorkspaces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := NewRowWriter()
		rows := drawFleet(t)
		for range rapid.IntRange(1, 5).Draw(t, "passes") {
			changeSome(t, rows)
			require.Equal(t, string(AppendWorkspaces(nil, rows)), string(r.AppendWorkspaces(nil, rows)))
		}
	})
}

// drawFleet draws three rows, of ids a, b and c.
func drawFleet(t *rapid.T) []contracts.Workspace {
	rows := make([]contracts.Workspace, 3)
	for i, id := range []string{"a", "b", "c"} {
		rows[i] = drawWorkspace(t)
		rows[i].ID = id
	}
	return rows
}

// changeSome changes some of rows as a pass over the fleet might: a
// health pass's times, many columns, or the error.
func changeSome(t *rapid.T, rows []contracts.Workspace) {
	for i := range rows {
		switch rapid.IntRange(0, 3).Draw(t, "change") {
		case 1:
			rows[i].ObservedAt, rows[i].UpdatedAt = drawTime(t, "observed_at"), drawTime(t, "updated")
		case 2:
			next := drawWorkspace(t)
			next.ID = rows[i].ID
			// Some columns change, the others stay.
			if rapid.Bool().Draw(t, "keep-some") {
				next.Name, next.ImageRef, next.CreatedAt = rows[i].Name, rows[i].ImageRef, rows[i].CreatedAt
			}
			rows[i] = next
		case 3:
			rows[i].ErrorInfo = drawErrorInfo(t)
		}
	}
}
