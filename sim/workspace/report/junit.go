package report

import (
	"fmt"
	"strings"

	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
)

// RunCase is the name of the test case that stands for the run itself:
// it fails with the run's failures (nondeterminism, a panic, a child
// breaking the driver protocol, a failed check).
const RunCase = "run"

// JUnit is the JUnit report of runs: one suite per run ("seed N"), with a
// test case per checker — passed, failed (the message is the first
// violation; the text lists every violation of the checker and the
// timeline around each one the run carries evidence for), or skipped when
// its situation never arose — and the RunCase.
func JUnit(name string, runs []Run) *engine.JUnitSuites {
	out := &engine.JUnitSuites{Name: name}
	for _, r := range runs {
		out.Suites = append(out.Suites, suite(r))
	}
	return out
}

func suite(r Run) engine.JUnitSuite {
	res := &r.Result
	s := engine.JUnitSuite{Name: fmt.Sprintf("seed %d", res.Seed), Time: r.Wall.Seconds()}
	class := r.System
	run := engine.JUnitCase{Name: RunCase, Classname: class, Time: r.Wall.Seconds()}
	if len(res.Failures) > 0 {
		run.Failure = &engine.JUnitFailure{Message: firstLine(res.Failures[0]), Type: "failure",
			Text: strings.Join(res.Failures, "\n\n") + tail(res.Tail)}
	}
	s.Add(run)
	if res.Report == nil {
		return s
	}
	for _, checker := range wsjudge.Names() {
		c := engine.CheckerCase(checker, class, res.Report, res.EvidenceAt)
		switch {
		case c.Failure != nil:
		case res.Report.Exercised[checker] == 0:
			c.Skipped = &engine.JUnitSkipped{Message: "not exercised: the situation it judges never arose"}
		default:
			c.Out = fmt.Sprintf("pass: its situation arose %d times", res.Report.Exercised[checker])
		}
		s.Add(c)
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func tail(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "\n\nthe last events:\n" + strings.Join(lines, "\n")
}
