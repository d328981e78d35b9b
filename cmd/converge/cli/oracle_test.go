package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/record"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/sim/engine/chart/charttest"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

func TestOracleHelp(t *testing.T) {
	code, out, _ := invoke(t, nil, "oracle", "--help")
	require.Equal(t, ExitOK, code)
	for _, c := range []string{"sim", "replay", "mutants"} {
		require.Contains(t, out, c)
	}
	_, simHelp, _ := invoke(t, nil, "oracle", "sim", "--help")
	for _, f := range []string{"--seed", "--seeds", "--requests", "--duration", "--quiet", "--faults", "--ops", "--pool-size",
		"--mutant", "--jobs", "--json", "--junit", "--replay-dir", "--stop-at-first-failure", "--min-exercised", "--seed-budget",
		"--allow-unexercised", "5 an obligation unmet", "--shrink", "--no-shrink", "--shrink-budget", "--shrink-seeds", "--shard", "--steer"} {
		require.Contains(t, simHelp, f, "help explains %s", f)
	}
}

func TestOracleSimJSONAndJUnit(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "oracle.xml")
	code, out, errOut := invoke(t, nil, "oracle", "sim", "--seeds", "3", "--seed-budget", "3", "--json", "--junit", junit, "--replay-dir", dir)
	require.Equal(t, ExitUnmet, code, "three seeds leave obligations unmet: %s", errOut)
	var rep oracleSimReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "reference", rep.System)
	require.Len(t, rep.Runs, 3)
	require.Equal(t, 3, rep.Passed)
	for i, r := range rep.Runs {
		require.Equal(t, uint64(i+1), r.Seed)
		require.True(t, r.Pass)
		require.Len(t, r.Hash, 2*record.HashSize)
	}
	require.Equal(t, "pass", rep.Verdicts["o17-wire"])
	require.Positive(t, rep.Runs[0].Exercised["o17-wire"])
	require.NotEmpty(t, rep.Coverage.Unmet)
	for _, n := range rep.Coverage.Unmet {
		require.Contains(t, []string{"not exercised", "unmet"}, rep.Verdicts[n])
	}
	// O5's obligation has four parts (DR613): each counted, and the run
	// unmet while one is missing.
	o5, ok := rep.Coverage.Standing("o5-submit-retries")
	require.True(t, ok)
	require.Equal(t, []string{"code 32", "code 11", "code 13", "code 19"}, o5.Parts)
	require.Len(t, o5.PartCounts, 4)
	require.Equal(t, len(o5.Missing) > 0 || o5.Exercised < rep.Coverage.Min, slices.Contains(rep.Coverage.Unmet, "o5-submit-retries"))
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites engine.JUnitSuites
	require.NoError(t, xml.Unmarshal(raw, &suites))
	require.Len(t, suites.Suites, 4, "a suite per seed and the run's")
	require.Zero(t, suites.Suites[0].Failures)
	require.Equal(t, len(rep.Coverage.Unmet), suites.Suites[3].Failures, "an unmet obligation fails the run's suite")

	// The same seeds give the same hashes whatever --jobs.
	code, again, _ := invoke(t, nil, "oracle", "sim", "--seeds", "3", "--seed-budget", "3", "--json", "--jobs", "1", "--replay-dir", dir)
	require.Equal(t, ExitUnmet, code)
	var rep2 oracleSimReport
	require.NoError(t, json.Unmarshal([]byte(again), &rep2))
	for i := range rep.Runs {
		require.Equal(t, rep.Runs[i].Hash, rep2.Runs[i].Hash)
	}
}

