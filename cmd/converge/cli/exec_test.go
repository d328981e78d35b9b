package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

var refchild struct {
	once sync.Once
	path string
	err  error
}

// refchildBinary builds the reference served over the driver protocol,
// once per test binary.
func refchildBinary(t *testing.T) string {
	t.Helper()
	refchild.once.Do(func() {
		dir, err := os.MkdirTemp("", "converge-refchild-")
		if err != nil {
			refchild.err = err
			return
		}
		refchild.path = filepath.Join(dir, "refchild")
		out, err := exec.Command("go", "build", "-o", refchild.path, "github.com/wsconverge/converge/cmd/refchild").CombinedOutput()
		if err != nil {
			refchild.err = err
			refchild.path = string(out)
		}
	})
	require.NoError(t, refchild.err, refchild.path)
	return refchild.path
}

// --exec judges a child process; its failing seed's replay file replays
// by starting the recorded command again; --html draws the timeline.
func TestSimExecReplayAndHTML(t *testing.T) {
	bin := refchildBinary(t)
	dir := t.TempDir()
	code, out, errOut := invoke(t, nil, "sim", "--exec", bin, "--seed", "3", "--seeds", "2", "--seed-budget", "2", "--workspaces", "2",
		"--duration", "2h", "--quiet", "0", "--faults", "none", "--json", "--replay-dir", dir)
	require.Equal(t, ExitUnmet, code, "two hours without faults leave obligations unmet: %s", errOut)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "exec:"+bin, rep.System)

	// The same seeds in process record the same histories.
	_, inproc, _ := invoke(t, nil, "sim", "--seed", "3", "--seeds", "2", "--seed-budget", "2", "--workspaces", "2", "--duration", "2h", "--quiet", "0",
		"--faults", "none", "--json")
	var ref simReport
	require.NoError(t, json.Unmarshal([]byte(inproc), &ref))
	for i := range rep.Runs {
		require.Equal(t, ref.Runs[i].Hash, rep.Runs[i].Hash, "seed %d through the protocol", rep.Runs[i].Seed)
	}

	page := filepath.Join(dir, "run.html")
	code, out, errOut = invoke(t, nil, "sim", "--exec", bin+" --mutant no-cas-claim", "--seed", "1", "--seeds", "1",
		"--workspaces", "2", "--duration", "1h", "--quiet", "0", "--replay-dir", dir, "--html", page,
		"--no-shrink") // each shrinking run would start the child again: not the point here
	require.Equal(t, ExitFailed, code, out+errOut)
	require.Contains(t, out, "rerun:  converge sim --exec '"+bin+" --mutant no-cas-claim' --seed 1")
	require.Contains(t, out, "c4-non-preemptive")
	f, err := os.Open(page)
	require.NoError(t, err)
	doc, err := html.Parse(f)
	f.Close()
	require.NoError(t, err)
	require.NotNil(t, doc)
	b, _ := os.ReadFile(page)
	require.Contains(t, string(b), "c4-non-preemptive", "the first violation is on the page")

	files, err := filepath.Glob(filepath.Join(dir, "exec-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	// A replay file never runs its command unless told to.
	code, _, rerr := invoke(t, nil, "replay", files[0])
	require.Equal(t, ExitUsage, code, rerr)
	require.Contains(t, rerr, "a replay file never runs a command by itself; to run it, replay with --allow-exec")
	code, rout, rerr := invoke(t, nil, "replay", "--allow-exec", files[0])
	require.Equal(t, ExitFailed, code, rerr)
	require.Contains(t, rerr, "starting the file's command")
	require.Contains(t, rout, "matches the recorded run")
}

// mutants --exec hunts an implementation's own variants.
func TestMutantsOfAnExecutable(t *testing.T) {
	bin := refchildBinary(t)
	code, out, errOut := invoke(t, nil, "mutants", "--exec", bin, "--variant", "nocas="+bin+" --mutant no-cas-claim",
		"--variant", "writer="+bin+" --mutant non-owner-write", "--workspaces", "2", "--duration", "1h", "--quiet", "0",
		"--seeds", "5", "--shrink-budget", "0", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var rep mutantsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Mutants, 2)
	require.Equal(t, 2, rep.Killed)
	require.Equal(t, []string{"c4-non-preemptive"}, rep.Mutants[0].Checkers)
	require.Equal(t, []string{"c3-single-writer"}, rep.Mutants[1].Checkers)

	for _, args := range [][]string{
		{"mutants", "--variant", "x=y"},
		{"mutants", "--exec", bin},
		{"mutants", "--exec", bin, "--variant", "novalue"},
		{"sim", "--exec", bin, "--mutant", "no-cas-claim"},
		{"sim", "--exec", " "},
	} {
		code, _, errOut := invoke(t, nil, args...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		require.False(t, strings.Contains(errOut, "goroutine"))
	}
}
