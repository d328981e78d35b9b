package driver

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
