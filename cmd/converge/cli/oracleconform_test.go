package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOracleConformUsage(t *testing.T) {
	code, _, errOut := invoke(t, nil, "oracle", "conform")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "--daemon is required")
	code, _, errOut = invoke(t, nil, "oracle", "conform", "--daemon", `mydaemon "unterminated`)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "unterminated double quote")
}

// A daemon that cannot be launched is an infrastructure failure, not a
// verdict.
func TestOracleConformMissingBinaryIsExitThree(t *testing.T) {
	code, _, errOut := invoke(t, nil, "oracle", "conform", "--short", "--daemon", filepath.Join(t.TempDir(), "no-such-daemon"))
	require.Equal(t, ExitError, code, errOut)
}

// The bent daemon that exits 1 after SIGTERM fails the run with O14, and
// the JUnit file says so.
func TestOracleConformFailsABentDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time run of about 10 s")
	}
	dir, bin := buildBentOracled(t)
	junit := filepath.Join(dir, "conform.xml")
	code, stdout, errOut := invoke(t, nil, "oracle", "conform", "--short", "--daemon", bin+" --bend 'term-exit-1'", "--junit", junit)
	require.Equal(t, ExitFailed, code, "%s\n%s", stdout, errOut)
	require.Regexp(t, `o14-shutdown\s+violated`, stdout)
	require.Contains(t, stdout, "FAIL:")
	x, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Regexp(t, `<testcase name="o14-shutdown" classname="oracle-conform" time="0">\s*<failure message="violated"`, string(x))
}

// --json prints one object with the verdicts, the violations with their
// times from genesis, and the script's steps.
func TestOracleConformJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time run of about 10 s")
	}
	_, bin := buildBentOracled(t)
	code, stdout, errOut := invoke(t, nil, "oracle", "conform", "--short", "--json", "--daemon", bin+" --bend 'term-exit-1'")
	require.Equal(t, ExitFailed, code, "%s\n%s", stdout, errOut)
	var rep conformReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.False(t, rep.Pass)
	require.Equal(t, "violated", rep.Verdicts["o14-shutdown"])
	require.NotEmpty(t, rep.Violations)
	require.Equal(t, "o14-shutdown", rep.Violations[0].Checker)
	require.Regexp(t, `^\+\d\d:\d\d:\d\d`, rep.Violations[0].At)
	require.NotEmpty(t, rep.Steps)
	require.Equal(t, rep.Stalled, rep.HarnessLateMS > 50)
}

// buildBentOracled builds the bent reference daemon into a new temporary
// directory and returns both.
func buildBentOracled(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "bentoracled")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/wsconverge/converge/scenarios/mutants/oracle/bentoracled").CombinedOutput()
	require.NoError(t, err, string(out))
	return dir, bin
}
