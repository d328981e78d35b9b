package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/refimpl"
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
	return simEnv{system: refimpl.NewSystem, now: time.Now}
}

var simFlags = []string{"--seed", "--seeds", "--workspaces", "--duration", "--coordinators", "--json"}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := invoke(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		require.Contains(t, out, "Commands:")
		require.Contains(t, out, "sim ")
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
	code, out, errOut := invokeSim(t, testEnv(), "--seed", "7", "--seeds", "2", "--workspaces", "3", "--duration", "2h")
	require.Equal(t, exitOK, code, out+errOut)
	require.Empty(t, errOut, "no progress when stderr is not a terminal")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "seed 7 "), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "seed 8 "), lines[1])
	for _, l := range lines[:2] {
		require.Contains(t, l, "2.0h")
		require.Contains(t, l, "PROVISIONING=")
		require.True(t, strings.HasSuffix(l, "PASS"), l)
	}
	require.Contains(t, lines[2], "total: 2 seeds × 3 workspaces (reference)")
	require.Contains(t, lines[2], "4.0h simulated")
	require.Contains(t, lines[2], "2 passed, 0 failed")
}

func TestSimJSONReport(t *testing.T) {
	code, out, _ := invokeSim(t, testEnv(), "--seed", "3", "--seeds", "2", "--workspaces", "3", "--duration", "90m", "--json")
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
	require.ElementsMatch(t, []string{"system", "workspaces", "duration", "coordinators", "runs", "total"}, keys)

	// The same seed gives the same hash.
	_, again, _ := invokeSim(t, testEnv(), "--seed", "4", "--seeds", "1", "--workspaces", "3", "--duration", "90m", "--json")
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
	code, out, _ := invokeSim(t, env, "--seed", "11", "--seeds", "2", "--workspaces", "2", "--duration", "1h", "--coordinators", "3")
	require.Equal(t, exitFailure, code)
	require.Contains(t, out, "FAIL seed 12: workspace lost its data")
	require.Contains(t, out, "timeline (last 40 events):")
	require.Contains(t, out, "replay: converge sim --seed 12 --seeds 1 --workspaces 2 --duration 1h --coordinators 3")
	require.Contains(t, out, "1 passed, 1 failed")
	require.NotContains(t, out, "FAIL seed 11")

	code, js, _ := invokeSim(t, env, "--seed", "12", "--seeds", "1", "--workspaces", "2", "--duration", "1h", "--json")
	require.Equal(t, exitFailure, code)
	var rep simReport
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.False(t, rep.Runs[0].Pass)
	require.Equal(t, []string{"workspace lost its data"}, rep.Runs[0].Failures)
	require.Len(t, rep.Runs[0].Timeline, sim.TailLines)
	require.Equal(t, "converge sim --seed 12 --seeds 1 --workspaces 2 --duration 1h", rep.Runs[0].Replay)
	require.Equal(t, 1, rep.Total.Failed)
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
