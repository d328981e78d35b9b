package pythoncoordinator

import (
	"context"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
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
	drivertest.BenchSeeds(b, drivertest.Bench{Seeds: 20, Config: tenSeeds,
		Reference: func() ports.System { return wsref.NewSystem() },
		Child:     func(t testing.TB) drivertest.Child { return example(t) }, Judged: driver.Judged})
}
