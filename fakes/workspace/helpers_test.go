package workspace

import (
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func newWorld(t testing.TB) *World {
	t.Helper()
	return NewWorld(NewClock(t0), history.NewRecorder())
}

// insertRows inserts workspaces with the given ids through the API writer.
func insertRows(t testing.TB, w *World, ids ...string) {
	t.Helper()
	for _, id := range ids {
		ws := contracts.NewWorkspace(id, "user-1", "ws "+id, "img:1", w.Clock.Now())
		if err := w.Store.Insert(t.Context(), apiWriter, ws); err != nil {
			t.Fatalf("insert %s: %v", id, err)
		}
	}
}

var (
	apiWriter = contracts.Writer{Component: contracts.CompAPI}
)

func reconciler(inst string, epoch int64) contracts.Writer {
	return contracts.Writer{Component: contracts.CompStateReconciler, Instance: inst, Epoch: epoch}
}

// eventsOf returns the recorded events of kind k.
func eventsOf(w *World, k history.Kind) []history.Event {
	var out []history.Event
	for _, e := range w.Rec.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// lastEvent is the most recent recorded event.
func lastEvent(t testing.TB, w *World) history.Event {
	t.Helper()
	ev := w.Rec.Events()
	if len(ev) == 0 {
		t.Fatal("no events recorded")
	}
	return ev[len(ev)-1]
}
