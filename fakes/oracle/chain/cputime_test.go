//go:build unix

package chain

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: a benchmark on
// a machine shared with other work reports it beside the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
