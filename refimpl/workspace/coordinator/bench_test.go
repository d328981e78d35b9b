package coordinator

import (
	"strconv"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// BenchmarkHealthPass is one HealthMonitor pass over 1,000 and 10,000
// settled RUNNING workspaces of the fake world (the listings, the scan, the
// batched write): the simulator's unit of work, which a large simulated
// fleet runs every 2 s.
func BenchmarkHealthPass(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchmarkHealthPass(b, n) })
	}
}

func benchmarkHealthPass(b *testing.B, n int) {
	ctx := b.Context()
	clock := wsfakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := wsfakes.NewWorld(clock, history.NewRecorder())
	ids := wsfakes.NewIDs(1)
	api := contracts.Writer{Component: contracts.CompAPI}
	for range n {
		id := ids.NewID()
		ws := contracts.NewWorkspace(id, "user-1", "ws", "img:1", clock.Now())
		ws.ObservedStatus = contracts.ObservedRunning
		if err := w.Store.Insert(ctx, api, ws); err != nil {
			b.Fatal(err)
		}
		if err := w.Storage.Provision(ctx, id); err != nil {
			b.Fatal(err)
		}
		if err := w.Instances.Start(ctx, id, "img:1"); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Bus.Incr(ctx, contracts.ConnKey(id)); err != nil { // its user works in it
			b.Fatal(err)
		}
	}
	c := New(w.Deps("coord-1"), Options{})
	if _, err := c.Step(ctx); err != nil || !c.IsLeader() {
		b.Fatal("not leading", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(2 * time.Second)
		if err := c.healthTick(ctx, clock.Now()); err != nil {
			b.Fatal(err)
		}
	}
	if c.fleet != (decide.FleetSummary{}) {
		b.Fatalf("the fleet is not settled: %+v", c.fleet)
	}
}
