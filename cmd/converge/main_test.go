package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/scenarios/mutants"
	"github.com/wsconverge/converge/sim"
)

// invoke runs the command line in-process.
func invoke(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// invokeSim runs the sim command in-process against env.
func invokeSim(t *testing.T, env simEnv, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runSim(context.Background(), args, &out, &errb, env)
	return code, out.String(), errb.String()
}

func testEnv() simEnv {
	return simEnv{system: refimpl.NewSystem, mutant: lookupMutant, now: time.Now}
}

var simFlags = []string{"--seed", "--seeds", "--workspaces", "--duration", "--quiet", "--faults", "--coordinators", "--mutant", "--replay-dir", "--shrink", "--json"}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := invoke(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		require.Contains(t, out, "Commands:")
		require.Contains(t, out, "sim ")
		require.Contains(t, out, "replay ")
		require.Contains(t, out, "mutants ")
		require.Contains(t, out, "version")
		require.Empty(t, errOut)
	}
	code, viaHelp, _ := invoke(t, "help", "sim")
	require.Equal(t, exitOK, code)
	code, viaFlag, _ := invoke(t, "sim", "--help")
	require.Equal(t, exitOK, code)
	require.Equal(t, viaHelp, viaFlag)
	for _, f := range simFlags {
		require.Contains(t, viaHelp, f, "help explains %s", f)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"frobnicate"},
		{"help", "frobnicate"},
		{"sim", "--no-such-flag"},
		{"sim", "--seeds", "0"},
		{"sim", "--workspaces", "0"},
		{"sim", "--duration", "-1h"},
		{"sim", "--duration", "soon"},
		{"sim", "--coordinators", "0"},
		{"sim", "--faults", "meteor"},
		{"sim", "--quiet", "-1m"},
		{"sim", "--mutant", "no-such-mutant"},
		{"mutants", "--seeds", "0"},
		{"mutants", "extra"},
		{"replay"},
		{"sim", "--seed", "-3"},
		{"sim", "extra"},
		{"version", "extra"},
	}
	for _, args := range cases {
		code, out, errOut := invoke(t, args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Empty(t, out, "%v: usage goes to stderr", args)
		require.Contains(t, errOut, "Usage", "%v", args)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := invoke(t, "version")
	require.Equal(t, exitOK, code)
	require.True(t, strings.HasPrefix(out, "converge "), out)
	require.Contains(t, out, "go1.")
}

func TestSimTextReport(t *testing.T) {
	code, out, errOut := invokeSim(t, testEnv(), "--seed", "7", "--seeds", "2", "--workspaces", "3", "--duration", "2h", "--quiet", "0", "--faults", "none")
	require.Equal(t, exitOK, code, out+errOut)
	require.Empty(t, errOut, "no progress when stderr is not a terminal")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3+1+len(invariant.Names()))
	require.True(t, strings.HasPrefix(lines[0], "seed 7 "), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "seed 8 "), lines[1])
	for _, l := range lines[:2] {
		require.Contains(t, l, "2.0h")
		require.Contains(t, l, "faults 0")
		require.Contains(t, l, "PROVISIONING=")
		require.Contains(t, l, "violations 0")
		require.True(t, strings.HasSuffix(l, "PASS"), l)
	}
	require.Contains(t, lines[2], "total: 2 seeds × 3 workspaces (reference)  faults none")
	require.Contains(t, lines[2], "4.0h simulated")
	require.Contains(t, lines[2], "2 passed, 0 failed")
	require.Equal(t, "checkers:", lines[3])
	require.Contains(t, out, "c1-completion-observed   C1     pass (exercised")
	require.Contains(t, out, "c12-convergence          C12    not exercised", "no quiet phase, no convergence judged")
}

