package driver

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
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
	benchReference(b, sameSeed, func(testing.TB) *System { return nil })
}

func BenchmarkReferenceThroughProtocol(b *testing.B) {
	benchReference(b, sameSeed, func(t testing.TB) *System { return refChild(t, "") })
}

// BenchmarkFleet is the overhead on a run of ordinary size: 50 workspaces,
// 6 hours of the default fault mix, the reference in process and through
// the protocol, on the same seeds. Run it with -benchtime 1x: a run
// through the protocol takes seconds.
func BenchmarkFleet(b *testing.B) {
	fleet := func(seed uint64, system ports.System) sim.Config {
		return sim.Config{Seed: seed, Workspaces: 50, Duration: 6 * time.Hour, Faults: sim.DefaultFaults(), System: system}
	}
	b.Run("in-process", func(b *testing.B) { benchReference(b, fleet, func(testing.TB) *System { return nil }) })
	b.Run("protocol", func(b *testing.B) { benchReference(b, fleet, func(t testing.TB) *System { return refChild(t, "") }) })
}

// benchReference runs seeds 1, 2, … of config, in process (system gives
// nil) or through the System it gives, and reports simulated seconds per
// wall second and per CPU second (the harness's and its children's
// together: on a shared machine wall time also measures the neighbours),
// and the protocol's messages per run.
func benchReference(b *testing.B, config func(uint64, ports.System) sim.Config, system func(testing.TB) *System) {
	var simulated time.Duration
	var cpu time.Duration
	messages := 0
	seed := uint64(0)
	if sys := system(b); sys != nil {
		sys.Close() // the child is built before the clock starts
	}
	for b.Loop() {
		seed++
		cfg := config(seed, refimpl.NewSystem())
		sys := system(b)
		if sys != nil {
			cfg = Judged(config(seed, sys))
		}
		before := cpuTime()
		r, err := sim.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Failures) > 0 {
			b.Fatal(r.Failures)
		}
		if sys != nil {
			messages += sys.Messages()
			sys.Close()
			waitExited(sys.reg)
		}
		cpu += cpuTime() - before
		simulated += r.SimDuration
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
	b.ReportMetric(simulated.Seconds()/cpu.Seconds(), "sim-s/cpu-s")
	if messages > 0 {
		b.ReportMetric(float64(messages)/float64(b.N), "messages/op")
	}
}

// cpuTime is the CPU time of this process and of its children reaped so
// far.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	ns := func(r *syscall.Rusage) int64 {
		return syscall.TimevalToNsec(r.Utime) + syscall.TimevalToNsec(r.Stime)
	}
	return time.Duration(ns(&self) + ns(&children))
}

// waitExited waits until every child of g has exited and been reaped, so
// that its CPU time is counted.
func waitExited(g *registry) {
	for _, p := range g.live() {
		<-p.exited
	}
}
