package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// invoke runs the command line in-process, as the program "converge".
func invoke(t *testing.T, opts []Option, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb, append([]Option{WithProgram("converge")}, opts...)...)
	return code, out.String(), errb.String()
}

// invokeJSON runs the command line args, which must exit with code want,
// and decodes its --json report.
func invokeJSON[T any](t *testing.T, want int, args ...string) T {
	t.Helper()
	code, out, errOut := invoke(t, nil, args...)
	require.Equal(t, want, code, errOut)
	var rep T
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

func TestHelpForEveryCommand(t *testing.T) {
	code, out, _ := invoke(t, nil, "--help")
	require.Equal(t, ExitOK, code)
	for _, c := range []string{"sim", "replay", "mutants", "oracle", "oracled", "driver", "version", "completion"} {
		require.Contains(t, out, c)
	}
	// serve and conform are the converge binary's (package realcli): a
	// binary built with cli alone has neither (docs/decisions/architecture.md, DR370).
	require.NotRegexp(t, `\n  (serve|conform) `, out)
	for _, cmd := range []string{"sim", "replay", "mutants", "oracle", "oracled", "driver", "version"} {
		code, viaFlag, _ := invoke(t, nil, cmd, "--help")
		require.Equal(t, ExitOK, code, cmd)
		code, viaHelp, _ := invoke(t, nil, "help", cmd)
		require.Equal(t, ExitOK, code, cmd)
		require.Equal(t, viaHelp, viaFlag, cmd)
		require.Contains(t, viaFlag, "Usage:", cmd)
	}
	_, simHelp, _ := invoke(t, nil, "sim", "--help")
	for _, f := range []string{"--seed", "--seeds", "--workspaces", "--duration", "--quiet", "--faults", "--coordinators",
		"--system", "--mutant", "--replay-dir", "--shrink", "--no-shrink", "--shrink-budget", "--shrink-seeds", "--json", "--junit", "--jobs", "--shard", "--stop-at-first-failure",
		"--min-exercised", "--seed-budget", "--batch", "--allow-unexercised", "--steer", "Exit status: 0 pass, 1 a violation", "5 an obligation unmet"} {
		require.Contains(t, simHelp, f, "help explains %s", f)
	}
	for _, k := range wssim.FaultKinds() {
		require.Contains(t, simHelp, string(k))
	}
}

func TestShellCompletion(t *testing.T) {
	code, out, _ := invoke(t, nil, "completion", "bash")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "bash completion")
}

