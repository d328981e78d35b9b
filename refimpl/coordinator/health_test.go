package coordinator

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Whatever order the rows come in, the join finds exactly the listed ids.
func TestSeekFindsWhatIsListed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pool := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		listed := slices.Sorted(slices.Values(rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, len(pool), rapid.ID[string]).Draw(t, "listed")))
		rows := rapid.SliceOfN(rapid.SampledFrom(pool), 0, 12).Draw(t, "rows")
		if rapid.Bool().Draw(t, "ordered") {
			slices.Sort(rows)
		}
		i := 0
		for _, id := range rows {
			var found bool
			i, found = seek(listed, i, id)
			require.Equal(t, slices.Contains(listed, id), found, "%s in %v", id, listed)
			require.True(t, i >= 0 && i <= len(listed))
		}
	})
}
