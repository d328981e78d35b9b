package driver

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
)

// The Python client's own tests (stdlib unittest), with the machine's
// Python 3: skipped with a message when there is none, a failure when
// CONVERGE_REQUIRE_PYTHON=1.
func TestThePythonClient(t *testing.T) {
	py := drivertest.Python(t)
	cmd := exec.Command(py, "-S", "-m", "unittest", "discover", "-s", "python", "-p", "test_*.py", "-v")
	cmd.Env = drivertest.PythonEnv(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "python3 -m unittest:\n%s", out)
	require.Contains(t, string(out), "OK")
	t.Logf("%s", out)
}