// Every usage error exits 2 with one line and a pointer to --help, never
// the whole help text.
func TestUsageErrorsAreShort(t *testing.T) {
	cases := [][]string{
		{"frobnicate"},
		{"sim", "--no-such-flag"},
		{"sim", "--seeds", "0"},
		{"sim", "--workspaces", "0"},
		{"sim", "--workspaces", "100000000"},
		{"sim", "--duration", "-1h"},
		{"sim", "--duration", "soon"},
		{"sim", "--coordinators", "0"},
		{"sim", "--faults", "meteor"},
		{"sim", "--faults", "all@NaN"},
		{"sim", "--faults", "all@Inf"},
		{"sim", "--faults", "all@1e300"},
		{"sim", "--faults", "all@-1"},
		{"sim", "--quiet", "-1m"},
		{"sim", "--mutant", "no-such-mutant"},
		{"sim", "--system", "acme"},
		{"sim", "--system", "acme", "--mutant", "no-cas-claim"},
		{"sim", "--jobs", "0"},
		{"sim", "--shard", "3/2"},
		{"sim", "--shard", "x"},
		{"sim", "--seed", "-3"},
		{"sim", "--min-exercised", "0"},
		{"sim", "--seeds", "5", "--seed-budget", "4"},
		{"sim", "--batch", "0"},
		{"sim", "--allow-unexercised", "no-such-checker"},
		{"sim", "--steer", "meteor"},
		{"sim", "--faults", "crash", "--steer", "outage"},
		{"sim", "extra"},
		{"sim", "--shrink", "--no-shrink"},
		{"sim", "--shrink-budget", "-1"},
		{"sim", "--shrink-seeds", "-1"},
		{"mutants", "--seeds", "0"},
		{"mutants", "--faults", "all@NaN"},
		{"mutants", "--only", "no-such-mutant"},
		{"mutants", "extra"},
		{"replay"},
		{"replay", "a", "b"},
		{"version", "extra"},
	}
	for _, args := range cases {
		code, out, errOut := invoke(t, nil, args...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		require.Empty(t, out, "%v: usage goes to stderr", args)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		require.LessOrEqual(t, len(lines), 2, "%v: %s", args, errOut)
		require.Contains(t, errOut, "--help' for usage", "%v", args)
		require.NotContains(t, errOut, "Flags:", "%v: not the whole help", args)
	}
}

// GNU-style flags: --flag=value, and flags after positional arguments.
func TestGNUFlags(t *testing.T) {
	code, out, errOut := invoke(t, nil, "sim", "--seed=5", "--seeds=1", "--seed-budget=1", "--workspaces=2", "--duration=1h", "--quiet=0", "--faults=none", "--json")
	require.Equal(t, ExitUnmet, code, "an hour without faults exercises too little to pass: %s", errOut)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, uint64(5), rep.Runs[0].Seed)

	dir := t.TempDir()
	_, _, _ = invoke(t, nil, "sim", "--mutant", "no-cas-claim", "--seed", "1", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--replay-dir", dir)
	path := filepath.Join(dir, "mutant-no-cas-claim-seed-1.json")
	require.FileExists(t, path)
	code, out, errOut = invoke(t, nil, "replay", path, "--json")
	require.Equal(t, ExitFailed, code, errOut)
	var rr replayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rr), "--json after the file is honoured")
}

func TestVersion(t *testing.T) {
	code, out, _ := invoke(t, nil, "version")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasPrefix(out, "converge "), out)
	require.Contains(t, out, "go1.")
	code, out, _ = invoke(t, nil, "--version")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "go1.")
}

func TestSimTextReportIsNarrowAndHasALegend(t *testing.T) {
	code, out, errOut := invoke(t, nil, "sim", "--seed", "7", "--seeds", "2", "--seed-budget", "2", "--workspaces", "3", "--duration", "2h", "--quiet", "0",
		"--faults", "none", "--jobs", "2")
	require.Equal(t, ExitUnmet, code, out+errOut)
	require.Empty(t, errOut, "no progress when stderr is not a terminal")
	for _, l := range strings.Split(out, "\n") {
		require.LessOrEqual(t, len([]rune(l)), 100, "line over 100 columns: %q", l)
	}
	require.Contains(t, out, "det says whether both runs recorded the same history")
	require.Regexp(t, `(?m)^\s+7\s+2\.0 .* ok\s+PASS$`, out)
	require.Regexp(t, `(?m)^\s+8\s+2\.0 .* ok\s+PASS$`, out)
	require.Contains(t, out, "total: 2 seeds: 2 passed, 0 failed")
	require.Contains(t, out, "seeds/min")
	require.Regexp(t, `c1-completion-observed\s+C1\s+pass\s+\d+\s+2\s+7\n`, out, "count, seeds, first seed")
	require.Regexp(t, `c12-convergence\s+C12\s+NOT EXERCISED\s+0\s+0\s+-\n\s+needs: at the end, a workspace whose desired state`, out,
		"no quiet phase, no convergence judged: its obligation is printed")
	require.Contains(t, out, "UNMET after 2 seed(s) (budget 2): c6-container-volume,")
	require.Regexp(t, `The\s+run\s+is\s+not\s+a\s+pass`, out, "wherever the list of names wraps the line")
	require.Regexp(t, `state edges: \d+ of \d+ seen; never seen: `, out)
	require.NotContains(t, out, "fault edges", "none with --faults none")
}

