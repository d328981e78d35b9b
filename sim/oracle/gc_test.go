package oracle

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// gcPercentNow reads GOGC's current value without changing it.
func gcPercentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGCSetsAndRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))

	restore := TuneGC()
	require.Equal(t, gcPercent, gcPercentNow())
	require.Equal(t, int64(memoryLimit), debug.SetMemoryLimit(-1))
	restore()
	require.Equal(t, 150, gcPercentNow())
	require.Equal(t, int64(1<<40), debug.SetMemoryLimit(-1))

	// What the environment sets, decides.
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1TiB")
	restore = TuneGC()
	require.Equal(t, 150, gcPercentNow())
	require.Equal(t, int64(1<<40), debug.SetMemoryLimit(-1))
	restore()
}
