package driver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// A row sent again unchanged is copied from the cache; any change of any
// column, nested ones included, is written anew.
func TestTheRowCacheWritesWhatTheCodecWrites(t *testing.T) {
	c := rowCache{}
	w := contracts.NewWorkspace("w1", "u1", "dev", "img", t0)
	w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Context: map[string]any{"a": "b"}}
	w.HomeCtx = &contracts.HomeCtx{RestoreMarker: "k1"}
	check := func(w contracts.Workspace) {
		t.Helper()
		require.Equal(t, string(wire.AppendWorkspaces(nil, []contracts.Workspace{w, w})),
			string(c.appendRows(nil, []contracts.Workspace{w.Clone(), w.Clone()})))
	}
	check(w)
	require.Len(t, c, 1)
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
