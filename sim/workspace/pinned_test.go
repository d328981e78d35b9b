package workspace

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	wsref "github.com/wsconverge/converge/refimpl/workspace"
)

// pinnedShapes are the run shapes whose histories are pinned: the default
// swarm fault mix and a run without faults, both small fleets over six
// simulated hours and the default quiet phase.
var pinnedShapes = []struct {
	name   string
	faults FaultMix
}{
	{"swarm", DefaultFaults()},
	{"no-faults", NoFaults()},
}

// pinnedHistories are "hash events violations" of the reference's seeds
// 1–5 in each pinned shape, recorded at commit 549909c. A change that
// claims to keep behaviour (a refactor of the reference, a faster
// simulator, a moved package) must leave every line as it is; a change of
// the workload or the fault draws changes them, and its commit says so
// and records them again (`go test -run TestPinnedHistories -v
// ./sim/workspace/` prints the new lines). Swarm seeds 2, 3 and 4 were
// recorded again when no-answer and hold-volume joined the mix (DR496):
// their later stream turns one of them on; seeds 1 and 5, where it turns
// both off, kept their lines.
var pinnedHistories = map[string][5]string{
	"swarm": {
		"040fdb66c3ab38b3601e00329860ef25 35459 0",
		"f8d69e8c15a312241f2daffba37edafb 35617 0",
		"6636214dbd1467485cce7db0e166c620 35110 0",
		"3a431b3f0f7b6450543d38cfa9073bf4 35367 0",
		"51b06ee52cb63e7d67b6b70e6c32f05c 35263 0",
	},
	"no-faults": {
		"877574d7fc0d829ce3454452927256e5 35372 0",
		"0b7604e8ce544a136d801e4b92994c41 35180 0",
		"7595ff9a7b25f7b3f51ed894c022b024 35350 0",
		"537f66259423807243400c1169ae3239 35317 0",
		"3c292b5b83cc037350c1fd95257d8cb4 35396 0",
	},
}

func TestPinnedHistories(t *testing.T) {
	for _, sh := range pinnedShapes {
		for i, want := range pinnedHistories[sh.name] {
			seed := uint64(i + 1)
			r, err := Run(context.Background(), Config{Seed: seed, Workspaces: 5, Duration: 6 * time.Hour,
				Quiet: DefaultQuiet, Faults: sh.faults, System: wsref.NewSystem()})
			require.NoError(t, err)
			require.Empty(t, r.Failures, "%s seed %d", sh.name, seed)
			got := fmt.Sprintf("%s %d %d", r.Hash, r.Events, len(r.Report.Violations))
			t.Logf("%s seed %d: %q", sh.name, seed, got)
			require.Equal(t, want, got, "%s seed %d: the history changed", sh.name, seed)
		}
	}
}
