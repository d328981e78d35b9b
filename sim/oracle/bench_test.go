//go:build unix

package oracle

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkOracle100x24h is the oracle world's figure: 100 requests over
// 24 simulated hours (a two-minute start, then a day of quiet phase with
// healthy peers and sources, then the graceful stop), the reference
// daemon judged as the records come, nothing kept. It reports simulated
// seconds per wall second (sim-x; the target is 10,000), per CPU second of
// the process (sim-x/cpu, the fairer figure on a shared machine) and
// records per simulated second. BenchmarkOracle100x1h is the same hour by
// hour, for a quick look.
//
//	go test -run '^$' -bench Oracle100x24h -benchtime 1x -cpu 1 ./sim/oraclesim/
func BenchmarkOracle100x24h(b *testing.B) { benchDay(b, 24*time.Hour) }

func BenchmarkOracle100x1h(b *testing.B) { benchDay(b, time.Hour) }

func benchDay(b *testing.B, quiet time.Duration) {
	// Measure what the CLI runs (converge oracle sim): it trades memory for
	// fewer collections (TuneGC) unless GOGC or GOMEMLIMIT is set.
	defer TuneGC()()
	o := Options{Seed: 1, Requests: 100, FaultPhase: 2 * time.Minute, QuietPhase: quiet, Faults: -1, Ops: -1,
		PoolSize: 16, Discard: true}
	cpu0 := cpuTime(b)
	var sim time.Duration
	var records int64
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.Failed() {
			b.Fatalf("the reference fails: %v", res.Report.Violations[0])
		}
		sim += res.SimTime
		records += res.Records
	}
	b.ReportMetric(sim.Seconds()/b.Elapsed().Seconds(), "sim-x")
	b.ReportMetric(sim.Seconds()/(cpuTime(b)-cpu0).Seconds(), "sim-x/cpu")
	b.ReportMetric(float64(records)/sim.Seconds(), "records/sim-s")
}

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
