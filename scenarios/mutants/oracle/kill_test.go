package oracle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKillMatrix: every mutant of the catalogue is caught by one of the
// checkers ORACLE-SPEC 5.4 names for it, and not by the reference on the
// same run, within a bounded number of seeds.
func TestKillMatrix(t *testing.T) {
	for _, m := range All() {
		t.Run(m.Name(), func(t *testing.T) {
			k, err := NewHunt(m, 1, 40, nil).Run(context.Background())
			require.NoError(t, err)
			t.Logf("%-36s seed %-3d (%d seeds) violated %v", m.Name(), k.Seed, k.Seeds, k.Checkers)
			require.True(t, k.Killed, "%s not caught by %v in %d seeds", m.Name(), m.Kills, k.Seeds)
		})
	}
}