func TestSimJudgesFaultsAndTheQuietPhase(t *testing.T) {
	code, out, _ := invokeSim(t, testEnv(), "--seed", "1", "--seeds", "3", "--workspaces", "6", "--duration", "12h", "--faults", "all", "--json")
	require.Equal(t, exitOK, code, out)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "all", rep.Faults)
	require.Equal(t, "1h41m", rep.Quiet)
	for _, r := range rep.Runs {
		require.Positive(t, r.FaultActions)
		require.Len(t, r.FaultKinds, len(sim.FaultKinds()))
		require.Equal(t, 12+sim.DefaultQuiet.Hours(), r.SimHours)
	}
	verdicts := map[string]string{}
	for _, c := range rep.Total.Checkers {
		verdicts[c.Name] = c.Verdict
	}
	require.Len(t, verdicts, len(invariant.Names()))
	require.Equal(t, "pass", verdicts["c12-convergence"])
	require.Equal(t, "pass", verdicts["c10-single-leader"], "crashes and depositions made new leaders")
}

func TestSimJSONReport(t *testing.T) {
	code, out, _ := invokeSim(t, testEnv(), "--seed", "3", "--seeds", "2", "--workspaces", "3", "--duration", "90m", "--quiet", "0", "--faults", "none", "--json")
	require.Equal(t, exitOK, code, out)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "reference", rep.System)
	require.Equal(t, "1h30m", rep.Duration)
	require.Equal(t, 3, rep.Workspaces)
	require.Equal(t, 2, rep.Coordinators)
	require.Len(t, rep.Runs, 2)
	require.Equal(t, uint64(3), rep.Runs[0].Seed)
	require.Equal(t, uint64(4), rep.Runs[1].Seed)
	require.NotEqual(t, rep.Runs[0].Hash, rep.Runs[1].Hash, "different seeds, different histories")
	for _, r := range rep.Runs {
		require.True(t, r.Pass)
		require.Equal(t, 1.5, r.SimHours)
		require.Positive(t, r.Ops["PROVISIONING"])
		require.Empty(t, r.Replay)
		require.Empty(t, r.ReplayFile)
	}
	require.Equal(t, 2, rep.Total.Seeds)
	require.Equal(t, 2, rep.Total.Passed)
	require.Equal(t, 3.0, rep.Total.SimHours)
	require.Equal(t, rep.Runs[0].Ops["PROVISIONING"]+rep.Runs[1].Ops["PROVISIONING"], rep.Total.Ops["PROVISIONING"])

	// The raw object has exactly the documented top-level keys.
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	require.ElementsMatch(t, []string{"system", "workspaces", "duration", "quiet", "faults", "coordinators", "runs", "total"}, keys)

	// The same seed gives the same hash.
	_, again, _ := invokeSim(t, testEnv(), "--seed", "4", "--seeds", "1", "--workspaces", "3", "--duration", "90m", "--quiet", "0", "--faults", "none", "--json")
	var rep2 simReport
	require.NoError(t, json.Unmarshal([]byte(again), &rep2))
	require.Equal(t, rep.Runs[1].Hash, rep2.Runs[0].Hash)
}

