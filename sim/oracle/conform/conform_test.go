package conform_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oracleconform "github.com/wsconverge/converge/sim/oracle/conform"
)

var (
	buildOnce sync.Once
	binDir    string
	buildOut  string
	buildErr  error
)

// TestMain removes the binaries built for the demonstration.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds converge (the reference daemon is `converge oracled`)
// and the bent daemon of scenarios/mutants/oracle/bentoracled once per test
// binary.
func binaries(t *testing.T) (converge, bent string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "conform-bin-")
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		for _, pkg := range []string{"./cmd/converge", "./scenarios/mutants/oracle/bentoracled"} {
			cmd := exec.Command("go", "build", "-o", binDir+"/", pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr, buildOut = err, string(out)
				return
			}
		}
	})
	require.NoError(t, buildErr, buildOut)
	return filepath.Join(binDir, "converge"), filepath.Join(binDir, "bentoracled")
}

func logReport(t *testing.T, res *oracleconform.Result) {
	t.Helper()
	for _, n := range oraclejudge.Names() {
		t.Logf("%-22s %-13s %v", n, res.Report.Verdict(n), res.Coverage[n])
	}
	t.Logf("run: %s, unmet steps: %q", res.Duration.Round(100*time.Millisecond), res.Unmet)
	for _, a := range res.Summary.Rejected {
		t.Logf("rejected: %s", a)
	}
	held := 0 // broadcasts the F12 step held off with code 20
	for _, e := range res.Events {
		if e.Fault != nil && e.Fault.ID == "F11" && slices.ContainsFunc(e.Fault.Params, func(p history.Param) bool { return p.Key == "why" }) {
			held++
		}
	}
	t.Logf("broadcasts held off during the F12 step: %d", held)
	for _, st := range res.Steps {
		t.Logf("step at %s took %s (unmet %t): %s", st.Start.Round(100*time.Millisecond), st.Took.Round(100*time.Millisecond), st.Unmet, st.Name)
	}
	if !res.QuietFrom.IsZero() {
		t.Logf("quiet phase from %s", res.QuietFrom.Sub(res.Genesis).Round(time.Second))
	}
	for _, v := range res.Report.Violations {
		t.Log(v.String())
		for _, seq := range v.Evidence {
			if seq >= 1 && int(seq) <= len(res.Events) {
				t.Log("   ", history.Line(res.Events[seq-1], res.Genesis))
			}
		}
	}
}

func TestConformReferenceDaemonPasses(t *testing.T) {
	t.Parallel()
	converge, _ := binaries(t)
	// A run judged on a machine that kept the harness itself, or one of
	// the daemon's threads, later than the timing tolerance is run again,
	// twice at most: its timing verdicts may be the machine's
	// (Result.Stalled, Result.Starved).
	var res *oracleconform.Result
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		r, err := oracleconform.Run(ctx, oracleconform.Options{Dir: t.TempDir(), Seed: 1,
			Profile: oracleconform.Profile{Argv: []string{converge, "oracled", "--home", "{home}"}}})
		cancel()
		require.NoError(t, err)
		res = r
		if !res.Failed() || !(res.Stalled() || res.Starved()) || try == 3 {
			break
		}
		t.Logf("run %d failed on a machine that stalled the harness %s and kept a daemon thread waiting %s: running again",
			try, res.MaxStall, res.MaxWait)
		logReport(t, res)
	}
	logReport(t, res)
	require.Empty(t, res.Problems)
	require.Empty(t, res.Report.Violations)
	require.False(t, res.Report.Failed())
	require.Empty(t, res.Unmet, "every wait of the script was met")
	// Every checker meets its situation in the default script, but those
	// the script declares it cannot reach (O15, white-box; O20, O26, O27;
	// parts of O3, O16b and O19: Script.Unreached says why), which are the
	// run's allow-list, printed
	// in every report. The claim holds: nothing violated, nothing else
	// unexercised.
	require.True(t, res.Claim.Holds(), "unexercised and not allowed: %v", res.Claim.Unmet())
	require.Empty(t, res.Unexercised())
	require.Equal(t, []string{"o15-shutdown-order", "o16b-recovery: recovery after F14", "o19-resubscribe: a non-zero exit",
		"o20-gave-up-rearmed", "o26-failed-lookup-followed", "o27-submitted-round-not-rerun",
		"o3-execution-timing: next execution after a give-up", "o3-execution-timing: next execution after a parse failure"},
		res.Claim.Allowed, "four checkers and four parts of others (DR619)")
	// Every other part arose: O5's four codes, O1's, O6's and O7's two,
	// O16b's F1, O19's re-subscription and O3's fetch failure.
	for _, st := range res.Claim.Standings {
		require.Empty(t, st.Missing, st.Checker)
	}
	require.Equal(t, judge.NotExercised, res.Report.Verdict("o15-shutdown-order"), "an external daemon has no white-box trace")
	for _, n := range oraclejudge.Names() {
		if slices.Contains(res.Claim.Allowed, n) {
			require.NotEqual(t, judge.Violated, res.Report.Verdict(n), "%s: %v", n, res.Coverage[n])
			continue
		}
		require.Equal(t, judge.Pass, res.Report.Verdict(n), "%s: %v", n, res.Coverage[n])
	}
	var table strings.Builder
	require.NoError(t, res.WriteTable(&table))
	require.Contains(t, table.String(), "allowed to stay unexercised")
	require.Regexp(t, `\n  o15-shutdown-order +white-box only`, table.String())
}

