package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// invokeOnTerminal runs the command line with stdout and stderr on one
// stream, as they are on a terminal, and the progress line shown there.
func invokeOnTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var tty bytes.Buffer
	code := Run(context.Background(), args, &tty, &tty, WithProgram("converge"), withProgress(&tty))
	return code, tty.String()
}

// requireProgressCleared checks a terminal's stream: it shows status lines
// matching status, `shown` of them, and each is erased before the next
// report text is written, so no report line is printed after one.
func requireProgressCleared(t *testing.T, stream string, status *regexp.Regexp, shown int) {
	t.Helper()
	const erase = "\r\033[K"
	segments := strings.Split(stream, erase)
	n := 0
	for i, s := range segments {
		if !status.MatchString(s) {
			require.NotRegexp(t, status, s, "a status line followed by other text: %q", s)
			continue
		}
		n++
		require.Regexp(t, `^`+status.String()+`$`, s, "a status line followed by other text")
		require.Less(t, i, len(segments)-1, "the last status line is erased at the end")
	}
	require.Equal(t, shown, n, "one status line per finished item")
	require.False(t, strings.HasSuffix(stream, "…"), "the stream ends with the status erased")
}

func TestSimProgressIsErasedBeforeEachRunLine(t *testing.T) {
	code, stream := invokeOnTerminal(t, "sim", "--seed", "3", "--seeds", "3", "--seed-budget", "3", "--workspaces", "2", "--duration", "30m",
		"--quiet", "0", "--faults", "none", "--jobs", "2")
	require.Equal(t, ExitUnmet, code, stream)
	requireProgressCleared(t, stream, regexp.MustCompile(`\[\d/3\] seeds done, 0 failed …`), 3)
	require.Contains(t, stream, "total: 3 seeds: 3 passed, 0 failed")
}

func TestOracleSimProgressIsErasedBeforeEachRunLine(t *testing.T) {
	code, stream := invokeOnTerminal(t, "oracle", "sim", "--seeds", "2", "--seed-budget", "2", "--requests", "3", "--duration", "2m",
		"--quiet", "1m", "--replay-dir", t.TempDir())
	require.Equal(t, ExitUnmet, code, stream)
	requireProgressCleared(t, stream, regexp.MustCompile(`\[\d/2\] seeds done, 0 failed …`), 2)

	// Not on a terminal: no status at all.
	code, out, errOut := invoke(t, nil, "oracle", "sim", "--seeds", "1", "--seed-budget", "1", "--requests", "3", "--duration", "2m",
		"--quiet", "1m", "--replay-dir", t.TempDir())
	require.Equal(t, ExitUnmet, code, errOut)
	require.Empty(t, errOut)
	require.NotContains(t, out, "seeds done")
}

func TestOracleMutantsProgressAndCaseTimes(t *testing.T) {
	code, stream := invokeOnTerminal(t, "oracle", "mutants", "--mutant", "pool-limit-ignored", "--mutant", "nonce-not-plus-one", "--seeds", "3")
	require.Equal(t, ExitOK, code, stream)
	requireProgressCleared(t, stream, regexp.MustCompile(`\[\d/2\] mutants hunted …`), 2)

	// Each JUnit case is timed by its hunt, on the CLI's clock: a clock
	// that moves a second per reading gives every case one second (the
	// hunt reads it when it starts and when it kills).
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { tick = tick.Add(time.Second); return tick }
	junit := filepath.Join(t.TempDir(), "mutants.xml")
	code, _, errOut := invoke(t, []Option{withClock(clock)}, "oracle", "mutants", "--mutant", "pool-limit-ignored",
		"--mutant", "nonce-not-plus-one", "--seeds", "3", "--jobs", "1", "--junit", junit)
	require.Equal(t, ExitOK, code, errOut)
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	var doc struct {
		Cases []struct {
			Name string  `xml:"name,attr"`
			Time float64 `xml:"time,attr"`
		} `xml:"testsuite>testcase"`
	}
	require.NoError(t, xml.Unmarshal(raw, &doc))
	require.Len(t, doc.Cases, 2)
	for _, c := range doc.Cases {
		require.InDelta(t, 1.0, c.Time, 1e-9, "case %s", c.Name)
	}
}
