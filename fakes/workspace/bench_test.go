package workspace

import (
	"strconv"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

func benchWorld(b *testing.B, n int) (*World, []string) {
	b.Helper()
	w := newWorld(b)
	ids := make([]string, n)
	g := NewIDs(1)
	for i := range ids {
		ids[i] = g.NewID()
	}
	insertRows(b, w, ids...)
	return w, ids
}

func BenchmarkStoreList1000(b *testing.B) {
	w, _ := benchWorld(b, 1000)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		rows, err := w.Store.List(ctx, contracts.FilterActive)
		if err != nil || len(rows) != 1000 {
			b.Fatal(err, len(rows))
		}
	}
}

func BenchmarkStoreUpdateMany1000(b *testing.B) {
	for _, kind := range []string{"observed_at", "status"} {
		b.Run(kind, func(b *testing.B) {
			w, ids := benchWorld(b, 1000)
			ctx := b.Context()
			hm := contracts.Writer{Component: contracts.CompHealthMonitor, Instance: "coord-1"}
			updates := make([]ports.RowUpdate, len(ids))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				w.Clock.Advance(2 * time.Second)
				now := w.Clock.Now()
				for j, id := range ids {
					p := contracts.Patch{ObservedAt: contracts.Some(now)}
					if kind == "status" {
						p.HealthStatus = contracts.Some([]contracts.HealthStatus{contracts.HealthOK, contracts.HealthError}[i%2])
					}
					updates[j] = ports.RowUpdate{ID: id, Patch: p}
				}
				if err := w.Store.UpdateMany(ctx, hm, updates); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(w.Rec.Len())/float64(i), "kept-events/op")
		})
	}
}

func BenchmarkArchiveRestore(b *testing.B) {
	w := newWorld(b)
	ctx := b.Context()
	if err := w.Storage.Provision(ctx, "a"); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		if err := w.Storage.WriteFile("a", "notes/f"+strconv.Itoa(i), []byte("some user data "+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key, err := w.Storage.Archive(ctx, "a", "op-"+strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Storage.Restore(ctx, "a", key); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