func TestSimJudgesFaultsAndTheQuietPhase(t *testing.T) {
	// restore-marker is allowed too: under every kind at once a restore
	// that stores its marker is rare, and seeds 1–3 record none since
	// no-answer and hold-volume joined (DR496; seeds 4–6 do). So is
	// first-step-ttl: a failover inside a TTL rule's 60 s window is rare
	// in so small a fleet, and seeds 1–3 have none (DR604).
	code, out, _ := invoke(t, nil, "sim", "--seed", "1", "--seeds", "3", "--seed-budget", "3", "--workspaces", "6", "--duration", "12h", "--faults", "all",
		"--min-exercised", "1", "--allow-unexercised", "gc-meta-with-archive,gc-deletes-orphans,timeouts,restore-marker,first-step-ttl", "--json")
	require.Equal(t, ExitOK, code, out)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "all", rep.Faults)
	require.Equal(t, shortDuration(wssim.DefaultQuiet), rep.Quiet)
	for _, r := range rep.Runs {
		require.Positive(t, r.FaultActions)
		require.Len(t, r.FaultKinds, len(wssim.FaultKinds()))
		require.Equal(t, 12+wssim.DefaultQuiet.Hours(), r.SimHours)
		require.True(t, r.Deterministic)
	}
	verdicts := map[string]string{}
	for _, c := range rep.Total.Checkers {
		verdicts[c.Name] = c.Verdict
	}
	require.Len(t, verdicts, len(wsjudge.Names()))
	require.Equal(t, "pass", verdicts["c12-convergence"])
	require.Equal(t, "pass", verdicts["c10-single-leader"], "crashes and depositions made new leaders")
}

// Seeds run in parallel give exactly the results they give one by one,
// steering included: the same seeds, steered alike, with the same
// histories and verdicts, whatever --jobs is.
func TestJobsDoNotChangeResults(t *testing.T) {
	args := []string{"sim", "--seed", "20", "--seeds", "6", "--seed-budget", "18", "--batch", "6", "--workspaces", "4", "--duration", "6h", "--json"}
	code1, one, _ := invoke(t, nil, append(args, "--jobs", "1")...)
	code2, two, _ := invoke(t, nil, append(args, "--jobs", "2")...)
	require.Equal(t, code1, code2)
	var a, b simReport
	require.NoError(t, json.Unmarshal([]byte(one), &a))
	require.NoError(t, json.Unmarshal([]byte(two), &b))
	require.Greater(t, len(a.Runs), 6, "small runs leave obligations unmet: steered seeds follow")
	require.Positive(t, a.Coverage.Steered)
	require.Len(t, b.Runs, len(a.Runs))
	for i := range a.Runs {
		require.Equal(t, a.Runs[i].Seed, b.Runs[i].Seed)
		require.Equal(t, a.Runs[i].Steering, b.Runs[i].Steering, "seed %d", a.Runs[i].Seed)
		require.Equal(t, a.Runs[i].Hash, b.Runs[i].Hash, "seed %d", a.Runs[i].Seed)
	}
	require.Equal(t, a.Coverage.Standings, b.Coverage.Standings)
	require.Equal(t, a.Coverage.Unmet, b.Coverage.Unmet)
}

func TestShardsSplitTheSeedRange(t *testing.T) {
	var seeds []uint64
	for i := 1; i <= 3; i++ {
		_, out, _ := invoke(t, nil, "sim", "--seed", "10", "--seeds", "7", "--seed-budget", "7", "--shard", strings.Join([]string{string(rune('0' + i)), "3"}, "/"),
			"--workspaces", "2", "--duration", "1h", "--quiet", "0", "--faults", "none", "--json")
		var rep simReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		for _, r := range rep.Runs {
			seeds = append(seeds, r.Seed)
		}
	}
	require.ElementsMatch(t, []uint64{10, 11, 12, 13, 14, 15, 16}, seeds)
}

