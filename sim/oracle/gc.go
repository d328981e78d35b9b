package oracle

import (
	"os"
	"runtime/debug"
)

// Collector settings of an oracle run (TuneGC). A simulated day allocates
// about a hundred times its live heap (5 GB against some 56 MB for 100
// requests), nearly all of it garbage within a round: a larger heap
// between collections saves more CPU than it costs in page faults up to
// about nine times the live heap (GOGC 800: +2 to +5 % per CPU second
// against 400, peak RSS 290 → 500 MB for the benchmark's day), and the
// soft limit keeps a large world (thousands of requests) from growing
// nine-fold unbounded.
const (
	gcPercent   = 800
	memoryLimit = 4 << 30
)

// TuneGC sets the collector for oracle runs, as `converge oracle sim` and
// the benchmark run them: GOGC 800 and a soft memory limit of 4 GiB, each
// unless the environment sets it (GOGC, GOMEMLIMIT). It returns what
// restores the settings before it.
func TuneGC() (restore func()) {
	var undo []func()
	if os.Getenv("GOGC") == "" {
		was := debug.SetGCPercent(gcPercent)
		undo = append(undo, func() { debug.SetGCPercent(was) })
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		was := debug.SetMemoryLimit(memoryLimit)
		undo = append(undo, func() { debug.SetMemoryLimit(was) })
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}
