package pythoncoordinator

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
)

// The example once remembered that it had invoked a workspace's calls,
// not for which claim: a completion whose last_access stamp lost its
// answer left the mark behind, and the next claim of that workspace,
// whose answer was lost too, was never resumed (SPEC 4.2 step 3). The
// judge found it at seed 6 of the default 50-workspace run. Since the
// example reads the reconciler's rows in the HealthMonitor's write batch
// its calls fall otherwise, so testdata keeps a run found again for them:
// seed 11 of 20 workspaces, 6 h, db-lost-response at 60 times its rate,
// cut to its first 15 minutes and their three faults (hash: the broken
// variant's). The old behaviour (--bug resume-by-mark) must still fail
// skips-workspace on it, and the example pass the whole run.
func TestTheExampleResumesEveryClaim(t *testing.T) {
	f, err := wssim.ReadReplay(filepath.Join("testdata", "resume-by-claim.json"))
	require.NoError(t, err)
	for _, c := range []struct {
		bugs []string
		want wsjudge.Verdict
	}{{[]string{"resume-by-mark"}, wsjudge.Violated}, {nil, wsjudge.Pass}} {
		cfg, err := f.Config(example(t, c.bugs...))
		require.NoError(t, err)
		s, r, err := wssim.Execute(context.Background(), driver.Judged(cfg))
		require.NoError(t, err)
		if c.want == wsjudge.Violated {
			require.Equal(t, c.want, r.Report.Verdict("skips-workspace"), "bugs %v:\n%s", c.bugs, describe(s, r))
		} else {
			require.True(t, r.OK(), "the example fails the run:\n%s", describe(s, r))
		}
	}
}
