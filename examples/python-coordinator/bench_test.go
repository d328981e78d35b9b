package pythoncoordinator

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
)

// BenchmarkPythonExample is the Python example's simulated-to-wall ratio
// on the runs its 200-seed test judges (3 workspaces, an hour of the
// default fault mix, the quiet phase).
func BenchmarkPythonExample(b *testing.B) {
	var simulated time.Duration
	var messages int
	seed := uint64(0)
	for b.Loop() {
		seed++
		sys := example(b)
		r, err := wssim.Run(context.Background(), run(seed, sys))
		if err != nil {
			b.Fatal(err)
		}
		if !r.OK() {
			b.Fatalf("seed %d: %v", seed, r.Failures)
		}
		simulated += r.SimDuration
		messages += sys.Messages()
		sys.Close()
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
	b.ReportMetric(float64(messages)/float64(b.N), "messages/op")
}

// tenSeeds is the run of the protocol's speed figure (docs/driver-protocol.md,
// "Speed"): 10 workspaces, 6 hours of the default fault mix, then the
// default quiet phase.
func tenSeeds(seed uint64, system ports.System) wssim.Config {
	return wssim.Config{Seed: seed, Workspaces: 10, Duration: 6 * time.Hour, Quiet: wssim.DefaultQuiet,
		Faults: wssim.DefaultFaults(), System: system}
}

// BenchmarkTwentySeeds is the protocol's speed figure for the Python
// example: the seeds 1 to 20 of tenSeeds, each run once with the
// reference in process and once with the example through the protocol.
// It reports, per op of the 20 seeds, the wall and CPU seconds (harness
// and children together) through the protocol, the in-process CPU
// seconds of the same seeds, their ratio (x-in-process, per CPU second)
// and the protocol's messages per simulated workspace-hour. Run it with
// -benchtime 1x:
//
//	go test -run '^$' -bench TwentySeeds -benchtime 1x ./examples/python-coordinator/
func BenchmarkTwentySeeds(b *testing.B) {
	example(b).Close() // Python is found and its bytecode cached before the clock starts
	var inCPU, cpu, childCPU, wall time.Duration
	var messages, quiet int
	var wsHours float64
	for b.Loop() {
		for seed := uint64(1); seed <= 20; seed++ {
			before := cpuTime()
			r, err := wssim.Run(context.Background(), tenSeeds(seed, wsref.NewSystem()))
			if err != nil || len(r.Failures) > 0 {
				b.Fatal(err, r.Failures)
			}
			inCPU += cpuTime() - before
			sys := example(b)
			cfg := driver.Judged(tenSeeds(seed, sys))
			before, beforeChildren, start := cpuTime(), childrenCPUTime(), time.Now()
			r, err = wssim.Run(context.Background(), cfg)
			if err != nil || len(r.Failures) > 0 {
				b.Fatal(err, r.Failures)
			}
			messages += sys.Messages()
			quiet += sys.QuietSteps()
			sys.Close() // and its children reaped: their CPU time is counted
			wall += time.Since(start)
			cpu += cpuTime() - before
			childCPU += childrenCPUTime() - beforeChildren
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
	b.ReportMetric(float64(quiet)/ops, "quiet-steps/op")
}

// childrenCPUTime is the CPU time of this process's children reaped so
// far.
func childrenCPUTime() time.Duration {
	var children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(syscall.TimevalToNsec(children.Utime) + syscall.TimevalToNsec(children.Stime))
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
