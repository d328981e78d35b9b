package conform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
)

// shared are the services of the package's tests, started once.
var shared struct {
	once sync.Once
	svc  *Services
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.svc != nil {
		_ = shared.svc.Close(context.Background())
	}
	os.Exit(code)
}

func services(t *testing.T) *Services {
	t.Helper()
	if err := testenv.DockerErr(); err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatalf("no Docker engine: %v", err)
		}
		t.Skipf("no Docker engine: real tier skipped (%v)", err)
	}
	shared.once.Do(func() { shared.svc, shared.err = StartServices(context.Background()) })
	require.NoError(t, shared.err)
	return shared.svc
}

// buildConverge builds the CLI with the conformmutants tag: the
// reference when CONVERGE_MUTANT is unset, a catalogue mutant otherwise.
var buildConverge = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "converge-conform-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "converge")
	out, err := exec.Command("go", "build", "-tags", "conformmutants", "-o", bin, "github.com/wsconverge/converge/cmd/converge").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// envKeepEvidence names a directory where each drill keeps its evidence
// (its instances' logs, the history, the report) after the test: a run
// that failed can then be read, not only its summary.
const envKeepEvidence = "CONFORM_KEEP_EVIDENCE"

// drill runs the short profile against `converge serve` (mutant "" for
// the reference) and returns the result.
func drill(t *testing.T, mutant string, mod func(*Config)) *Result {
	t.Helper()
	svc := services(t)
	bin, err := buildConverge()
	require.NoError(t, err)
	cfg, err := LoadConfig("", "short")
	require.NoError(t, err)
	// The reference's own setting: a silent leader session ends after 3 s,
	// so that a partition of the leader fails over within the phase.
	cfg.Env = append(cfg.Env, "CONVERGE_LEADER_IDLE_TIMEOUT=3s", "LOG_FORMAT=json")
	if mutant != "" {
		cfg.Env = append(cfg.Env, "CONVERGE_MUTANT="+mutant)
	}
	if mod != nil {
		mod(&cfg)
	}
	argv, err := SplitCommand(bin + " serve")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "evidence")
	if keep := os.Getenv(envKeepEvidence); keep != "" {
		who := mutant
		if who == "" {
			who = "reference"
		}
		dir, err = os.MkdirTemp(keep, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-"+who+"-")
		require.NoError(t, err)
		t.Logf("evidence kept in %s", dir)
	}
	res, err := Run(t.Context(), Options{Config: cfg, Command: argv, Dir: dir, Services: svc, Progress: testWriter{t}})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, res.WriteText(&b))
	t.Log("\n" + b.String())
	return res
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// referenceTimeScale is the K the reference is drilled at: the smallest
// round figure at which C12's 91-minute bound (ConvergeBound/K + 1 s)
// fits in the short profile's 100 s quiet phase (56 would).
const referenceTimeScale = 60

// The reference, started as any implementation would be, passes the
// short profile with every real fault on, on a clock K times faster: a
// pass by the claim rule, every judged checker exercised, c12-convergence
// among them.
func TestReferencePassesTheShortProfile(t *testing.T) {
	start := time.Now()
	res := drill(t, "", func(c *Config) { c.TimeScale = referenceTimeScale })
	t.Logf("short profile wall time: %s", time.Since(start).Round(time.Second))
	require.False(t, res.Failed(), "the reference must pass:\n%s", res.Summary())
	require.Empty(t, res.Unmet(), "every judged checker's obligation must arise:\n%s", res.Summary())
	require.True(t, res.Passed())
	require.Empty(t, res.Claim.Allowed, "at K = %d nothing judged is out of reach", referenceTimeScale)
	require.Equal(t, AttributionDeclared, res.Attribution)
	for _, n := range res.Judged {
		require.Positive(t, res.Report.Exercised[n], "%s judged on no situation", n)
	}
	require.Contains(t, res.Judged, "c12-convergence")
	require.Greater(t, res.APICalls, 20)
	// C12's safety, on the world's bytes: the users' writes through the
	// agent, read back after an archive and a restore, and the volumes
	// and archives read at the end.
	require.Contains(t, res.Judged, "c12-durability")
	require.Positive(t, res.UserData.Writes, "%s", res.UserData)
	require.Positive(t, res.UserData.Verified, "%s", res.UserData)
	require.Positive(t, res.UserData.Owed, "%s", res.UserData)
}

