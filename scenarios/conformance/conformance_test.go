package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/scenarios/conformance"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// The reference passes the suite it offers third parties.
func TestReferenceConforms(t *testing.T) {
	conformance.Run(t, conformance.Config{
		NewSystem: wsref.NewSystem,
		Seeds:     30,
		ReplayDir: t.TempDir(),
	})
}

// The suite fails a broken system, and says where and how to replay it.
// Go has no expected-failure subtests, so the suite runs on the mutant in
// a child process (this test binary, re-run on the helper below).
func TestMutantFailsTheSuite(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperSuiteOnAMutant$", "-test.v")
	cmd.Env = append(os.Environ(), "CONVERGE_CONFORMANCE_HELPER=no-cas-claim", "CONVERGE_CONFORMANCE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite must fail a mutant:\n%s", out)
	s := string(out)
	require.Contains(t, s, "--- FAIL: TestHelperSuiteOnAMutant/scenarios/1-new-workspace", s)
	require.Contains(t, s, "--- FAIL: TestHelperSuiteOnAMutant/checkers/c4-non-preemptive")
	require.Contains(t, s, "claim of PROVISIONING without compare-and-set")
	require.Contains(t, s, "replay: go run ./cmd/acme-converge replay "+dir)
	require.Contains(t, s, "--- PASS: TestHelperSuiteOnAMutant/checkers/c1-completion-observed")
}

// A checker whose situation never arose fails its subtest (it is not a
// skip: it proved nothing), saying what it needed and how to allow it;
// one the Config allows skips, saying so. Run on the reference, with too
// few seeds and no faults to exercise everything.
func TestUnexercisedCheckersFailUnlessAllowed(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperSuiteOnAMutant$", "-test.v")
	cmd.Env = append(os.Environ(), "CONVERGE_CONFORMANCE_HELPER=reference-without-faults", "CONVERGE_CONFORMANCE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite must fail when evidence is missing:\n%s", out)
	s := string(out)
	require.Contains(t, s, "--- FAIL: TestHelperSuiteOnAMutant/checkers/c10-single-leader", s)
	require.Contains(t, s, "c10-single-leader (C10) NOT EXERCISED over 2 seed(s): its situation arose 0 time(s), fewer than 3")
	require.Contains(t, s, "its obligation: a leadership acquired after another")
	require.Contains(t, s, `conformance.Config{AllowUnexercised: []string{"c10-single-leader"}}`)
	require.Contains(t, s, "--- SKIP: TestHelperSuiteOnAMutant/checkers/c11-error-skip")
	require.Contains(t, s, "allowed by Config.AllowUnexercised")
	require.Contains(t, s, "--- PASS: TestHelperSuiteOnAMutant/checkers/c1-completion-observed")
	require.NotContains(t, s, "--- FAIL: TestHelperSuiteOnAMutant/seeds", "the reference violates nothing")
}

// TestHelperSuiteOnAMutant is the child of TestMutantFailsTheSuite.
func TestHelperSuiteOnAMutant(t *testing.T) {
	name := os.Getenv("CONVERGE_CONFORMANCE_HELPER")
	if name == "" {
		t.Skip("a helper process of TestMutantFailsTheSuite")
	}
	if name == "reference-without-faults" {
		none := wssim.NoFaults()
		conformance.Run(t, conformance.Config{
			NewSystem: wsref.NewSystem, Seeds: 2, SeedBudget: 2, Workspaces: 2, Duration: 3600e9, Faults: &none,
			AllowUnexercised: []string{"c11-error-skip"},
			Skip:             []string{"rapid", "scenarios"},
			ReplayDir:        os.Getenv("CONVERGE_CONFORMANCE_DIR"),
		})
		return
	}
	m, err := wsmutants.Lookup(name)
	require.NoError(t, err)
	skip := []string{"rapid"}
	if os.Getenv("CONVERGE_CONFORMANCE_RAPID") == "1" {
		skip = []string{"scenarios"}
	}
	conformance.Run(t, conformance.Config{
		NewSystem:     func() ports.System { return m.System },
		Seeds:         3,
		Workspaces:    3,
		Duration:      6 * 3600e9,
		Skip:          skip,
		ReplayDir:     os.Getenv("CONVERGE_CONFORMANCE_DIR"),
		ReplayCommand: "go run ./cmd/acme-converge replay",
	})
}

// A run of the suite that fails writes its replay files, the seeds' and
// rapid's, into a directory of its own under the temporary directory and
// says where, never under the user's home or state directory (issue 23:
// 47 files in ~/.local/state/converge/replays per make test).
func TestSuiteWritesNothingUnderHome(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperSuiteOnAMutant$", "-test.v",
		"-rapid.seed=3", "-rapid.nofailfile")
	env := []string{"CONVERGE_CONFORMANCE_HELPER=no-retry-spacing", "CONVERGE_CONFORMANCE_RAPID=1", "HOME=" + home, "TMPDIR=" + tmp}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_STATE_HOME=") && !strings.HasPrefix(kv, "CONVERGE_CONFORMANCE_DIR=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite must fail a mutant:\n%s", out)
	s := string(out)
	require.NotContains(t, s, "into the per-user state directory", "nothing reached the user's state directory")
	require.Empty(t, filesUnder(t, home), "nothing was written under HOME:\n%s", s)
	written := filesUnder(t, tmp)
	named := 0
	for _, f := range written {
		require.True(t, strings.HasPrefix(f, "converge-replays-") || strings.HasPrefix(f, "converge-state-guard-"), "unexpected file %s", f)
		if strings.HasSuffix(f, ".json") && strings.Contains(s, "replay: converge replay "+filepath.Join(tmp, f)) {
			named++
		}
	}
	require.NotZero(t, named, "the failure names its replay file, under the temporary directory: %v\n%s", written, s)
}

// filesUnder lists the files beneath dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}
