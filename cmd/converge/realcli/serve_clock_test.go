package realcli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/cmd/converge/cli"
)

// K and its origin come from the variables a drill passes
// (CONVERGE_TIME_SCALE, CONVERGE_TIME_ORIGIN): the clock reads
// origin + (wall − origin)·K, in every process started with them.
func TestServeReadsTheTimeScale(t *testing.T) {
	origin := time.Now().Add(-10 * time.Second).UTC()
	vars := map[string]string{
		"CONVERGE_TOKENS":      testTokens,
		"CONVERGE_TIME_SCALE":  "60",
		"CONVERGE_TIME_ORIGIN": origin.Format(time.RFC3339Nano),
	}
	cfg, problems := resolveServe(t, mapEnv(t, vars), "--fake")
	require.Empty(t, problems)
	require.Equal(t, 60.0, cfg.timeScale)
	require.True(t, cfg.timeOrigin.Equal(origin))
	before := time.Now()
	now := clockOf(cfg).Now()
	after := time.Now()
	// origin + (wall − origin)·60: ten seconds ago is ten minutes on.
	require.False(t, now.Before(origin.Add(before.Sub(origin)*60)), "clock %s", now)
	require.False(t, now.After(origin.Add(after.Sub(origin)*60)), "clock %s", now)

	// The flag wins; without K the clock is the wall clock.
	cfg, problems = resolveServe(t, mapEnv(t, vars), "--fake", "--time-scale", "1")
	require.Empty(t, problems)
	require.Equal(t, 1.0, cfg.timeScale)
	require.WithinDuration(t, time.Now(), clockOf(cfg).Now(), time.Second)
}

// A bad K or origin is bad usage (exit 2), on one line naming its source.
func TestServeRefusesABadTimeScale(t *testing.T) {
	for _, tc := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"--time-scale", "0.5"}, nil, `--time-scale: "0.5": want a number from 1 to 1000`},
		{nil, map[string]string{"CONVERGE_TIME_SCALE": "fast"}, `CONVERGE_TIME_SCALE: "fast": want a number from 1 to 1000`},
		{[]string{"--time-scale", "NaN"}, nil, `--time-scale: "NaN": want a number`},
		{[]string{"--time-scale", "5000"}, nil, `--time-scale: "5000": want a number from 1 to 1000`},
		{nil, map[string]string{"CONVERGE_TIME_ORIGIN": "yesterday"}, `CONVERGE_TIME_ORIGIN: "yesterday": want an RFC 3339 time`},
		{[]string{"--time-origin", "2999-01-01T00:00:00Z"}, nil, `--time-origin: "2999-01-01T00:00:00Z": in the future`},
	} {
		vars := map[string]string{"CONVERGE_TOKENS": testTokens}
		for k, v := range tc.vars {
			vars[k] = v
		}
		var out, errb bytes.Buffer
		code := serveCmd(t, mapEnv(t, vars), &out, &errb, append([]string{"--fake"}, tc.args...)...)
		require.Equal(t, cli.ExitUsage, code, "%v %v", tc.args, tc.vars)
		require.Contains(t, errb.String(), tc.want)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		require.Len(t, lines, 2, "the problem on one line, then the usage hint: %q", errb.String())
		require.Contains(t, lines[0], tc.want)
		require.True(t, strings.HasPrefix(lines[1], "Run 'converge serve --help'"), lines[1])
	}
}
