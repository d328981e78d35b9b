package workspace

import (
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// BenchmarkSim1000x24h is the simulator's speed target: 1,000 workspaces ×
// 24 simulated hours of the ordinary workload against the reference
// system, ≥ 50,000× real time on one core and ≤ 1 GB allocated per run.
// It reports simulated seconds per wall second (sim-s/s) and per CPU
// second of the process (sim-s/cpu-s: on a shared machine wall time also
// counts other programs' turns), the cost per workspace-hour and, with
// -benchmem, allocations.
func BenchmarkSim1000x24h(b *testing.B) {
	benchmarkSim(b, 1000, 24*time.Hour)
}

// BenchmarkSimScale is the cost of the simulated fleet's size: 24
// simulated hours of the ordinary workload for 100, 1,000 and 10,000
// workspaces, reported per workspace-hour (µs/ws-h wall, cpu-µs/ws-h) and
// per recorded event (cpu-ns/event) next to the speed. A larger fleet
// always has an operation in progress, so its HealthMonitor passes every
// 2 s (SPEC 3) where a small one often waits 5 or 30 s: the cost per
// workspace-hour grows with the passes, the cost per event should not. 10,000 workspaces × 24 h is the scale target: under a minute on
// one core. Run it alone: go test -run '^$' -bench SimScale -benchtime 1x
// -cpu 1 ./sim/
func BenchmarkSimScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchmarkSim(b, n, 24*time.Hour) })
	}
}

// BenchmarkSim50x24h is one seed of the ordinary workload, no faults.
func BenchmarkSim50x24h(b *testing.B) {
	benchmarkSim(b, 50, 24*time.Hour)
}

// BenchmarkJudged50x24h is one run of the CLI's default seed: the default
// fault mix for 24 h, the quiet phase, then every checker.
func BenchmarkJudged50x24h(b *testing.B) {
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		seed++
		r, err := Run(context.Background(), Config{Seed: seed, Workspaces: 50, Duration: 24 * time.Hour, Quiet: DefaultQuiet,
			Faults: DefaultFaults(), System: wsref.NewSystem()})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Failures) > 0 {
			b.Fatalf("seed %d: %v", seed, r.Failures)
		}
	}
}

func benchmarkSim(b *testing.B, workspaces int, d time.Duration) {
	// Measure what the CLI runs: it trades memory for fewer collections
	// (GOGC=400) unless GOGC is set.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	b.ReportAllocs()
	var simulated time.Duration
	var events int
	seed := uint64(0)
	cpu0 := processCPU()
	for b.Loop() {
		seed++
		r, err := Run(context.Background(), Config{Seed: seed, Workspaces: workspaces, Duration: d, System: wsref.NewSystem()})
		if err != nil {
			b.Fatal(err)
		}
		if !r.OK() {
			b.Fatalf("seed %d: %v", seed, r.Failures)
		}
		simulated += r.SimDuration
		events += r.Events
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
	wsHours := float64(workspaces) * simulated.Hours()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/wsHours, "µs/ws-h")
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(simulated.Seconds()/cpu.Seconds(), "sim-s/cpu-s")
		b.ReportMetric(cpu.Seconds()*1e6/wsHours, "cpu-µs/ws-h")
		// Per recorded event (most are one row observed by one
		// HealthMonitor pass): the unit of work, whose cost should not
		// grow with the fleet even where passes per hour do.
		b.ReportMetric(cpu.Seconds()*1e9/float64(events), "cpu-ns/event")
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}
