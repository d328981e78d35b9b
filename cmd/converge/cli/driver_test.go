package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// driver selftest passes the reference child, names the first problem of
// a broken one, and rejects bad usage with one line.
func TestDriverSelftest(t *testing.T) {
	bin := refchildBinary(t)
	code, out, errOut := invoke(t, nil, "driver", "selftest", "--exec", bin)
	require.Equal(t, ExitOK, code, out+errOut)
	require.Contains(t, out, "ok   starts and answers hello as a coordinator: protocol version 3, name \"reference\"")
	require.Contains(t, out, "ok   deterministic: the same run again records the same history")
	require.Contains(t, out, "ok   rows as their changes (version 3): the same run with whole rows (version 2) records the same history")
	// A child of version 2 is sent whole rows: the check has nothing to
	// compare, and is not reported as passed.
	code, out, errOut = invoke(t, nil, "driver", "selftest", "--exec", bin+" --protocol 2")
	require.Equal(t, ExitOK, code, out+errOut)
	require.Contains(t, out, "protocol version 2")
	require.NotContains(t, out, "rows as their changes")
	require.Contains(t, out, "PASS (")

	// A child that does not start names its start and its standard error.
	broken := filepath.Join(t.TempDir(), "broken.sh")
	require.NoError(t, os.WriteFile(broken, []byte("#!/bin/sh\necho 'cannot find my config' >&2\nexit 4\n"), 0o755))
	code, out, _ = invoke(t, nil, "driver", "selftest", "--exec", broken)
	require.Equal(t, ExitFailed, code, out)
	require.Contains(t, out, "FAIL starts and answers hello as a coordinator")
	// The child may be gone before the hello is written or only before its
	// answer is read: either side may be the one to see it.
	require.Regexp(t, `at start-up: (read from|write to) the child: the child exited with status 4`, out)
	require.Contains(t, out, "cannot find my config")
	require.NotContains(t, out, "as an API", "it stops at the first problem")

	for _, args := range [][]string{{"driver", "selftest"}, {"driver", "selftest", "--exec", bin, "--exec-timeout", "0s"}, {"driver", "selftest", "--exec", bin, "x"}} {
		code, _, errOut = invoke(t, nil, args...)
		require.Equal(t, ExitUsage, code, args)
		require.Contains(t, errOut, "Run 'converge driver selftest --help' for usage.", args)
	}
	code, out, _ = invoke(t, nil, "driver", "selftest", "--help")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "names the first problem")
}