// oracle sim takes converge sim's --shard and --steer: a shard runs every
// n-th seed of the range, each as the whole range runs it; a steering is
// forced on every seed and the run's own steering is off.
func TestOracleSimShardAndSteer(t *testing.T) {
	args := []string{"oracle", "sim", "--seeds", "4", "--seed-budget", "4", "--requests", "3", "--duration", "2m", "--quiet", "1m",
		"--json", "--replay-dir", t.TempDir()}
	all := invokeJSON[oracleSimReport](t, ExitUnmet, args...)
	shard := invokeJSON[oracleSimReport](t, ExitUnmet, append(args, "--shard", "2/2")...)
	require.Equal(t, "2/2", shard.Shard)
	require.Len(t, shard.Runs, 2)
	for i, r := range shard.Runs {
		require.Equal(t, all.Runs[2*i+1].Seed, r.Seed)
		require.Equal(t, all.Runs[2*i+1].Hash, r.Hash, "a seed runs the same in a shard")
	}

	steered := invokeJSON[oracleSimReport](t, ExitUnmet, append(args, "--steer", "F1,crowd")...)
	require.Len(t, steered.Runs, 4)
	for _, r := range steered.Runs {
		require.NotNil(t, r.Steering, "seed %d", r.Seed)
		require.Equal(t, []string{"F1", "crowd"}, r.Steering.On)
	}
	require.NotEqual(t, all.Runs[0].Hash, steered.Runs[0].Hash, "the steering changes the run")

	for _, bad := range [][]string{{"--steer", "F99"}, {"--shard", "3/2"}, {"--html", t.TempDir()}} {
		code, out, errOut := invoke(t, nil, append([]string{"oracle", "sim"}, bad...)...)
		require.Equal(t, ExitUsage, code, "%v: %s", bad, errOut)
		require.Empty(t, out)
	}
}

// TestOracleMutantFailsAndReplays: a mutant's seed fails with exit 1 and
// writes a replay file; replaying it reproduces the hash and the
// violation; the workspace replay command refuses it.
func TestOracleMutantFailsAndReplays(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := invoke(t, nil, "oracle", "sim", "--mutant", "nonce-not-plus-one", "--seeds", "1", "--seed-budget", "1", "--replay-dir", dir)
	require.Equal(t, ExitFailed, code)
	require.Contains(t, out, "FAIL")
	require.Contains(t, out, "o2-nonce-bounds")
	require.Contains(t, out, "converge oracle replay ")
	path := filepath.Join(dir, "oracle-mutant-nonce-not-plus-one-seed-1.json")
	require.FileExists(t, path)

	code, out, errOut := invoke(t, nil, "oracle", "replay", path)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "reproduced")
	require.Contains(t, out, "O2 (o2-nonce-bounds)")

	code, out, _ = invoke(t, nil, "oracle", "replay", "--json", path)
	require.Equal(t, ExitOK, code)
	var rep oracleReplayReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.HashMatches)
	require.False(t, rep.Pass)
	require.NotEmpty(t, rep.Timeline)

	code, _, errOut = invoke(t, nil, "replay", path)
	require.Equal(t, ExitUsage, code, errOut)
}

