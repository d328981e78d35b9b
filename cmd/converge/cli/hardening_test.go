package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// requireUsageLine checks a usage error: exit 2, nothing on stdout, one
// line naming the problem (then the pointer to --help), no stack trace.
func requireUsageLine(t *testing.T, code int, out, errOut, want string) {
	t.Helper()
	require.Equal(t, ExitUsage, code, "stderr: %s", errOut)
	require.Empty(t, out)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	require.Len(t, lines, 2, "one line and the pointer to --help: %s", errOut)
	require.Contains(t, lines[0], want)
	require.NotContains(t, lines[0], "bad input", "the marker is for errors.Is, not for the user")
	require.Contains(t, lines[1], "--help")
	require.NotContains(t, errOut, "goroutine")
}

// goodReplay writes a valid replay file of the reference (a short run with
// no faults) into dir and returns it, decoded.
func goodReplay(t *testing.T, dir string) *wssim.Replay {
	t.Helper()
	code, out, errOut := invoke(t, []Option{withChecks(func(*wssim.Sim) []string { return []string{"forced failure"} })},
		"sim", "--seed", "1", "--seeds", "1", "--workspaces", "1", "--duration", "10m", "--quiet", "0", "--faults", "none", "--replay-dir", dir)
	require.Equal(t, ExitFailed, code, out+errOut)
	f, err := wssim.ReadReplay(filepath.Join(dir, "reference-seed-1.json"))
	require.NoError(t, err)
	return f
}

// A replay file is data: one that records a command as its system (exec:…)
// never runs it unless --allow-exec says so (issue 23: a file with
// "exec:/bin/sh -c …" ran its command under converge replay).
func TestReplayNeverRunsAFilesCommandUnasked(t *testing.T) {
	dir := t.TempDir()
	f := goodReplay(t, dir)
	marker := filepath.Join(dir, "ran")
	f.System = "exec:/bin/sh -c 'touch " + marker + "'"
	path := filepath.Join(dir, "exec.json")
	require.NoError(t, wssim.WriteReplay(path, f))
	code, out, errOut := invoke(t, nil, "replay", path)
	requireUsageLine(t, code, out, errOut, "a replay file never runs a command by itself; to run it, replay with --allow-exec")
	require.NoFileExists(t, marker, "nothing ran")
}

// Replay input is checked before it is read whole (issue 23: /dev/zero
// grew without bound, a FIFO hung): only regular files, at most
// engine.MaxReplayBytes; exit 2 and one line.
func TestReplayRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sparse := filepath.Join(dir, "sparse.json")
	fh, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, fh.Truncate(3<<30))
	require.NoError(t, fh.Close())
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero is a device: want a regular replay file",
		fifo:        "is a named pipe (FIFO)",
		dir:         "is a directory",
		sparse:      fmt.Sprintf("is too large (3221225472 bytes; a replay file has at most %d)", engine.MaxReplayBytes),
	} {
		code, out, errOut := invoke(t, nil, "replay", path)
		requireUsageLine(t, code, out, errOut, want)
	}
	code, out, errOut := invoke(t, nil, "oracle", "replay", fifo)
	requireUsageLine(t, code, out, errOut, "is a named pipe (FIFO)")
}

// Every field of a replay file is validated before the run (issue 23: an
// out-of-range start ended in a stack trace and "HASH DIFFERS"): exit 2
// and one line naming the field.
func TestReplayValidatesEveryField(t *testing.T) {
	dir := t.TempDir()
	good := goodReplay(t, dir)
	for name, c := range map[string]struct {
		edit func(f *wssim.Replay)
		want string
	}{
		"start far ahead":     {func(f *wssim.Replay) { f.Start = f.Start.AddDate(7000, 0, 0) }, "start 9026-01-05T00:00:00Z out of range [1970-01-01, 2200-01-01)"},
		"start before 1970":   {func(f *wssim.Replay) { f.Start = f.Start.AddDate(-500, 0, 0) }, "start 1526-01-05T00:00:00Z out of range"},
		"start missing":       {func(f *wssim.Replay) { f.Start = time.Time{} }, `"start" is missing`},
		"no coordinators":     {func(f *wssim.Replay) { f.Coordinators = 0 }, "coordinators 0 out of range [1, 64]"},
		"too many workspaces": {func(f *wssim.Replay) { f.Workspaces = 1 << 40 }, "workspaces 1099511627776 out of range"},
		"negative workspaces": {func(f *wssim.Replay) { f.Workspaces = -1 }, "workspaces -1 out of range"},
		"no limit":            {func(f *wssim.Replay) { f.Limits.MaxRunningPerUser = 0 }, "limits.MaxRunningPerUser 0 out of range"},
		"no deletes rate":     {func(f *wssim.Replay) { f.Workload.DeletesPerDay = 0 }, "workload.deletes_per_day 0: want a negative number (none)"},
		"deletes rate >100":   {func(f *wssim.Replay) { f.Workload.DeletesPerDay = 101 }, "workload.deletes_per_day 101: want"},
		"no users":            {func(f *wssim.Replay) { f.Workload.Users = 0 }, "workload.users 0 out of range [1, 100000]"},
		"no create window":    {func(f *wssim.Replay) { f.Workload.CreateWindow = 0 }, "workload.create_window 0s out of range"},
		"bad duration":        {func(f *wssim.Replay) { f.Duration = "soon" }, `duration "soon"`},
		"long duration":       {func(f *wssim.Replay) { f.Duration = "100000h" }, "duration 100000h0m0s out of range"},
		"no duration":         {func(f *wssim.Replay) { f.Duration = "" }, `"duration" is missing`},
		"negative quiet":      {func(f *wssim.Replay) { f.Quiet = "-1m" }, "quiet -1m0s out of range"},
		"bad fault mix":       {func(f *wssim.Replay) { f.Faults = "meteor" }, "faults:"},
		"no system":           {func(f *wssim.Replay) { f.System = "" }, `"system" is missing`},
		"no hash":             {func(f *wssim.Replay) { f.Hash = "" }, `"hash" is missing`},
		"hash not hex":        {func(f *wssim.Replay) { f.Hash = "zz" }, `hash "zz": a history hash is 32 lowercase hex digits`},
		"hash too long":       {func(f *wssim.Replay) { f.Hash += "00" }, "a history hash is 32 lowercase hex digits"},
		"unknown system":      {func(f *wssim.Replay) { f.System = "acme" }, `names system "acme", which this binary does not know`},
		"action after end": {func(f *wssim.Replay) {
			f.Plan.Actions = append(f.Plan.Actions, wssim.Action{Kind: wssim.FaultCrash, At: 1 << 50})
		}, "plan action 1 (crash): at"},
		"unknown action": {func(f *wssim.Replay) { f.Plan.Actions = append(f.Plan.Actions, wssim.Action{Kind: "meteor"}) }, "unknown kind"},
	} {
		t.Run(name, func(t *testing.T) {
			f := *good
			p := *good.Plan
			f.Plan = &p
			c.edit(&f)
			path := filepath.Join(t.TempDir(), "f.json")
			require.NoError(t, wssim.WriteReplay(path, &f))
			code, out, errOut := invoke(t, nil, "replay", path)
			requireUsageLine(t, code, out, errOut, c.want)
		})
	}
}