// The bent binaries run at the same time (goroutines, not t.Parallel:
// go test runs only GOMAXPROCS parallel tests, and these runs are real
// time and mostly idle).
func TestConformMutantBinariesAreCaught(t *testing.T) {
	t.Parallel()
	_, bent := binaries(t)
	cases := []struct {
		bend, checker string
		script        oracleconform.Script
		want          judge.Verdict
		unmet         string // a step that must be unmet (its name's start)
	}{
		{bend: "nonce-minus-one", checker: "o2-nonce-bounds"},
		{bend: "value-drift", checker: "o12-fidelity"},
		{bend: "sequence-skip", checker: "o8-sequence"},
		{bend: "term-exit-1", checker: "o14-shutdown"},
		{bend: "retry-after-fee", checker: "o5-submit-retries"},
		{bend: "stale-account", checker: "o9-resync"},
		{bend: "resubmit", checker: "o1-single-commit"},
		// O18 needs a minute in one lifetime, and is a SHOULD for an
		// external daemon: a warning.
		{bend: "health-once", checker: "o18-health-probe", script: oracleconform.DefaultScript(), want: judge.Warned},
		// The start's probe and no health check at all: the first interval
		// is judged from the first GET.
		{bend: "status-once", checker: "o18-health-probe", script: oracleconform.DefaultScript(), want: judge.Warned},
		// A daemon that reads a lost answer as an admission never retries
		// it: the F12 step, holding the other broadcasts off, is unmet,
		// and the next broadcast skips the unacknowledged sequence (O8).
		{bend: "lost-as-admitted", checker: "o8-sequence", script: oracleconform.DefaultScript(), unmet: "F12: "},
	}
	results := make([]*oracleconform.Result, len(cases))
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			script := tc.script
			if len(script.Steps) == 0 {
				script = oracleconform.ShortScript()
			}
			results[i], errs[i] = oracleconform.Run(ctx, oracleconform.Options{Dir: dir, Seed: uint64(10 + i),
				Script:  script,
				Profile: oracleconform.Profile{Argv: []string{bent, "--bend", tc.bend, "--home", "{home}"}}})
		}()
	}
	wg.Wait()
	for i, tc := range cases {
		t.Run(tc.bend, func(t *testing.T) {
			require.NoError(t, errs[i])
			logReport(t, results[i])
			if tc.unmet != "" {
				require.True(t, slices.ContainsFunc(results[i].Unmet, func(u string) bool { return strings.HasPrefix(u, tc.unmet) }),
					"a step %q… is unmet: %q", tc.unmet, results[i].Unmet)
			}
			if tc.want == judge.Warned {
				require.Equal(t, judge.Warned, results[i].Report.Verdict(tc.checker))
				return
			}
			require.Equal(t, judge.Violated, results[i].Report.Verdict(tc.checker))
			require.True(t, results[i].Failed())
		})
	}
}