// A failing oracle seed is shrunk by default, as converge sim's is:
// within --shrink-budget runs, for the first --shrink-seeds failing seeds,
// to a smaller run that still fails and replays; --no-shrink and its
// kin write the replay file as the seed failed.
func TestOracleSimShrinksFailingSeedsByDefault(t *testing.T) {
	args := []string{"oracle", "sim", "--mutant", "nonce-not-plus-one", "--seeds", "2", "--seed-budget", "2", "--jobs", "1"}
	replay := func(dir string, seed int) *oraclesim.Replay {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("oracle-mutant-nonce-not-plus-one-seed-%d.json", seed)))
		require.NoError(t, err)
		f, err := oraclesim.DecodeReplay(bytes.NewReader(b))
		require.NoError(t, err)
		return f
	}

	dir := t.TempDir()
	rep := invokeJSON[oracleSimReport](t, ExitFailed, append(args, "--replay-dir", dir, "--shrink-seeds", "1", "--json")...)
	require.Len(t, rep.Runs, 2)
	first := requireShrunkFirstOnly(t, rep.Runs[0].Shrunk, rep.Runs[1].Shrunk)
	require.Equal(t, "4 requests, 8 faults, 6 ops, 6m0s + 4m0s quiet", first.From)
	shrunk := replay(dir, 1)
	require.Less(t, shrunk.Requests+shrunk.Faults+shrunk.Ops, 4+8+6)
	require.Contains(t, shrunk.Violations[0], "o2-nonce-bounds", "the shrunk run fails the checker the seed failed")
	require.Equal(t, 8, replay(dir, 2).Faults, "beyond --shrink-seeds, written as it failed")
	code, out, errOut := invoke(t, nil, "oracle", "replay", rep.Runs[0].ReplayFile)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "reproduced")
	require.Contains(t, out, "O2 (o2-nonce-bounds)")

	// The same command writes the same files: shrinking counts runs,
	// not time.
	again := t.TempDir()
	code, _, _ = invoke(t, nil, append(args, "--replay-dir", again, "--shrink-seeds", "1")...)
	require.Equal(t, ExitFailed, code)
	require.Equal(t, shrunk, replay(again, 1))

	// The text report says what shrinking did.
	code, out, _ = invoke(t, nil, append(args, "--replay-dir", t.TempDir(), "--shrink-budget", "5")...)
	require.Equal(t, ExitFailed, code)
	require.Regexp(t, `shrunk: 4 requests, 8 faults, 6 ops, 6m0s \+ 4m0s quiet → .* \([1-5] runs, `, out)

	for _, off := range [][]string{{"--no-shrink"}, {"--shrink=false"}, {"--shrink-budget", "0"}, {"--shrink-seeds", "0"}} {
		dir := t.TempDir()
		code, out, _ := invoke(t, nil, append(append(args, "--replay-dir", dir), off...)...)
		require.Equal(t, ExitFailed, code, off)
		require.NotContains(t, out, "shrunk", off)
		require.Equal(t, 4, replay(dir, 1).Requests, off)
		require.Equal(t, 8, replay(dir, 1).Faults, off)
	}
}

func TestOracleReplayRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	// Unshrunk, the file has the command's shape, which the edits below
	// name.
	code, _, _ := invoke(t, nil, "oracle", "sim", "--mutant", "six-significant-digits", "--seeds", "1", "--replay-dir", dir, "--no-shrink")
	require.Equal(t, ExitFailed, code)
	raw, err := os.ReadFile(filepath.Join(dir, "oracle-mutant-six-significant-digits-seed-1.json"))
	require.NoError(t, err)
	hash := regexp.MustCompile(`"hash": "[0-9a-f]+"`).FindString(string(raw))
	require.NotEmpty(t, hash)
	edit := func(name, from, to string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		require.Contains(t, string(raw), from)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(raw), from, to, 1)), 0o644))
		return p
	}
	for name, path := range map[string]string{
		"missing":        filepath.Join(dir, "missing.json"),
		"unknown field":  edit("field.json", `"requests"`, `"reqests"`),
		"other world":    edit("world.json", `"world": "oracle"`, `"world": "workspace"`),
		"bad version":    edit("version.json", `"version": 1`, `"version": 9`),
		"unknown mutant": edit("mutant.json", `"mutant": "six-significant-digits"`, `"mutant": "zzz"`),
		"contradiction":  edit("contra.json", `"system": "mutant:six-significant-digits"`, `"system": "reference"`),
		"bad duration":   edit("dur.json", `"fault_phase": "6m0s"`, `"fault_phase": "soon"`),
		"huge":           edit("huge.json", `"requests": 4`, `"requests": 4000`),
		// What converge never writes (issue 23: every field is checked,
		// not read as a default or as another run): no requests, a
		// count neither -1 (none) nor positive, a hash that is none.
		"no requests": edit("req0.json", `"requests": 4`, `"requests": 0`),
		"faults 0":    edit("faults0.json", `"faults": 8`, `"faults": 0`),
		"faults -5":   edit("faults5.json", `"faults": 8`, `"faults": -5`),
		"ops -2":      edit("ops.json", `"ops": 6`, `"ops": -2`),
		"no phase":    edit("phase.json", `"quiet_phase": "4m0s"`, `"quiet_phase": "0s"`),
		"hash zz":     edit("hashzz.json", hash, `"hash": "zz"`),
	} {
		code, out, errOut := invoke(t, nil, "oracle", "replay", path)
		require.Equal(t, ExitUsage, code, "%s: %s", name, errOut)
		require.Empty(t, out, name)
		require.Len(t, strings.Split(strings.TrimSpace(errOut), "\n"), 2, "one line and the pointer to --help: %s", errOut)
	}
	// A file whose hash is not the run's does not reproduce: exit 1.
	code, out, _ := invoke(t, nil, "oracle", "replay", edit("hash.json", hash, `"hash": "`+strings.Repeat("0", 32)+`"`))
	require.Equal(t, ExitFailed, code)
	require.Contains(t, out, "NOT REPRODUCED")
	require.NotContains(t, out, oldHashNote)
	// A file written before history hashes became XXH3-128 says so.
	old := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(old, regexp.MustCompile(`"hash": "[0-9a-f]+"`).ReplaceAll(raw,
		[]byte(`"hash": "`+strings.Repeat("ab", 32)+`"`)), 0o644))
	code, out, _ = invoke(t, nil, "oracle", "replay", old)
	require.Equal(t, ExitFailed, code)
	require.Contains(t, out, oldHashNote)
}

