package conformance_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/scenarios/conformance"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
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
	require.Contains(t, s, "--- SKIP: TestHelperSuiteOnAMutant/checkers/")
	require.Contains(t, s, "not exercised: its situation never arose")
}

// TestHelperSuiteOnAMutant is the child of TestMutantFailsTheSuite.
func TestHelperSuiteOnAMutant(t *testing.T) {
	name := os.Getenv("CONVERGE_CONFORMANCE_HELPER")
	if name == "" {
		t.Skip("a helper process of TestMutantFailsTheSuite")
	}
	m, err := wsmutants.Lookup(name)
	require.NoError(t, err)
	conformance.Run(t, conformance.Config{
		NewSystem:     func() ports.System { return m.System },
		Seeds:         3,
		Workspaces:    3,
		Duration:      6 * 3600e9,
		Skip:          []string{"rapid"},
		ReplayDir:     os.Getenv("CONVERGE_CONFORMANCE_DIR"),
		ReplayCommand: "go run ./cmd/acme-converge replay",
	})
}
