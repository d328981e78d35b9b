package drivertest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Child is a coordinator run through the driver protocol as the speed
// benchmarks see it (driver.System): the port system the simulator drives,
// and its counters.
type Child interface {
	ports.System
	// Messages is how many protocol messages the run sent, Bytes how
	// many bytes they held; QuietSteps how many steps the child asked
	// nothing in.
	Messages() int
	Bytes() int64
	QuietSteps() int
	// Close ends the child and reaps it, so its CPU time is counted.
	Close() error
}

// Bench is one speed figure's runs: seeds 1 to Seeds of Config, each run
// with Reference in process and with Child through the protocol (Judged
// wraps the configuration the way driver.Judged does). The reference is
// handed in because sim/ never imports it (docs/architecture.md).
type Bench struct {
	Seeds     int
	Config    func(seed uint64, system ports.System) wssim.Config
	Reference func() ports.System
	Child     func(testing.TB) Child
	Judged    func(wssim.Config) wssim.Config
}

// BenchSeeds is the protocol's speed figure (docs/driver-protocol.md,
// "Speed"): it runs bench's seeds and reports per op the wall
// and CPU seconds through the protocol (harness and children together),
// the children's CPU seconds, the in-process CPU seconds of the same seeds,
// their ratio (x-in-process, per CPU second), the messages and bytes per
// simulated workspace-hour and the quiet steps. Both the driver's and the Python
// example's BenchmarkTwentySeeds use it, so the two figures measure the
// same thing.
func BenchSeeds(b *testing.B, bench Bench) {
	b.Helper()
	if sys := bench.Child(b); sys != nil {
		_ = sys.Close() // the child is built (or its bytecode cached) before the clock starts
	}
	var inCPU, cpu, childCPU, wall time.Duration
	var messages, quiet int
	var moved int64
	var wsHours float64
	for b.Loop() {
		for seed := uint64(1); seed <= uint64(bench.Seeds); seed++ {
			before := CPUTime()
			r, err := wssim.Run(context.Background(), bench.Config(seed, bench.Reference()))
			if err != nil || len(r.Failures) > 0 {
				b.Fatal(err, r.Failures)
			}
			inCPU += CPUTime() - before
			sys := bench.Child(b)
			cfg := bench.Judged(bench.Config(seed, sys))
			before, beforeChildren, start := CPUTime(), ChildrenCPUTime(), time.Now()
			r, err = wssim.Run(context.Background(), cfg)
			if err != nil || len(r.Failures) > 0 {
				b.Fatal(err, r.Failures)
			}
			messages += sys.Messages()
			moved += sys.Bytes()
			quiet += sys.QuietSteps()
			_ = sys.Close() // and its children reaped: their CPU time is counted
			wall += time.Since(start)
			cpu += CPUTime() - before
			childCPU += ChildrenCPUTime() - beforeChildren
			wsHours += float64(cfg.Workspaces) * r.SimDuration.Hours()
		}
	}
	ops := float64(b.N)
	b.ReportMetric(wall.Seconds()/ops, "wall-s/op")
	b.ReportMetric(cpu.Seconds()/ops, "cpu-s/op")
	b.ReportMetric(childCPU.Seconds()/ops, "children-cpu-s/op")
	b.ReportMetric(inCPU.Seconds()/ops, "in-process-cpu-s/op")
	b.ReportMetric(cpu.Seconds()/inCPU.Seconds(), "x-in-process")
	b.ReportMetric(float64(messages)/wsHours, "messages/ws-hour")
	b.ReportMetric(float64(moved)/wsHours, "bytes/ws-hour")
	b.ReportMetric(float64(quiet)/ops, "quiet-steps/op")
}

// ChildrenCPUTime is the CPU time of this process's children reaped so
// far.
func ChildrenCPUTime() time.Duration {
	var children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(syscall.TimevalToNsec(children.Utime) + syscall.TimevalToNsec(children.Stime))
}

// CPUTime is the CPU time of this process and of its children reaped so
// far.
func CPUTime() time.Duration {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(syscall.TimevalToNsec(self.Utime)+syscall.TimevalToNsec(self.Stime)) + ChildrenCPUTime()
}