func TestSimJSONReportAndJUnit(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "seeds.xml")
	code, out, _ := invoke(t, nil, "sim", "--seed", "3", "--seeds", "2", "--seed-budget", "2", "--workspaces", "3", "--duration", "90m", "--quiet", "0",
		"--faults", "none", "--allow-unexercised", "c12-convergence", "--json", "--junit", junit)
	require.Equal(t, ExitUnmet, code, out)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "reference", rep.System)
	require.Equal(t, "1h30m", rep.Duration)
	require.Len(t, rep.Runs, 2)
	require.NotEqual(t, rep.Runs[0].Hash, rep.Runs[1].Hash, "different seeds, different histories")
	for _, r := range rep.Runs {
		require.True(t, r.Pass)
		require.Equal(t, 1.5, r.SimHours)
		require.Positive(t, r.Ops["PROVISIONING"])
		require.Empty(t, r.Rerun)
	}
	require.Equal(t, 2, rep.Total.Passed)
	require.Equal(t, 3.0, rep.Total.SimHours)
	require.Positive(t, rep.Total.SeedsPerMinute)
	// The evidence: per seed, per checker, and over the run.
	require.Equal(t, 3, rep.MinExercised)
	require.Equal(t, []string{"c12-convergence"}, rep.AllowUnexercised)
	require.Positive(t, rep.Runs[0].Exercised["c1-completion-observed"])
	require.Contains(t, rep.Runs[0].Exercised, "c12-convergence")
	require.NotContains(t, rep.Coverage.Unmet, "c12-convergence", "allowed")
	require.Contains(t, rep.Coverage.Unmet, "c10-single-leader", "no faults, no failover")
	require.False(t, rep.Coverage.Met)
	conv, ok := rep.Coverage.Standing("c12-convergence")
	require.True(t, ok)
	require.Equal(t, "not exercised", string(conv.Verdict))
	require.True(t, conv.Allowed)
	require.NotEmpty(t, conv.Situation)
	pass, _ := rep.Coverage.Standing("c1-completion-observed")
	require.Equal(t, "pass", string(pass.Verdict))
	require.Equal(t, uint64(3), pass.First)
	require.Equal(t, 2, pass.Seeds)
	require.NotEmpty(t, rep.StateEdges.Seen)
	require.NotEmpty(t, rep.StateEdges.NeverSeen)
	require.Equal(t, len(wssim.StateEdges()), rep.StateEdges.Total)
	require.Zero(t, rep.FaultEdges.Total, "no fault kinds, no fault edges")

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var j engine.JUnitSuites
	require.NoError(t, xml.Unmarshal(b, &j))
	require.Len(t, j.Suites, 3, "a suite per seed, and the run's")
	require.Equal(t, 1+len(wsjudge.Names()), j.Suites[0].Tests, "the run's own case and one per checker")
	require.Zero(t, j.Suites[0].Failures)
	require.Positive(t, j.Suites[0].Skipped, "a checker not exercised in one seed is skipped there")
	run := j.Suites[2]
	require.Equal(t, len(wsjudge.Names()), run.Tests)
	require.Equal(t, len(rep.Coverage.Unmet), run.Failures, "over the run, an unmet obligation is a failure, not a skip")
	require.Equal(t, 1, run.Skipped, "only the allowed one skips")
	require.Contains(t, run.Out, "c12-convergence", "the allow-list is printed")
	for _, c := range run.Cases {
		switch c.Name {
		case "c10-single-leader":
			require.NotNil(t, c.Failure)
			require.Equal(t, "unmet", c.Failure.Type)
			require.Contains(t, c.Failure.Text, "--allow-unexercised c10-single-leader")
		case "c12-convergence":
			require.NotNil(t, c.Skipped)
			require.Contains(t, c.Skipped.Message, "allowed")
		case "c1-completion-observed":
			require.Nil(t, c.Failure)
			require.Nil(t, c.Skipped)
		}
	}
}

