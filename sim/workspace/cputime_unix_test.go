//go:build unix

package workspace

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far (user + system,
// every thread): the benchmarks divide by it as well as by wall time, since
// on a shared machine wall time also counts other programs' turns.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