// oracleMutantsJSON runs converge oracle mutants ARGS --json, which must
// exit 0, and decodes its report.
func oracleMutantsJSON(t *testing.T, args ...string) oracleMutantsReport {
	t.Helper()
	code, out, errOut := invoke(t, nil, append(append([]string{"oracle", "mutants"}, args...), "--json")...)
	require.Equal(t, ExitOK, code, errOut)
	var rep oracleMutantsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

func TestOracleMutantsCommand(t *testing.T) {
	rep := oracleMutantsJSON(t, "--mutant", "pool-limit-ignored")
	require.Len(t, rep.Mutants, 1)
	require.True(t, rep.Mutants[0].Killed)
	require.Contains(t, rep.Mutants[0].Checkers, "o7-concurrency")

	// Given too few seeds a mutant survives: exit 1.
	code, out, _ := invoke(t, nil, "oracle", "mutants", "--mutant", "code-13-retried", "--seeds", "1")
	require.Equal(t, ExitFailed, code)
	require.Contains(t, out, "SURVIVED")
}

// The oracle kill matrix takes converge mutants' --shrink-budget and
// --save: a kill shrunk within the budget still fails the checker that
// killed it, and its replay file replays it.
func TestOracleMutantsShrinkAndSave(t *testing.T) {
	dir := t.TempDir()
	rep := oracleMutantsJSON(t, "--only", "nonce-not-plus-one", "--seeds", "3", "--shrink-budget", "8", "--save", dir)
	require.Len(t, rep.Mutants, 1)
	k := rep.Mutants[0]
	require.True(t, k.Killed)
	require.Equal(t, "ports", k.Kind)
	require.Equal(t, []string{"o2-nonce-bounds"}, k.Expected)
	require.Contains(t, k.Violation, "O2 (o2-nonce-bounds)")
	require.NotNil(t, k.Shrunk, "shrunk within the budget")
	require.LessOrEqual(t, k.ShrinkRuns, 8)
	require.FileExists(t, k.ReplayFile)
	code, out, errOut := invoke(t, nil, "oracle", "replay", k.ReplayFile)
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "reproduced")
	require.Contains(t, out, "O2 (o2-nonce-bounds)")
}

