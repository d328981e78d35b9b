package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
)

// selfTest runs SelfTest over fake child name and returns its checks.
func selfTest(t *testing.T, name string) ([]SelfCheck, bool) {
	t.Helper()
	var checks []SelfCheck
	ok := SelfTest(context.Background(), Options{Command: []string{os.Args[0]}, Env: append(os.Environ(), childEnv+"="+name)},
		func(c SelfCheck) { checks = append(checks, c) })
	return checks, ok
}

// The self-test stops at the first problem and names it: a child that
// answers hello and steps, but never takes the lock, passes the
// handshake and the run's messages, then fails the first milestone.
func TestTheSelfTestNamesTheFirstProblem(t *testing.T) {
	checks, ok := selfTest(t, "lazy")
	require.False(t, ok)
	last := checks[len(checks)-1]
	require.Equal(t, "takes the leader lock (leadership.try_acquire)", last.What)
	require.ErrorContains(t, last.Err, "never: no coordinator took the lock")
	for _, c := range checks[:len(checks)-1] {
		require.NoError(t, c.Err, c.What)
	}
	require.Contains(t, checks[0].Found, `protocol version 3, name "notes"`)

	checks, ok = selfTest(t, "steady")
	require.False(t, ok)
	require.Contains(t, checks[0].Found, `protocol version 3, name "fake-steady", no stderr_sync`)
	require.ErrorContains(t, checks[len(checks)-1].Err, "create: done without a value")

	checks, ok = selfTest(t, "bad-args")
	require.False(t, ok)
	last = checks[len(checks)-1]
	require.True(t, strings.HasPrefix(last.What, "a run of 1 workspace"), last.What)
	require.ErrorContains(t, last.Err, `store.get: arguments: json: unknown field "idd"`)
}

// A child that reads a row's changes otherwise than the row they stand
// for passes every check but the last, which names it; the Python
// example passes that one too.
func TestTheSelfTestComparesRowChangesWithWholeRows(t *testing.T) {
	py := drivertest.Python(t)
	run := func(script string) ([]SelfCheck, bool) {
		t.Helper()
		abs, err := filepath.Abs(script)
		require.NoError(t, err)
		var checks []SelfCheck
		ok := SelfTest(context.Background(), Options{Command: []string{py, "-S", abs}, Env: drivertest.PythonEnv(t)},
			func(c SelfCheck) { checks = append(checks, c) })
		return checks, ok
	}
	const what = "rows as their changes (version 3): the same run with whole rows (version 2) records the same history"
	checks, ok := run("testdata/drops_changes.py")
	require.False(t, ok)
	last := checks[len(checks)-1]
	require.Equal(t, what, last.What)
	require.ErrorContains(t, last.Err, "with whole rows the run recorded another history")
	for _, c := range checks[:len(checks)-1] {
		require.NoError(t, c.Err, c.What)
	}

	checks, ok = run("../../../examples/python-coordinator/coordinator.py")
	require.True(t, ok, "%v", checks)
	last = checks[len(checks)-1]
	require.Equal(t, what, last.What)
	require.Contains(t, last.Found, "went as changes")
}
