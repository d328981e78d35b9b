package driver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/history"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// fakeSystem is a System over the test binary playing fake child name.
func fakeSystem(t testing.TB, name string, timeout time.Duration) *System {
	t.Helper()
	sys, err := New(Options{Command: []string{os.Args[0]}, Env: append(os.Environ(), childEnv+"="+name), Timeout: timeout})
	require.NoError(t, err)
	t.Cleanup(func() { sys.Close() })
	return sys
}

// quietRun is a short run with no workload and no faults: only the
// coordinators step.
func quietRun(sys *System) wssim.Config {
	return Judged(wssim.Config{Seed: 1, Duration: time.Minute, Coordinators: 1, System: sys, Workload: wssim.Workload{Disabled: true}})
}

// A child that breaks the protocol is killed, its instance is dropped as
// crashed (never a hang), and the run fails with the message that broke
// it.
func TestAChildThatBreaksTheProtocolIsDroppedAndReported(t *testing.T) {
	cases := []struct{ child, want string }{
		{"garbage", `not a protocol message: invalid character 'h' in literal true (expecting 'r') in this is not json`},
		{"unknown-method", `unknown method "store.gett" in {"type":"call","method":"store.gett"`},
		{"bad-args", `store.get: arguments: json: unknown field "idd"`},
		{"exit", "the child exited with status 3"},
		{"no-next", `a step's done has no "next"`},
		{"answer-before-asked", `a "ready" message where a call, a note or "done" was due`},
		{"hang", "no message within 5s (the driver's read timeout): killed"},
	}
	for _, c := range cases {
		t.Run(c.child, func(t *testing.T) {
			// The hanging child is given a short timeout (long enough for
			// it to start and say hello on a loaded machine); the others
			// the default, which they never reach.
			timeout := DefaultTimeout
			if c.child == "hang" {
				timeout = 5 * time.Second
			}
			sys := fakeSystem(t, c.child, timeout)
			s, r, err := wssim.Execute(context.Background(), quietRun(sys))
			require.NoError(t, err)
			require.Len(t, r.Failures, 1, "one failure: the child's")
			require.Contains(t, r.Failures[0], "driver: coord-1#1: ")
			require.Contains(t, r.Failures[0], c.want)
			var crash *history.Event
			for _, e := range s.History().Events() {
				if e.Kind == history.KindCrash && e.Method == "crash" {
					crash = &e
					break
				}
			}
			require.NotNil(t, crash, "the instance is dropped as crashed")
			require.Contains(t, crash.Args, "step failed: driver: coord-1#1: ")
			require.False(t, s.Alive("coord-1"))
		})
	}
}

// A child that dies leaving its standard output open (held by a process
// of its own session, which killing the child's process group does not
// reach) is reported at the timeout; the harness does not wait for that
// process.
func TestAChildWhoseOutputOutlivesItIsReportedAtTheTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(pidFileEnv, pidFile)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	sys := fakeSystem(t, "escape", 3*time.Second)
	_, r, err := wssim.Execute(context.Background(), quietRun(sys))
	require.NoError(t, err)
	require.Len(t, r.Failures, 1, "one failure: the child's")
	require.Contains(t, r.Failures[0], "driver: coord-1#1: ")
	require.Contains(t, r.Failures[0], "the child exited with status 4, but its standard output stayed open")
	require.FileExists(t, pidFile, "the child left a process behind")
}

func TestAChildsStandardErrorEndsTheFailureReport(t *testing.T) {
	sys := fakeSystem(t, "exit", DefaultTimeout)
	_, r, err := wssim.Execute(context.Background(), quietRun(sys))
	require.NoError(t, err)
	require.Len(t, r.Failures, 1)
	require.Contains(t, r.Failures[0], "its standard error ends:\n    panic: something broke")
}

func TestAChildOfAnotherProtocolVersionCannotStart(t *testing.T) {
	sys := fakeSystem(t, "old-protocol", DefaultTimeout)
	_, _, err := wssim.Execute(context.Background(), quietRun(sys))
	require.ErrorContains(t, err, "at start-up: the child speaks protocol version 4; this harness speaks 1 to 3")
}

func TestACommandThatDoesNotExistFailsClearly(t *testing.T) {
	sys, err := New(Options{Command: []string{"/no/such/child"}})
	require.NoError(t, err)
	_, _, err = wssim.Execute(context.Background(), quietRun(sys))
	require.ErrorContains(t, err, `start "/no/such/child"`)
	_, err = New(Options{})
	require.ErrorContains(t, err, "no command")
	_, err = New(Options{Command: []string{"x"}, Timeout: -time.Second})
	require.ErrorContains(t, err, "negative")
}

// A child that reads randomness is caught by the double run, and the
// report names the first message where the two runs part.
func TestANondeterministicChildIsReportedWithItsFirstDivergingMessage(t *testing.T) {
	sys := fakeSystem(t, "random-next", DefaultTimeout)
	r, err := Check(context.Background(), quietRun(sys))
	require.ErrorIs(t, err, wssim.ErrNondeterministic)
	joined := strings.Join(r.Failures, "\n")
	require.Contains(t, joined, "the protocol transcripts part at message")
	require.Contains(t, joined, "first difference:", "sim.Check's history difference comes first")
	require.Contains(t, joined, `run 1: coord-1#1 < {"type":"done","leader":false,"next":"2026-01-05T00:00:01.`)
	require.Contains(t, joined, `run 2: coord-1#1 < {"type":"done","leader":false,"next":"2026-01-05T00:00:01.`)
}

func TestADeterministicChildPassesTheDoubleRun(t *testing.T) {
	sys := fakeSystem(t, "steady", DefaultTimeout)
	r, err := Check(context.Background(), quietRun(sys))
	require.NoError(t, err)
	require.True(t, r.OK())
	require.Empty(t, sys.Divergence())
	require.Greater(t, sys.Messages(), 100, "a minute of steps, one a second")
}
