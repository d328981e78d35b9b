package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
)

// Under version 3 a row sent before is its id and the fields that
// changed: nothing else.
func TestARowSentBeforeIsSentAsItsChanges(t *testing.T) {
	r := NewRowWriter()
	r.SendChanges()
	w := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	w.HomeCtx = &contracts.HomeCtx{RestoreMarker: "k1"}
	whole := string(AppendWorkspace(nil, &w))
	require.Equal(t, whole, string(r.AppendWorkspace(nil, &w)), "the first time, whole")
	require.JSONEq(t, `{"id":"w1"}`, string(r.AppendWorkspace(nil, &w)))
	w.ObservedAt, w.HomeCtx = t0.Add(time.Second), nil
	require.JSONEq(t, `{"id":"w1","home_ctx":null,"observed_at":"2026-01-05T00:00:01Z"}`, string(r.AppendWorkspace(nil, &w)))
	require.Equal(t, 2, r.TakeChanged())
	require.Zero(t, r.TakeChanged())

	// A listing that was not sent is forgotten: the next is relative to
	// what the reader holds.
	r.Tentative()
	w.Name = "renamed"
	require.JSONEq(t, `{"id":"w1","name":"renamed"}`, string(r.AppendWorkspace(nil, &w)))
	r.Settle(false)
	w.OpID = "op"
	require.JSONEq(t, `{"id":"w1","name":"renamed","op_id":"op"}`, string(r.AppendWorkspace(nil, &w)))
}

// Whatever the rows do between listings, some of which are never sent,
// the reader of version 3 gets the rows the writer was given, by its
// own parser or, for rows in another layout, by encoding/json.
func TestRowChangesReadBackAsTheRows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		wr, rd := NewRowWriter(), NewRowReader()
		wr.SendChanges()
		rd.TakeChanges()
		rows := drawFleet(t)
		for range rapid.IntRange(1, 6).Draw(t, "listings") {
			changeSome(t, rows)
			// A listing is some of the rows (one, or all of them).
			listed := rows
			if rapid.Bool().Draw(t, "one") {
				listed = rows[rapid.IntRange(0, len(rows)-1).Draw(t, "which"):][:1]
			}
			sent := !rapid.Bool().Draw(t, "lost")
			wr.Tentative()
			text := wr.AppendWorkspaces(nil, listed)
			wr.Settle(sent)
			if !sent {
				continue
			}
			want, ok := ParseWorkspaces(AppendWorkspaces(nil, listed))
			require.True(t, ok)
			var got []Workspace
			if rapid.Bool().Draw(t, "indented") {
				var b bytes.Buffer
				require.NoError(t, json.Indent(&b, text, "", " "))
				_, ok := rd.ParseWorkspaces(b.Bytes())
				require.False(t, ok, "the parser reads only the harness's layout")
				require.NoError(t, rd.ReadJSON(b.Bytes(), &got))
			} else {
				got, ok = rd.ParseWorkspaces(text)
				require.True(t, ok, "%s", text)
			}
			require.Equal(t, want, got)
			// The caller's rows are its own, objects too.
			for i := range got {
				if got[i].ErrorInfo != nil {
					got[i].ErrorInfo.Message = "mine"
					if got[i].ErrorInfo.Context != nil {
						got[i].ErrorInfo.Context["mine"] = true
					}
				}
				if got[i].HomeCtx != nil {
					got[i].HomeCtx.RestoreMarker = "mine"
				}
			}
		}
	})
}

// A row the reader does not hold must come whole.
func TestChangesOfARowNotHeldAreAnError(t *testing.T) {
	rd := NewRowReader()
	rd.TakeChanges()
	var rows []Workspace
	require.ErrorContains(t, rd.ReadJSON([]byte(`[{"id":"x","name":"n"}]`), &rows), "row x: no owner_user_id, and no last version to take it from")
}

// Changing a row's objects in place, even an empty context, does not
// reach the row the reader holds.
func TestObjectsChangedInPlaceStayTheCallers(t *testing.T) {
	wr, rd := NewRowWriter(), NewRowReader()
	wr.SendChanges()
	rd.TakeChanges()
	w := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	w.HomeCtx = &contracts.HomeCtx{RestoreMarker: "k1"}
	w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Context: map[string]any{}}
	for i := range 3 {
		got, ok := rd.ParseWorkspaces(wr.AppendWorkspaces(nil, []contracts.Workspace{w}))
		require.True(t, ok)
		require.Equal(t, "k1", got[0].HomeCtx.RestoreMarker, "listing %d", i)
		require.Empty(t, got[0].ErrorInfo.Context, "listing %d", i)
		got[0].HomeCtx.RestoreMarker = "mine"
		got[0].ErrorInfo.Context["mine"] = true
	}
}

// A listing the parser gives up on half way (its first row read as
// changes, the second in another layout) is read again by encoding/json:
// the first row's changes are laid over the row twice, harmlessly.
func TestAListingGivenUpHalfWayIsReadAgain(t *testing.T) {
	wr, rd := NewRowWriter(), NewRowReader()
	wr.SendChanges()
	rd.TakeChanges()
	rows := []contracts.Workspace{contracts.NewWorkspace("a", "u1", "dev", "img", t0), contracts.NewWorkspace("b", "u1", "dev", "img", t0)}
	_, ok := rd.ParseWorkspaces(wr.AppendWorkspaces(nil, rows))
	require.True(t, ok)
	rows[0].ObservedAt, rows[1].Name = t0.Add(time.Second), "renamed"
	require.JSONEq(t, `[{"id":"a","observed_at":"2026-01-05T00:00:01Z"},{"id":"b","name":"renamed"}]`,
		string(wr.AppendWorkspaces(nil, rows)))
	odd := []byte(`[{"id":"a","observed_at":"2026-01-05T00:00:01Z"},{"id":"b","name": "renamed"}]`)
	_, ok = rd.ParseWorkspaces(odd)
	require.False(t, ok, "a space after a colon is not the harness's layout")
	var got []Workspace
	require.NoError(t, rd.ReadJSON(odd, &got))
	want, ok := ParseWorkspaces(AppendWorkspaces(nil, rows))
	require.True(t, ok)
	require.Equal(t, want, got)
}

// Rows sent during the hello exchange, before the session's version is
// known, are whole and held; from ready on they come as changes.
func TestRowsOfTheHelloExchangeAreHeld(t *testing.T) {
	wr, rd := NewRowWriter(), NewRowReader()
	rd.TakeChanges()
	w := contracts.NewWorkspace("a", "u1", "dev", "img", t0)
	wr.Tentative() // a listing that failed after its row: forgotten
	wr.AppendWorkspaces(nil, []contracts.Workspace{w})
	wr.Settle(false)
	_, ok := rd.ParseWorkspaces(wr.AppendWorkspaces(nil, []contracts.Workspace{w}))
	require.True(t, ok)
	wr.SendChanges()
	w.Name = "renamed"
	text := wr.AppendWorkspaces(nil, []contracts.Workspace{w})
	require.JSONEq(t, `[{"id":"a","name":"renamed"}]`, string(text))
	got, ok := rd.ParseWorkspaces(text)
	require.True(t, ok)
	want, _ := ParseWorkspaces(AppendWorkspaces(nil, []contracts.Workspace{w}))
	require.Equal(t, want, got)
}
