//go:build !unix

package chain

import "time"

// cpuTime is not measured off unix; the benchmark then reports wall time
// only.
func cpuTime() time.Duration { return 0 }