func TestSimFailureExitsOneWithCompleteCommands(t *testing.T) {
	check := withChecks(func(s *wssim.Sim) []string {
		if s.Config().Seed == 12 {
			return []string{"workspace lost its data"}
		}
		return nil
	})
	dir := t.TempDir()
	args := []string{"sim", "--seed", "11", "--seeds", "2", "--seed-budget", "2", "--workspaces", "2", "--duration", "1h", "--coordinators", "3", "--quiet", "0",
		"--faults", "none", "--replay-dir", dir}
	code, out, _ := invoke(t, []Option{check}, args...)
	require.Equal(t, ExitFailed, code, "a failure outranks unmet obligations")
	require.Contains(t, out, "FAIL seed 12: workspace lost its data")
	require.Contains(t, out, "rerun:  converge sim --system reference --seed 12 --seeds 1 --seed-budget 1 --workspaces 2 --duration 1h --quiet 0s --faults none --coordinators 3")
	path := filepath.Join(dir, "reference-seed-12.json")
	require.Contains(t, out, "replay: converge replay "+path)
	require.FileExists(t, path)
	require.Contains(t, out, "1 passed, 1 failed")

	// The same run again writes the same bytes and names the same file;
	// another run's file under that name is never overwritten.
	_, out, _ = invoke(t, []Option{check}, args...)
	require.Contains(t, out, "replay: converge replay "+path)
	require.NoError(t, os.WriteFile(path, []byte("another run's file\n"), 0o644))
	_, out, _ = invoke(t, []Option{check}, args...)
	require.Contains(t, out, "replay: converge replay "+filepath.Join(dir, "reference-seed-12-2.json"))
	kept, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "another run's file\n", string(kept))

	// --stop-at-first-failure: seed 13 never runs.
	code, js, _ := invoke(t, []Option{check}, "sim", "--seed", "12", "--seeds", "2", "--seed-budget", "2", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--faults", "none", "--json", "--replay-dir", dir, "--stop-at-first-failure", "--jobs", "1")
	require.Equal(t, ExitFailed, code)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.Len(t, rep.Runs, 1)
	require.Equal(t, 1, rep.Total.NotRun)
	require.Equal(t, []string{"workspace lost its data"}, rep.Runs[0].Failures)
	require.Len(t, rep.Runs[0].Timeline, wssim.TailLines)
}

// A mutant's violations come with the timeline around their evidence and a
// replay file; converge replay reruns it exactly and shows them again.
func TestMutantViolationReplayRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// Unshrunk: the point is the run as it failed (--full's whole timeline).
	code, out, errOut := invoke(t, nil, "sim", "--mutant", "no-cas-claim", "--seed", "1", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--replay-dir", dir, "--no-shrink")
	require.Equal(t, ExitFailed, code, out+errOut)
	require.NotContains(t, out, "shrunk")
	require.Contains(t, out, "VIOLATION seed 1: C4 (c4-non-preemptive) at +00:")
	require.Contains(t, out, "claim of PROVISIONING without compare-and-set")
	require.Regexp(t, `\n      >> \+00:\d\d:\d\d\.\d{3} #\d+ db.write coord-1/state_reconciler`, out, "the evidence, marked, at its virtual time")
	require.Contains(t, out, "rerun:  converge sim --mutant no-cas-claim --seed 1")
	path := filepath.Join(dir, "mutant-no-cas-claim-seed-1.json")
	require.Contains(t, out, "replay: converge replay "+path)

	code, rout, rerr := invoke(t, nil, "replay", path)
	require.Equal(t, ExitFailed, code, rerr)
	require.Contains(t, rout, "matches the recorded run")
	require.Contains(t, rout, "VIOLATION seed 1: C4 (c4-non-preemptive)")

	code, rout, _ = invoke(t, nil, "replay", "--json", "--full", path)
	require.Equal(t, ExitFailed, code)
	var rep replayReport
	require.NoError(t, json.Unmarshal([]byte(rout), &rep))
	require.True(t, rep.HashMatches)
	require.Equal(t, "mutant:no-cas-claim", rep.System)
	require.Greater(t, len(rep.Timeline), 50, "--full prints the whole timeline")

	f, err := wssim.ReadReplay(path)
	require.NoError(t, err)
	f.Hash = strings.Repeat("0", 64)
	require.NoError(t, wssim.WriteReplay(path, f))
	code, rout, _ = invoke(t, nil, "replay", path)
	require.Equal(t, ExitFailed, code)
	require.Contains(t, rout, "HASH DIFFERS")
	require.Contains(t, rout, oldHashNote, "a hash of 64 hex digits is an older converge's SHA-256")
}