// TestOracleSourceMutants: a source mutant is built from the edited
// source and killed; without a go command it is skipped, not killed; a
// mutant that needs opt-in world options gets them.
func TestOracleSourceMutants(t *testing.T) {
	rep := oracleMutantsJSON(t, "--mutant", "success-leaves-job-pending", "--seeds", "3")
	require.Len(t, rep.Mutants, 1)
	k := rep.Mutants[0]
	require.Equal(t, "source", k.Kind)
	require.True(t, k.Killed, "%+v", k)
	require.Contains(t, k.Checkers, "o3-execution-timing")

	// A former known gap of the world, closed by its world options: caught
	// on its first killing seed.
	code, out, errOut := invoke(t, nil, "oracle", "mutants", "--mutant", "stale-result-broadcast", "--seed", "15", "--seeds", "1")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, "o2-nonce-bounds")
	require.NotContains(t, out, "known gap")

	code, out, errOut = invoke(t, nil, "oracle", "mutants", "--list", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var list struct {
		Mutants []mutantEntry `json:"mutants"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list.Mutants, len(oracleMutantNames()))
	kinds := map[string]int{}
	for _, e := range list.Mutants {
		kinds[e.Kind]++
	}
	require.Equal(t, map[string]int{"ports": len(oraclemutants.All()), "source": len(oraclemutants.Sources())}, kinds,
		"every mutant of both catalogues is listed, by its kind")

	t.Setenv("PATH", "")
	code, out, errOut = invoke(t, nil, "oracle", "mutants", "--mutant", "success-leaves-job-pending", "--json")
	require.Equal(t, ExitOK, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.False(t, rep.Mutants[0].Killed)
	require.Contains(t, rep.Mutants[0].Skipped, "no go command on PATH")
}

func TestOracleUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"oracle", "sim", "--requests", "0"},
		{"oracle", "sim", "--duration", "1s"},
		{"oracle", "sim", "--mutant", "zzz"},
		{"oracle", "sim", "--seeds", "0"},
		{"oracle", "sim", "--allow-unexercised", "o99-nothing"},
		{"oracle", "sim", "--allow-unexercised", "o5-submit-retries: code 99"},
		{"oracle", "sim", "--min-exercised", "-1"},
		{"oracle", "sim", "--faults", "-1"},
		{"oracle", "mutants", "--mutant", "zzz"},
		{"oracle", "sim", "--mutant", "success-leaves-job-pending"},
		{"oracle", "replay"},
		{"oracle", "sim", "extra"},
		{"oracle", "sim", "--shrink", "--no-shrink"},
		{"oracle", "sim", "--shrink-budget", "-1"},
		{"oracle", "sim", "--shrink-seeds", "-1"},
	} {
		code, out, errOut := invoke(t, nil, args...)
		require.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		require.Empty(t, out, "%v", args)
	}
}

// oracle sim --html draws the first failing seed's page, and oracle
// replay --html the replayed run's: the same page, the same first
// violation.
func TestOracleSimAndReplayDrawTheTimeline(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "sim.html")
	code, out, errOut := invoke(t, nil, "oracle", "sim", "--mutant", "no-resync-on-32", "--seeds", "3", "--seed-budget", "3",
		"--no-shrink", "--json", "--replay-dir", dir, "--html", page)
	require.Equal(t, ExitFailed, code, errOut)
	var rep oracleSimReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	i := firstFailing(rep.Runs, func(r oracleRun) bool { return r.Pass })
	require.False(t, rep.Runs[i].Pass)

	firstOf := func(path string) (string, string) {
		t.Helper()
		doc, _ := charttest.Render(t, func(w io.Writer) error {
			b, err := os.ReadFile(path)
			if err == nil {
				_, err = w.Write(b)
			}
			return err
		})
		first := charttest.Rects(doc, "first")
		require.Len(t, first, 1, path)
		return charttest.Attr(first[0].Parent.Parent, "data-subject"), charttest.Text(doc)
	}
	subject, text := firstOf(page)
	require.Contains(t, text, fmt.Sprintf("seed %d", rep.Runs[i].Seed))

	replayed := filepath.Join(dir, "replay.html")
	code, _, errOut = invoke(t, nil, "oracle", "replay", "--html", replayed, rep.Runs[i].ReplayFile)
	require.Equal(t, ExitOK, code, errOut)
	again, _ := firstOf(replayed)
	require.Equal(t, subject, again, "the replay draws the same first violation")
}