func TestSimFailureExitsOneWithReplay(t *testing.T) {
	env := testEnv()
	env.checks = []func(*sim.Sim) []string{func(s *sim.Sim) []string {
		if s.Config().Seed == 12 {
			return []string{"workspace lost its data"}
		}
		return nil
	}}
	dir := t.TempDir()
	code, out, _ := invokeSim(t, env, "--seed", "11", "--seeds", "2", "--workspaces", "2", "--duration", "1h", "--coordinators", "3", "--quiet", "0", "--faults", "none", "--replay-dir", dir)
	require.Equal(t, exitFailure, code)
	require.Contains(t, out, "FAIL seed 12: workspace lost its data")
	require.Contains(t, out, "timeline (last 40 events):")
	require.Contains(t, out, "rerun: converge sim --seed 12 --seeds 1 --workspaces 2 --duration 1h --quiet 0 --faults none --coordinators 3")
	path := filepath.Join(dir, "reference-seed-12.json")
	require.Contains(t, out, "replay: converge replay "+path)
	require.FileExists(t, path)
	require.Contains(t, out, "1 passed, 1 failed")
	require.NotContains(t, out, "FAIL seed 11")

	code, js, _ := invokeSim(t, env, "--seed", "12", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--faults", "none", "--json", "--replay-dir", dir)
	require.Equal(t, exitFailure, code)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.False(t, rep.Runs[0].Pass)
	require.Equal(t, []string{"workspace lost its data"}, rep.Runs[0].Failures)
	require.Len(t, rep.Runs[0].Timeline, sim.TailLines)
	require.Equal(t, "converge sim --seed 12 --seeds 1 --workspaces 2 --duration 1h --quiet 0 --faults none", rep.Runs[0].Replay)
	require.Equal(t, path, rep.Runs[0].ReplayFile)
	require.Equal(t, 1, rep.Total.Failed)
}

// A mutant's violations come with the timeline around their evidence and a
// replay file; converge replay reruns it exactly and shows them again.
func TestMutantViolationReplayRoundTrip(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--mutant", "no-cas-claim", "--seed", "1", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--quiet", "0", "--replay-dir", dir}
	code, out, errOut := invokeSim(t, testEnv(), args...)
	require.Equal(t, exitFailure, code, out+errOut)
	require.Contains(t, out, "VIOLATION seed 1: C4 (c4-non-preemptive) at +00:")
	require.Contains(t, out, "claim of PROVISIONING without compare-and-set")
	require.Contains(t, out, "    timeline:\n")
	require.Regexp(t, `\n      >> \+00:\d\d:\d\d\.\d{3} #\d+ db.write coord-1/state_reconciler`, out, "the evidence, marked, at its virtual time")
	require.Contains(t, out, "c4-non-preemptive        C4     VIOLATED in 1 seed(s)")
	path := filepath.Join(dir, "mutant-no-cas-claim-seed-1.json")
	require.Contains(t, out, "replay: converge replay "+path)

	var rout, rerr bytes.Buffer
	code = runReplay(context.Background(), []string{path}, &rout, &rerr, testEnv())
	require.Equal(t, exitFailure, code, rerr.String())
	require.Contains(t, rout.String(), "matches the recorded run")
	require.Contains(t, rout.String(), "VIOLATION seed 1: C4 (c4-non-preemptive)")
	require.Contains(t, rout.String(), "FAIL: ")

	rout.Reset()
	code = runReplay(context.Background(), []string{"--json", "--full", path}, &rout, &rerr, testEnv())
	require.Equal(t, exitFailure, code)
	var rep replayReport
	require.NoError(t, json.Unmarshal(rout.Bytes(), &rep))
	require.True(t, rep.HashMatches)
	require.Equal(t, rep.RecordedHash, rep.Hash)
	require.Equal(t, "mutant:no-cas-claim", rep.System)
	require.NotEmpty(t, rep.Violations)
	require.Greater(t, len(rep.Timeline), 50, "--full prints the whole timeline")

	// A file whose run no longer matches says so.
	f, err := sim.ReadReplay(path)
	require.NoError(t, err)
	f.Hash = strings.Repeat("0", 64)
	require.NoError(t, sim.WriteReplay(path, f))
	rout.Reset()
	code = runReplay(context.Background(), []string{path}, &rout, &rerr, testEnv())
	require.Equal(t, exitFailure, code)
	require.Contains(t, rout.String(), "HASH DIFFERS")
}

func TestReplayUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))
	for _, args := range [][]string{{}, {"a", "b"}, {filepath.Join(dir, "missing.json")}, {bad}, {"--no-such-flag"}} {
		var out, errb bytes.Buffer
		require.Equal(t, exitUsage, runReplay(context.Background(), args, &out, &errb, testEnv()), "%v", args)
		require.NotEmpty(t, errb.String())
	}
}

