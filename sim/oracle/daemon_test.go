package oracle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheWorldRunsWhatItIsGiven: Options.System wins; without it a run
// judges the system registered as the reference, and without that it is
// an error that says how to register one (never a silent default).
func TestTheWorldRunsWhatItIsGiven(t *testing.T) {
	ref, ok := Lookup(ReferenceName)
	require.True(t, ok, "the tests register the reference (TestMain)")
	_, ok = Lookup("no-such-system")
	require.False(t, ok)

	o := Options{Seed: 3, Lean: true}
	res, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, ReferenceName, res.System)

	registry.Lock()
	saved := registry.systems
	registry.systems = nil
	registry.Unlock()
	t.Cleanup(func() {
		registry.Lock()
		registry.systems = saved
		registry.Unlock()
	})
	_, err = Run(context.Background(), o)
	require.ErrorIs(t, err, errNoSystem)
	require.ErrorContains(t, err, "oraclesim.Register")
	_, err = NewSession(o)
	require.ErrorIs(t, err, errNoSystem)

	o.System = ref
	again, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, res.Hash, again.Hash, "a system handed over runs as the registered one did")
}
