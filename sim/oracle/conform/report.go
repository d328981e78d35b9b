package conform

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
)

// outputLines is how many of each lifetime's last output lines a failed
// run's table shows.
const outputLines = 15

// Failed reports whether the daemon failed: a Must violation or a harness
// problem (a daemon that is not the provisioned provider).
func (r *Result) Failed() bool { return r.Report.Failed() || len(r.Problems) > 0 }

// WriteTable writes the verdict of every checker, then each violation
// with its evidence as timeline lines, then the harness's problems.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	contracts := oraclejudge.Contracts()
	fmt.Fprintf(&b, "%-22s %-14s %s\n", "checker", "verdict", "situations seen")
	for _, n := range oraclejudge.Names() {
		fmt.Fprintf(&b, "%-22s %-14s %s\n", n, r.Report.Verdict(n), situations(r.Coverage[n]))
	}
	for _, v := range r.Report.Violations {
		sev := "MUST"
		if v.Severity == judge.Should {
			sev = "SHOULD"
		}
		fmt.Fprintf(&b, "\n%s violated (%s) [%s]: %s\n", v.Checker, contracts[v.Checker], sev, v.String())
		for _, seq := range v.Evidence {
			if seq >= 1 && int(seq) <= len(r.Events) {
				fmt.Fprintf(&b, "    %s\n", history.Line(r.Events[seq-1], r.Genesis))
			}
		}
	}
	fmt.Fprintf(&b, "\n%-9s %-8s %s\n", "at", "took", "script step")
	for _, st := range r.Steps {
		mark := ""
		if st.Unmet {
			mark = "  (unmet)"
		}
		fmt.Fprintf(&b, "%-9s %-8s %s%s\n", st.Start.Round(100*time.Millisecond), st.Took.Round(100*time.Millisecond), st.Name, mark)
	}
	for _, u := range r.Unmet {
		fmt.Fprintf(&b, "\nscript: the daemon did not meet a step's wait, the run went on: %s\n", u)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\nharness: %s\n", p)
	}
	if r.Stalled() {
		fmt.Fprintf(&b, "\nharness: this machine kept the harness %s late at +%s (the timing tolerance is %s): a late GET or broadcast may be the machine's, not the daemon's; run again on a quieter machine\n",
			r.MaxStall.Round(time.Millisecond), r.StallAt.Sub(r.Genesis).Round(100*time.Millisecond), oraclejudge.TolBlackBox)
	}
	if r.Starved() {
		fmt.Fprintf(&b, "\nharness: this machine kept one of the daemon's threads waiting %s for a CPU at +%s (the timing tolerance is %s): a late GET or broadcast may be the machine's, not the daemon's; run again on a quieter machine\n",
			r.MaxWait.Round(time.Millisecond), r.WaitAt.Sub(r.Genesis).Round(100*time.Millisecond), oraclejudge.TolBlackBox)
	}
	if r.Failed() {
		for i, out := range r.Output {
			fmt.Fprintf(&b, "\nthe daemon's last output, lifetime %d:\n", i+1)
			for _, line := range out[max(0, len(out)-outputLines):] {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	verdict := "PASS"
	if r.Failed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "\n%s: %d records over %s, provider %s\n", verdict, len(r.Events), r.Duration.Round(100_000_000), r.Self)
	_, err := io.WriteString(w, b.String())
	return err
}

func situations(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, "; ")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// JUnit is the run as a JUnit suite: a case per checker (failed when
// violated, skipped when not exercised) and one for the harness's checks.
func (r *Result) JUnit(name string) *engine.JUnitSuites {
	s := engine.JUnitSuite{Name: name, Time: r.Duration.Seconds()}
	for _, n := range oraclejudge.Names() {
		c := engine.JUnitCase{Name: n, Classname: "oracle-conform"}
		switch r.Report.Verdict(n) {
		case judge.Violated:
			var text strings.Builder
			for _, v := range r.Report.ByChecker(n) {
				text.WriteString(v.String() + "\n")
			}
			c.Failure = &engine.JUnitFailure{Message: "violated", Text: text.String()}
		case judge.NotExercised:
			c.Skipped = &engine.JUnitSkipped{Message: "not exercised"}
		case judge.Warned:
			var text strings.Builder
			for _, v := range r.Report.ByChecker(n) {
				text.WriteString(v.String() + "\n")
			}
			c.Out = "warning (SHOULD):\n" + text.String()
		}
		s.Add(c)
	}
	h := engine.JUnitCase{Name: "harness-provider", Classname: "oracle-conform"}
	if len(r.Problems) > 0 {
		h.Failure = &engine.JUnitFailure{Message: "harness", Text: strings.Join(r.Problems, "\n")}
	}
	s.Add(h)
	sc := engine.JUnitCase{Name: "harness-script", Classname: "oracle-conform"}
	if len(r.Unmet) > 0 {
		sc.Skipped = &engine.JUnitSkipped{Message: "steps unmet: " + strings.Join(r.Unmet, "; ")}
	}
	s.Add(sc)
	return &engine.JUnitSuites{Name: name, Suites: []engine.JUnitSuite{s}}
}