// A failing seed is shrunk by default, within --shrink-budget runs and
// for the first --shrink-seeds failing seeds; --no-shrink and
// --shrink=false write the replay file as the seed failed.
func TestSimShrinksFailingSeedsByDefault(t *testing.T) {
	args := []string{"sim", "--mutant", "no-cas-claim", "--seed", "1", "--seeds", "2", "--seed-budget", "2", "--workspaces", "4", "--duration", "2h", "--quiet", "0", "--jobs", "1"}
	replay := func(dir string, seed int) *wssim.Replay {
		t.Helper()
		f, err := wssim.ReadReplay(filepath.Join(dir, fmt.Sprintf("mutant-no-cas-claim-seed-%d.json", seed)))
		require.NoError(t, err)
		return f
	}

	dir := t.TempDir()
	rep := invokeJSON[simReport](t, ExitFailed, append(args, "--replay-dir", dir, "--shrink-seeds", "1", "--json")...)
	require.Len(t, rep.Runs, 2)
	first := requireShrunkFirstOnly(t, rep.Runs[0].Shrunk, rep.Runs[1].Shrunk)
	require.Contains(t, first.From, "4 workspaces")
	shrunk := replay(dir, 1)
	require.Less(t, shrunk.Workspaces, 4)
	require.Equal(t, 4, replay(dir, 2).Workspaces, "beyond --shrink-seeds, written as it failed")
	code, _, errOut := invoke(t, nil, "replay", filepath.Join(dir, "mutant-no-cas-claim-seed-1.json"))
	require.Equal(t, ExitFailed, code, "the shrunk run still fails: %s", errOut)

	// The text report says what shrinking did.
	code, out, _ := invoke(t, nil, append(args, "--replay-dir", t.TempDir(), "--shrink-budget", "5")...)
	require.Equal(t, ExitFailed, code)
	require.Regexp(t, `shrunk: \d+ actions, 4 workspaces, 2h0m0s \+ 0s quiet → .* \([1-5] runs, `, out)

	for _, off := range [][]string{{"--no-shrink"}, {"--shrink=false"}, {"--shrink-budget", "0"}, {"--shrink-seeds", "0"}} {
		dir := t.TempDir()
		code, out, _ := invoke(t, nil, append(append(args, "--replay-dir", dir), off...)...)
		require.Equal(t, ExitFailed, code, off)
		require.NotContains(t, out, "shrunk", off)
		require.Equal(t, 4, replay(dir, 1).Workspaces, off)
	}
}

// requireShrunkFirstOnly checks what --shrink-seeds 1 did to two failing
// seeds: the first shrunk within the default budget, the second not.
func requireShrunkFirstOnly(t *testing.T, first, second *shrinkReport) *shrinkReport {
	t.Helper()
	require.NotNil(t, first, "the first failing seed is shrunk")
	require.Empty(t, first.Skipped)
	require.Positive(t, first.Runs)
	require.LessOrEqual(t, first.Runs, defaultShrinkBudget)
	require.NotEqual(t, first.From, first.To)
	require.NotNil(t, second)
	require.Equal(t, "not shrunk: --shrink-seeds 1 failing seeds already shrunk", second.Skipped)
	return first
}

// acme is a third party's system: here the reference under another name.
type acme struct{ ports.System }

func (acme) Name() string { return "acme" }

