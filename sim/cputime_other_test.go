//go:build !unix

package sim

import "time"

// processCPU is unknown here: the CPU-time figures are left out.
func processCPU() time.Duration { return 0 }
