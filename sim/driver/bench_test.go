package driver

import (
	"context"
	"testing"
	"time"

	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/sim"
)

// BenchmarkPortCall is the protocol's cost per port call: a round trip
// harness → Go child → harness (ids.new_id, the cheapest call), wall time
// per call.
func BenchmarkPortCall(b *testing.B) {
	sys := fakeSystem(b, "bench-calls", DefaultTimeout)
	defer sys.Close()
	w := newWorld()
	if _, err := sys.NewAPI(w.deps("api")); err != nil {
		b.Fatal(err)
	}
	c, err := sys.NewCoordinator(w.deps("coord-1"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	steps := 0
	for b.Loop() {
		if _, err := c.Step(context.Background()); err != nil {
			b.Fatal(err)
		}
		steps++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps*benchCalls), "ns/call")
}

// BenchmarkReferenceInProcess and BenchmarkReferenceThroughProtocol run
// the same seeds (the hash-equality proof's runs: 3 workspaces, 15
// minutes of the default fault mix at 24 times its rate); their sim-s/s
// ratio is the protocol's overhead on the reference.
func BenchmarkReferenceInProcess(b *testing.B) {
	benchReference(b, func(testing.TB) *System { return nil })
}

func BenchmarkReferenceThroughProtocol(b *testing.B) {
	benchReference(b, func(t testing.TB) *System { return refChild(t, "") })
}

func benchReference(b *testing.B, system func(testing.TB) *System) {
	var simulated time.Duration
	seed := uint64(0)
	for b.Loop() {
		seed++
		cfg := sameSeed(seed, refimpl.NewSystem())
		sys := system(b)
		if sys != nil {
			cfg = Judged(sameSeed(seed, sys))
		}
		r, err := sim.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Failures) > 0 {
			b.Fatal(r.Failures)
		}
		if sys != nil {
			sys.Close()
		}
		simulated += r.SimDuration
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
}