// A system registered with WithSystem is judged, and its failing seeds'
// replay files replay, by name; a binary that does not know it says so.
func TestRegisteredSystemsSimAndReplay(t *testing.T) {
	withAcme := []Option{WithSystem("acme", func() ports.System { return acme{wsref.NewSystem()} }),
		withChecks(func(*wssim.Sim) []string { return []string{"forced failure"} })}
	dir := t.TempDir()
	code, out, _ := invoke(t, withAcme, "sim", "--system", "acme", "--seed", "2", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--faults", "none", "--replay-dir", dir)
	require.Equal(t, ExitFailed, code, out)
	require.Contains(t, out, "system acme")
	require.Contains(t, out, "rerun:  converge sim --system acme --seed 2")
	path := filepath.Join(dir, "acme-seed-2.json")
	require.FileExists(t, path)

	code, rout, rerr := invoke(t, withAcme, "replay", path)
	require.Equal(t, ExitFailed, code, rerr)
	require.Contains(t, rout, "system acme")
	require.Contains(t, rout, "matches the recorded run")

	code, _, rerr = invoke(t, nil, "replay", path)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, rerr, `names system "acme", which this binary does not know`)
}

func TestReplayRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	_, _, _ = invoke(t, nil, "sim", "--mutant", "no-cas-claim", "--seed", "1", "--seeds", "1", "--workspaces", "1", "--duration", "30m", "--quiet", "0", "--replay-dir", dir, "--no-shrink")
	f, err := wssim.ReadReplay(filepath.Join(dir, "mutant-no-cas-claim-seed-1.json"))
	require.NoError(t, err)
	require.NoError(t, wssim.WriteReplay(good, f))
	raw, err := os.ReadFile(good)
	require.NoError(t, err)
	edit := func(name, from, to string) string {
		p := filepath.Join(dir, name)
		require.Contains(t, string(raw), from)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(raw), from, to, 1)), 0o644))
		return p
	}
	cases := map[string]string{
		"missing":        filepath.Join(dir, "missing.json"),
		"truncated":      edit("trunc.json", `"plan"`, `"plan`),
		"unknown field":  edit("field.json", `"workspaces"`, `"wrokspaces"`),
		"huge fleet":     edit("fleet.json", `"workspaces": 1`, `"workspaces": 1e12`),
		"contradiction":  edit("contra.json", `"system": "mutant:no-cas-claim"`, `"system": "reference"`),
		"unknown mutant": edit("mutant.json", `"mutant": "no-cas-claim"`, `"mutant": "zzz"`),
		"other world":    edit("world.json", `"world": "workspace"`, `"world": "oracle"`),
		"bad fault rate": edit("rate.json", `"faults": "swarm"`, `"faults": "all@NaN"`),
		"bad version":    edit("version.json", `"version": 2`, `"version": 99`),
	}
	for name, path := range cases {
		code, out, errOut := invoke(t, nil, "replay", path)
		require.Equal(t, ExitUsage, code, "%s: %s", name, errOut)
		require.Empty(t, out, name)
		require.LessOrEqual(t, len(strings.Split(strings.TrimSpace(errOut), "\n")), 2, "%s: %s", name, errOut)
		require.NotContains(t, errOut, "goroutine", name)
	}
}

