package coordinator

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Whatever order the rows come in, the join shows each as the listings
// do.
func TestJoinShowsWhatIsListed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		distinct := func(label string) []string {
			return rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, len(pool), rapid.ID[string]).Draw(t, label)
		}
		running := map[string]bool{}
		var insts []ports.InstanceState
		for _, id := range slices.Sorted(slices.Values(distinct("containers"))) {
			running[id] = rapid.Bool().Draw(t, "running")
			insts = append(insts, ports.InstanceState{WorkspaceID: id, Running: running[id]})
		}
		vols := slices.Sorted(slices.Values(distinct("volumes")))
		rows := distinct("rows")
		if rapid.Bool().Draw(t, "ordered") {
			slices.Sort(rows)
		}
		j := join{insts: insts, vols: vols}
		for _, id := range rows {
			r, exists := running[id]
			want := contracts.Observation{ContainerExists: exists, ContainerRunning: r, VolumeExists: slices.Contains(vols, id)}
			require.Equal(t, want, j.observe(id), "row %s of %v", id, rows)
		}
	})
}