func TestMutantsKillMatrix(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := runMutants(context.Background(), []string{"--only", "no-cas-claim,ttl-writes-desired", "--workspaces", "3", "--duration", "4h", "--quiet", "0", "--shrink-budget", "10", "--save", dir, "--json"}, &out, &errb, testEnv())
	require.Equal(t, exitOK, code, errb.String())
	var rep mutantsReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Equal(t, 2, rep.Killed)
	require.Zero(t, rep.Survived)
	for _, m := range rep.Mutants {
		require.True(t, m.Killed, m.Name)
		require.NotZero(t, m.Seed)
		require.NotEmpty(t, m.Checkers)
		require.NotNil(t, m.Shrunk, m.Name)
		require.LessOrEqual(t, m.Shrunk.Workspaces, 3)
		require.FileExists(t, m.ReplayFile)
	}
	require.Equal(t, []string{"c4-non-preemptive"}, rep.Mutants[0].Checkers)
	require.Equal(t, []string{"c3-single-writer"}, rep.Mutants[1].Checkers)
	require.Positive(t, rep.MaxSeconds)

	out.Reset()
	code = runMutants(context.Background(), []string{"--only", "no-cas-claim", "--workspaces", "2", "--duration", "2h", "--quiet", "0", "--shrink-budget", "0"}, &out, &errb, testEnv())
	require.Equal(t, exitOK, code)
	text := out.String()
	require.Contains(t, text, "no-cas-claim                 C4     killed")
	require.Regexp(t, `no-cas-claim\s+(\. +)+X`, text, "the matrix marks the checker")
	require.Contains(t, text, "1 mutants: 1 killed (1 by the random search, 0 only by the stored corpus), 0 survived")
}

// A mutant the search does not kill within its budget falls back to its
// stored counterexample, and the report says so.
func TestMutantsFallBackToTheCorpus(t *testing.T) {
	var out, errb bytes.Buffer
	code := runMutants(context.Background(), []string{"--only", "gc-ignores-op-id", "--seeds", "1", "--workspaces", "1", "--duration", "1h", "--quiet", "0", "--json"}, &out, &errb, testEnv())
	require.Equal(t, exitOK, code, errb.String())
	var rep mutantsReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Len(t, rep.Mutants, 1)
	m := rep.Mutants[0]
	require.True(t, m.Killed)
	require.True(t, m.ByCorpus, "one 1-workspace hour does not kill it: the corpus does")
	require.Equal(t, 1, m.Seeds)
	require.Equal(t, []string{"c9-gc-protection"}, m.Checkers)
	require.Zero(t, rep.MaxSeconds, "a corpus kill is no time to kill")

	out.Reset()
	require.Equal(t, exitOK, runMutants(context.Background(), []string{"--list"}, &out, &errb, testEnv()))
	require.Equal(t, len(mutants.Catalogue()), strings.Count(out.String(), "\n"))
	require.Equal(t, exitUsage, runMutants(context.Background(), []string{"--only", "no-such-mutant"}, &out, &errb, testEnv()))
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour:          "24h",
		90 * time.Minute:        "1h30m",
		90 * time.Second:        "1m30s",
		time.Hour + time.Second: "1h0m1s",
		1500 * time.Millisecond: "1.5s",
	} {
		require.Equal(t, want, shortDuration(d))
	}
}

// The whole kill matrix, as `converge mutants` runs it: every mutant of
// the catalogue is killed (by the random search, or, failing that within
// the budget, by its stored counterexample).
func TestEveryMutantIsKilled(t *testing.T) {
	var out, errb bytes.Buffer
	code := runMutants(context.Background(), []string{"--shrink-budget", "0", "--json"}, &out, &errb, testEnv())
	require.Equal(t, exitOK, code, errb.String())
	var rep mutantsReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Len(t, rep.Mutants, len(mutants.Catalogue()))
	require.Zero(t, rep.Survived)
	byCorpus := 0
	for _, m := range rep.Mutants {
		require.True(t, m.Killed, m.Name)
		require.NotEmpty(t, m.Checkers, m.Name)
		if m.ByCorpus {
			byCorpus++
		}
	}
	require.LessOrEqual(t, byCorpus, 2, "the random search must kill nearly all mutants by itself")
}