func TestMutantsKillMatrix(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := invoke(t, nil, "mutants", "--only", "no-cas-claim,ttl-writes-desired", "--workspaces", "3", "--duration", "4h", "--quiet", "0", "--shrink-budget", "10", "--save", dir, "--json")
	require.Equal(t, ExitOK, code, errOut)
	var rep mutantsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, 2, rep.Killed)
	require.Zero(t, rep.Survived)
	for _, m := range rep.Mutants {
		require.True(t, m.Killed, m.Name)
		require.NotZero(t, m.Seed)
		require.NotNil(t, m.Shrunk, m.Name)
		require.LessOrEqual(t, m.Shrunk.Workspaces, 3)
		require.FileExists(t, m.ReplayFile)
	}
	require.Equal(t, "no-cas-claim", rep.Mutants[0].Name, "rows in catalogue order whatever the jobs")
	require.Equal(t, []string{"c4-non-preemptive"}, rep.Mutants[0].Checkers)
	require.Equal(t, []string{"c3-single-writer"}, rep.Mutants[1].Checkers)

	junit := filepath.Join(dir, "mutants.xml")
	code, out, _ = invoke(t, nil, "mutants", "--mutant", "no-cas-claim", "--workspaces", "2", "--duration", "2h", "--quiet", "0", "--shrink-budget", "0",
		"--junit", junit)
	require.Equal(t, ExitOK, code)
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites engine.JUnitSuites
	require.NoError(t, xml.Unmarshal(raw, &suites))
	require.Len(t, suites.Suites, 1)
	require.Equal(t, 1, suites.Suites[0].Tests)
	require.Zero(t, suites.Suites[0].Failures)
	require.Equal(t, "mutants.ports", suites.Suites[0].Cases[0].Classname)
	require.Contains(t, out, "no-cas-claim                 C4     killed")
	require.Regexp(t, `no-cas-claim\s+(\. +)+X`, out, "the matrix marks the checker")
	require.Contains(t, out, "1 mutants: 1 killed (1 by the random search, 0 only by the stored corpus), 0 survived")
}

// A mutant the search does not kill within its budget falls back to its
// stored counterexample, and the report says so.
func TestMutantsFallBackToTheCorpus(t *testing.T) {
	code, out, errOut := invoke(t, nil, "mutants", "--only", "gc-ignores-op-id", "--seeds", "1", "--workspaces", "1", "--duration", "1h", "--quiet", "0", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var rep mutantsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	m := rep.Mutants[0]
	require.True(t, m.Killed)
	require.True(t, m.ByCorpus, "one 1-workspace hour does not kill it: the corpus does")
	// It deletes an archive its op_id protects, with no orphan timer: C9's
	// protection and 4.5's due pass both flag it.
	require.Equal(t, []string{"c9-gc-protection", "gc-deletes-when-due"}, m.Checkers)
	require.Zero(t, rep.MaxSeconds, "a corpus kill is no time to kill")

	code, out, _ = invoke(t, nil, "mutants", "--list")
	require.Equal(t, ExitOK, code)
	require.Equal(t, len(wsmutants.Catalogue()), strings.Count(out, "\n"))
}

func TestShortDurationAndQuoting(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s",
		time.Hour + time.Second: "1h0m1s", 1500 * time.Millisecond: "1.5s", 0: "0s",
	} {
		require.Equal(t, want, shortDuration(d))
	}
	require.Equal(t, "plain/path-1.json", shellQuote("plain/path-1.json"))
	require.Equal(t, `'it'\''s here'`, shellQuote("it's here"))
	require.Equal(t, "''", shellQuote(""))
}

// The whole kill matrix, as `converge mutants` runs it: every mutant of
// the catalogue is killed (by the random search, or, failing that within
// the budget, by its stored counterexample).
func TestEveryMutantIsKilled(t *testing.T) {
	code, out, errOut := invoke(t, nil, "mutants", "--shrink-budget", "0", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var rep mutantsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Mutants, len(wsmutants.Catalogue()))
	require.Zero(t, rep.Survived)
	byCorpus := 0
	for _, m := range rep.Mutants {
		require.True(t, m.Killed, m.Name)
		if m.ByCorpus {
			byCorpus++
		}
	}
	require.LessOrEqual(t, byCorpus, 2, "the random search must kill nearly all mutants by itself")
}

// A third party's binary names itself in usage errors and help.
func TestUsageNamesTheBinary(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"sim", "--nope"}, &out, &errb, WithProgram("/opt/bin/acme-converge"))
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errb.String(), "Run 'acme-converge sim --help' for usage.")
	code = Run(context.Background(), []string{"--help"}, &out, &errb, WithProgram("go run example.com/acme/cmd/acme-converge"))
	require.Equal(t, ExitOK, code)
	require.Contains(t, out.String(), "converge [command]")
}
