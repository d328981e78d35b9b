package oraclesim

import (
	"context"
	"testing"
	"time"
)

// BenchmarkOracle100x24h is the oracle world's figure: 100 requests over
// 24 simulated hours (a two-minute start, then a day of quiet phase with
// healthy peers and sources, then the graceful stop), the reference
// daemon judged as the records come, nothing kept. It reports simulated
// seconds per wall second (sim-x; the target is 10,000) and records per
// simulated second.
//
//	go test -run '^$' -bench Oracle100x24h -benchtime 1x -cpu 1 ./sim/oraclesim/
func BenchmarkOracle100x24h(b *testing.B) {
	o := Options{Seed: 1, Requests: 100, FaultPhase: 2 * time.Minute, QuietPhase: 24 * time.Hour, Faults: -1, Ops: -1,
		PoolSize: 16, Discard: true}
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
	b.ReportMetric(float64(records)/sim.Seconds(), "records/sim-s")
}