// Catalogue mutants run as processes (`converge serve` built with the
// conformmutants tag, CONVERGE_MUTANT naming the mutant) fail with their
// expected contracts.
func TestMutantsFailWithTheirContracts(t *testing.T) {
	quick := func(faults ...FaultKind) func(*Config) {
		return func(c *Config) {
			c.FaultPhase, c.QuietPhase = Duration(40*time.Second), Duration(30*time.Second)
			c.Faults = nil
			for _, f := range faults {
				c.Faults = append(c.Faults, string(f))
			}
			if c.Faults == nil {
				c.Faults = []string{}
			}
		}
	}
	cases := []struct {
		mutant, checker string
		mod             func(*Config)
		// onlyThroughAFault: the mutant passes the same drill with every
		// real fault off (no violation), and its violation follows a fault
		// aimed at the leader: a bug only a real fault exposes.
		onlyThroughAFault bool
	}{
		{"non-owner-write", "c3-single-writer", quick(), false},
		{"no-cas-claim", "c4-non-preemptive", quick(), false},
		// The tour asks for PENDING only once its workspace has run and
		// its user has written there: a loaded machine has been seen to
		// take longer than the quick phase to get that far, so the phase
		// is longer (it still ends the drill, whatever happened).
		{"running-to-pending", "c5-one-level", func(c *Config) {
			quick()(c)
			c.FaultPhase = Duration(2 * time.Minute)
		}, false},
		{"create-without-stamp", "api-rules", quick(), false},
		// Its volume removal during ARCHIVING, before archive_key is
		// committed, is seen only in the engine's events (DR482, DR483);
		// the phase is the tour's (see running-to-pending).
		{"delete-volume-before-key", "c8-ordering", func(c *Config) {
			quick()(c)
			c.FaultPhase = Duration(2 * time.Minute)
		}, false},
		// The tour reaches its DELETE late: the whole short fault phase.
		{"delete-keeps-desired", "api-rules", func(c *Config) { c.Faults = []string{} }, false},
		// A restore that takes a damaged archive for a good one: only an
		// object fault aimed at the tour's archived workspace, before its
		// user asks for it back, makes a restore meet one. The reference
		// meets the same fault with ERROR DataLost and passes.
		{"restore-ignores-data-loss", "c12-durability", func(c *Config) {
			quick(FaultObjectCorrupt)(c)
			c.FaultPhase = Duration(2 * time.Minute)
			c.Seed = seedAimingAtTheArchivedTour(t, FaultObjectCorrupt, time.Duration(c.FaultPhase))
		}, false},
		// A deposed leader that keeps acting, unfenced: only a partition, a
		// pause or a terminated session of the leader deposes it.
		{"deposed-leader-keeps-acting", "c10-single-leader", quick(FaultPartition, FaultPause, FaultTerminateBackend), true},
	}
	for _, tc := range cases {
		t.Run(tc.mutant, func(t *testing.T) {
			if tc.mutant == "restore-ignores-data-loss" {
				// The fault is legitimate: the reference meets it with a
				// terminal DataLost error (SPEC 1.5) and nothing violated.
				res := drill(t, "", tc.mod)
				require.False(t, res.Failed(), "the reference must pass the damaged archive:\n%s", res.Summary())
				require.True(t, wroteDataLost(res.Events), "the reference's restore of the damaged archive must end in DataLost:\n%s", res.Summary())
			}
			if tc.onlyThroughAFault {
				res := drill(t, tc.mutant, quick())
				// c10-write-epoch reads the unfenced writes (epoch 0)
				// themselves, fault or not: every other checker passes
				// the drill without a real fault.
				require.Empty(t, res.Problems, "with no real fault the mutant %s must pass:\n%s", tc.mutant, res.Summary())
				for _, v := range res.Report.Violations {
					require.Equal(t, "c10-write-epoch", v.Checker, "with no real fault the mutant %s must pass all but c10-write-epoch:\n%s", tc.mutant, res.Summary())
				}
			}
			res := drill(t, tc.mutant, tc.mod)
			require.True(t, res.Failed(), "the mutant %s passed:\n%s", tc.mutant, res.Summary())
			vs := res.Report.ByChecker(tc.checker)
			require.NotEmpty(t, vs, "the mutant %s failed, but not %s:\n%s", tc.mutant, tc.checker, res.Summary())
			if tc.onlyThroughAFault {
				var faultAt time.Time
				for _, e := range res.Events {
					if e.Kind == history.KindFault && e.Method != wsjudge.FQuiet && e.Instance != "" {
						faultAt = e.At
						break
					}
				}
				require.False(t, faultAt.IsZero(), "no fault struck an instance")
				require.True(t, vs[0].At.After(faultAt), "the violation precedes the first fault on an instance")
			}
		})
	}
}

// seedAimingAtTheArchivedTour is the first seed whose schedule of kind
// alone aims it at the tour's archived workspace (Fault.Archived): the
// fault is drawn from the seed like any other.
func seedAimingAtTheArchivedTour(t *testing.T, kind FaultKind, d time.Duration) uint64 {
	t.Helper()
	for seed := uint64(1); seed < 100; seed++ {
		if fs := GenerateFaults(seed, []FaultKind{kind}, d); len(fs) == 1 && fs[0].Archived {
			return seed
		}
	}
	t.Fatalf("no seed under 100 aims %s at the tour's archived workspace", kind)
	return 0
}

// wroteDataLost reports whether a write recorded error_info with reason
// DataLost.
func wroteDataLost(events []history.Event) bool {
	for _, e := range events {
		if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.ErrorInfo.Set && e.Patch.ErrorInfo.V != nil &&
			e.Patch.ErrorInfo.V.Reason == contracts.ReasonDataLost {
			return true
		}
	}
	return false
}
