package pythoncoordinator

import (
	"context"
	"testing"
	"time"

	wssim "github.com/wsconverge/converge/sim/workspace"
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
