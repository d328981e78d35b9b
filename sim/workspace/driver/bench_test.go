package driver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
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
	b.Run("in-process", func(b *testing.B) { benchReference(b, fleet, func(testing.TB) *System { return nil }) })
	b.Run("protocol", func(b *testing.B) { benchReference(b, fleet, func(t testing.TB) *System { return refChild(t, "") }) })
}

// fleet is a run of ordinary size: 50 workspaces, 6 hours of the default
// fault mix.
func fleet(seed uint64, system ports.System) wssim.Config {
	return wssim.Config{Seed: seed, Workspaces: 50, Duration: 6 * time.Hour, Faults: wssim.DefaultFaults(), System: system}
}

// tenSeeds is the run of the protocol's speed figure (docs/driver-protocol.md,
// "Speed"): 10 workspaces, 6 hours of the default fault mix, then the
// default quiet phase.
func tenSeeds(seed uint64, system ports.System) wssim.Config {
	return wssim.Config{Seed: seed, Workspaces: 10, Duration: 6 * time.Hour, Quiet: wssim.DefaultQuiet,
		Faults: wssim.DefaultFaults(), System: system}
}

// BenchmarkTwentySeeds is the protocol's speed figure: the seeds 1 to 20 of
// tenSeeds, each run once in process and once through the protocol, with
// the reference as a child of versions 3, 2 and 1. It reports, per
// op of the 20 seeds, the wall and CPU seconds (harness and children
// together) through the protocol, the in-process CPU seconds of the same
// seeds, their ratio (x-in-process, per CPU second), and the protocol's
// messages per simulated workspace-hour. Run it with -benchtime 1x:
//
//	go test -run '^$' -bench TwentySeeds -benchtime 1x ./sim/workspace/driver/
func BenchmarkTwentySeeds(b *testing.B) {
	for _, protocol := range []int{3, 2, 1} {
		b.Run(fmt.Sprintf("v%d", protocol), func(b *testing.B) {
			drivertest.BenchSeeds(b, drivertest.Bench{Seeds: 20, Config: tenSeeds,
				Reference: func() ports.System { return wsref.NewSystem() },
				Child:     func(t testing.TB) drivertest.Child { return refChildOf(t, "", protocol) }, Judged: Judged})
		})
	}
}