// The command line of --exec is checked before anything runs (issue 23):
// an unbalanced quote is a usage error, and a program that does not exist
// is refused before a replay file is written for it; by sim, mutants
// (--exec and --variant) and driver selftest alike.
func TestExecCommandLineIsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for cmdline, want := range map[string]string{
		`python3 "x`:                        "is not a valid shell command line",
		`no-such-program-9f3a --x`:          `program "no-such-program-9f3a" not found in PATH`,
		`/no/such/dir/coordinator`:          "program /no/such/dir/coordinator: no such file or directory",
		`FOO=1 exec no-such-program-9f3a`:   `program "no-such-program-9f3a" not found in PATH`,
		`no-such-program-9f3a && echo done`: `program "no-such-program-9f3a" not found in PATH`,
	} {
		code, out, errOut := invoke(t, nil, "sim", "--exec", cmdline, "--seeds", "1", "--workspaces", "1", "--duration", "10m", "--replay-dir", dir)
		requireUsageLine(t, code, out, errOut, want)
	}
	// The same for every command that starts a child: mutants (--exec
	// and each --variant) and driver selftest.
	for _, args := range [][]string{
		{"mutants", "--exec", `python3 "x`, "--variant", "a=true"},
		{"mutants", "--exec", "true", "--variant", `a=python3 "x`},
		{"mutants", "--exec", "no-such-program-9f3a", "--variant", "a=true"},
		{"mutants", "--exec", "true", "--variant", "a=no-such-program-9f3a"},
		{"driver", "selftest", "--exec", `python3 "x`},
		{"driver", "selftest", "--exec", "no-such-program-9f3a"},
	} {
		code, out, errOut := invoke(t, nil, args...)
		want := "is not a valid shell command line"
		if strings.Contains(strings.Join(args, " "), "no-such") {
			want = `program "no-such-program-9f3a" not found in PATH`
		}
		requireUsageLine(t, code, out, errOut, want)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no replay file was written")
	// A builtin, or a program named through an expansion, is the shell's.
	require.NoError(t, checkExec(`cd /tmp && ./run`))
	require.NoError(t, checkExec(`$HOME/bin/coordinator`))
	require.NoError(t, checkExec(`sh -c 'echo "x"'`))
}

// Output files are checked before a run, not after it (issue 23: --junit
// or --html naming a directory failed once the whole run was done).
func TestOutputsAreCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sim", "--junit", dir},
		{"sim", "--html", dir},
		{"sim", "--junit", filepath.Join(dir, "no", "such", "dir", "x.xml")},
		{"oracle", "sim", "--junit", dir},
		{"oracle", "sim", "--html", dir},
		{"oracle", "replay", "--html", dir, filepath.Join(dir, "whatever.json")},
		{"oracle", "mutants", "--junit", dir},
		{"oracle", "conform", "--daemon", "no-such-daemon-9f3a", "--junit", dir},
		{"replay", "--html", dir, filepath.Join(dir, "whatever.json")},
	} {
		code, out, errOut := invoke(t, nil, args...)
		want := "is a directory"
		if strings.Contains(strings.Join(args, " "), "no/such") {
			want = "cannot be created"
		}
		requireUsageLine(t, code, out, errOut, want)
	}
	// A file that can be written is left as it was.
	path := filepath.Join(dir, "out.xml")
	require.NoError(t, checkWritable("--junit", path))
	require.NoFileExists(t, path)
	require.NoError(t, os.WriteFile(path, []byte("kept"), 0o644))
	require.NoError(t, checkWritable("--junit", path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "kept", string(b))
}