// benchReference runs seeds 1, 2, … of config, in process (system gives
// nil) or through the System it gives, and reports simulated seconds per
// wall second and per CPU second (the harness's and its children's
// together: on a shared machine wall time also measures the neighbours),
// and the protocol's messages per run.
func benchReference(b *testing.B, config func(uint64, ports.System) wssim.Config, system func(testing.TB) *System) {
	var simulated time.Duration
	var cpu time.Duration
	messages := 0
	seed := uint64(0)
	if sys := system(b); sys != nil {
		sys.Close() // the child is built before the clock starts
	}
	for b.Loop() {
		seed++
		cfg := config(seed, wsref.NewSystem())
		sys := system(b)
		if sys != nil {
			cfg = Judged(config(seed, sys))
		}
		before := drivertest.CPUTime()
		r, err := wssim.Run(context.Background(), cfg)
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
		cpu += drivertest.CPUTime() - before
		simulated += r.SimDuration
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/s")
	b.ReportMetric(simulated.Seconds()/cpu.Seconds(), "sim-s/cpu-s")
	if messages > 0 {
		b.ReportMetric(float64(messages)/float64(b.N), "messages/op")
	}
}

// waitExited waits until every child of g has exited and been reaped, so
// that its CPU time is counted.
func waitExited(g *registry) {
	for _, p := range g.live() {
		<-p.exited
	}
}

// BenchmarkProtocolFloor is the least overhead the protocol can have on
// this machine, whoever implements either side: the reference's runs in
// process (their CPU time), plus, for every round trip the same run
// makes through the protocol, the round trip of a bare line between two
// processes that do nothing else (the echo child: no JSON, no harness,
// no coordinator). The conversation alternates strictly — a port call's
// answer must come back before the child can make the next call — so no
// implementation of version 1 can run faster than that sum. It reports
// floor-x, the sum over the in-process time, beside the round trips per
// run and the bare round trip; and spinning-floor-x, the same with the
// round trip of two processes that never sleep (each needs a core of its
// own, which a 2-core machine running anything else does not have); and
// the run itself: x-in-process, its CPU seconds (harness and child) over
// the in-process ones, and x-floor, that over floor-x. For information
// only, since the bare line moves none of the run's bytes (a fleet run
// lists 46 MB of rows): bytes/op, the run's bytes, ns/echoed-KiB, what
// moving a KiB through both pipes adds to a round trip (a 16 KiB line's
// less a bare one's), byte-floor-x, the floor with the run's bytes moved
// too, and x-byte-floor, the run over that. Run it with -benchtime 1x.
//
//	go test -run '^$' -bench ProtocolFloor -benchtime 1x ./sim/workspace/driver/
func BenchmarkProtocolFloor(b *testing.B) {
	for _, c := range []struct {
		name   string
		config func(uint64, ports.System) wssim.Config
	}{{"same-seed", sameSeed}, {"ten", tenSeeds}, {"fleet", fleet}} {
		b.Run(c.name, func(b *testing.B) {
			var inProcess, through time.Duration
			trips, seed := 0, uint64(0)
			var moved int64
			for b.Loop() {
				seed++
				before := drivertest.CPUTime()
				r, err := wssim.Run(context.Background(), c.config(seed, wsref.NewSystem()))
				if err != nil || len(r.Failures) > 0 {
					b.Fatal(err, r.Failures)
				}
				inProcess += drivertest.CPUTime() - before
				sys := refChild(b, "")
				before = drivertest.CPUTime()
				r, err = wssim.Run(context.Background(), Judged(c.config(seed, sys)))
				if err != nil || len(r.Failures) > 0 {
					b.Fatal(err, r.Failures)
				}
				// Every message but a child's hello answers one the other
				// side sent: half of them are round trips.
				trips += sys.Messages() / 2
				moved += sys.current().transcript.Bytes()
				sys.Close()
				waitExited(sys.reg)
				through += drivertest.CPUTime() - before
			}
			floor := func(rtt time.Duration) float64 {
				return (inProcess + time.Duration(trips)*rtt).Seconds() / inProcess.Seconds()
			}
			blocking, spinning := echoRoundTrip(b, false, echoLine), echoRoundTrip(b, true, echoLine)
			// What the bare line leaves out: the run's bytes. A round
			// trip of a long line, less the bare one, is what moving
			// its bytes through both pipes costs (no encoding yet).
			perByte := float64((echoRoundTrip(b, false, longEchoLine) - blocking).Nanoseconds()) / (longEchoLine - echoLine)
			byteFloor := (inProcess.Seconds() + float64(trips)*blocking.Seconds() + float64(moved)*perByte/1e9) / inProcess.Seconds()
			b.ReportMetric(float64(trips)/float64(b.N), "round-trips/op")
			b.ReportMetric(float64(inProcess.Microseconds())/float64(b.N), "in-process-cpu-µs/op")
			b.ReportMetric(float64(blocking.Nanoseconds()), "ns/bare-round-trip")
			b.ReportMetric(floor(blocking), "floor-x")
			b.ReportMetric(float64(spinning.Nanoseconds()), "ns/spinning-round-trip")
			b.ReportMetric(floor(spinning), "spinning-floor-x")
			// The run itself, per CPU second, against its floor.
			b.ReportMetric(through.Seconds()/inProcess.Seconds(), "x-in-process")
			b.ReportMetric(through.Seconds()/inProcess.Seconds()/floor(blocking), "x-floor")
			// Beside it, for information: the floor with the run's bytes
			// moved too (each pipe's copy, no encoding), and the run over
			// that. x-floor stays the figure.
			b.ReportMetric(float64(moved)/float64(b.N), "bytes/op")
			b.ReportMetric(perByte*1024, "ns/echoed-KiB")
			b.ReportMetric(byteFloor, "byte-floor-x")
			b.ReportMetric(through.Seconds()/inProcess.Seconds()/byteFloor, "x-byte-floor")
		})
	}
}

// Line lengths of echoRoundTrip: the bare line of the floor, and the long
// line that prices a run's bytes (about a store.list answer of a fleet).
const (
	echoLine     = 100
	longEchoLine = 16 << 10
)

// echoRoundTrip is the fastest mean round trip of a line of size bytes
// to an echo child and back, over five batches of 4,000 after a warm-up:
// the most favourable figure the machine gives, so the floor it makes is
// never overstated. With spin, neither side ever sleeps: both read
// without blocking, in a loop.
func echoRoundTrip(b *testing.B, spin bool, size int) time.Duration {
	b.Helper()
	child := "echo"
	if spin {
		child = "echo-spin"
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+child)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	line := []byte(strings.Repeat("x", size-1) + "\n")
	var read func() error
	if spin {
		fd := int(stdout.(*os.File).Fd())
		if err := syscall.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, len(line))
		read = func() error {
			for got := 0; got < len(line); {
				n, err := syscall.Read(fd, buf[got:])
				switch {
				case err == syscall.EAGAIN:
					continue
				case err != nil:
					return err
				case n == 0:
					return io.ErrUnexpectedEOF
				}
				got += n
			}
			return nil
		}
	} else {
		in := bufio.NewReaderSize(stdout, 2*size)
		read = func() error { _, err := in.ReadSlice('\n'); return err }
	}
	trip := func() {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := read(); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000 {
		trip()
	}
	best := time.Duration(math.MaxInt64)
	for range 5 {
		start := time.Now()
		for range 4000 {
			trip()
		}
		best = min(best, time.Since(start)/4000)
	}
	return best
}
