package conform

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
)

// outputLines is how many of each lifetime's last output lines a failed
// run's table shows (the files keep it all).
const outputLines = 15

// moreSubjects is how many subjects of a checker's further violations
// the table names.
const moreSubjects = 8

// DiagnosticBanner opens and closes the report of a diagnostic run.
const DiagnosticBanner = "DIAGNOSTIC RUN (--admit-unverified): NO CONFORMANCE CLAIM. The chain admitted txs it would have rejected; no verdict below says the daemon conforms."

// Failed reports whether the daemon failed: a Must violation or a harness
// problem (a daemon that is not the provisioned provider).
func (r *Result) Failed() bool { return r.Report.Failed() || len(r.Problems) > 0 }

// Passed reports whether the run passed: it did not fail, every checker
// not on the allow-list was exercised (Unexercised), and it was no
// diagnostic run (a diagnostic run never passes).
func (r *Result) Passed() bool { return !r.Failed() && len(r.Unexercised()) == 0 && !r.Diagnostic }

// Unexercised lists the checkers whose situation never arose and that the
// allow-list does not name: a run with one is not a pass.
func (r *Result) Unexercised() []string {
	if r.Claim == nil {
		return nil
	}
	return r.Claim.Unmet()
}

// verdict is checker n's verdict in the table: the claim's (NOT
// EXERCISED, or "not exercised (allowed)" for one on the allow-list).
func (r *Result) verdict(n string) string {
	if r.Claim != nil {
		if st, ok := r.Claim.Standing(n); ok {
			return r.Claim.Describe(st)
		}
	}
	return string(r.Report.Verdict(n))
}

// WriteTable writes the report: what happened (the summary, its likely
// cause, where the daemon's output is), the verdict of every checker,
// the violations grouped by checker (the first of each with its evidence
// as timeline lines, then how many more), the script's steps, the
// harness's findings, and the verdict. A diagnostic run's report begins
// and ends with DiagnosticBanner.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	if r.Diagnostic {
		fmt.Fprintf(&b, "%s\n\n", DiagnosticBanner)
	}
	r.writeSummary(&b)
	contracts := oraclejudge.Contracts()
	width := len("checker")
	for _, n := range oraclejudge.Names() {
		width = max(width, len(n))
	}
	fmt.Fprintf(&b, "\n%-*s %-24s %s\n", width, "checker", "verdict", "situations seen")
	for _, n := range oraclejudge.Names() {
		fmt.Fprintf(&b, "%-*s %-24s %s\n", width, n, r.verdict(n), r.situations(n))
	}
	if r.Claim != nil && (len(r.Claim.Allowed) > 0 || len(r.Claim.Unmet()) > 0) {
		b.WriteString("\n")
		r.Claim.WriteAllowedAndUnmet(&b, func(n string) string { return r.Why[n] })
	}
	if len(r.Report.Violations) > 0 {
		fmt.Fprintf(&b, "\nviolations by checker: the first of each with its evidence (--json lists all %d)\n", len(r.Report.Violations))
	}
	for _, n := range violatedCheckers(r.Report) {
		vs := r.Report.ByChecker(n)
		v := vs[0]
		sev := "MUST"
		if v.Severity == judge.Should {
			sev = "SHOULD"
		}
		fmt.Fprintf(&b, "\n%s violated ×%d (%s) [%s]: %s\n", n, len(vs), contracts[n], sev, v.String())
		for _, seq := range v.Evidence {
			if seq >= 1 && int(seq) <= len(r.Events) {
				fmt.Fprintf(&b, "    %s\n", history.Line(r.Events[seq-1], r.Genesis))
			}
		}
		if len(vs) > 1 {
			fmt.Fprintf(&b, "    and %d more like it%s\n", len(vs)-1, subjects(vs[1:]))
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
	if !r.Passed() {
		for i, out := range r.Output {
			fmt.Fprintf(&b, "\nthe daemon's last output, lifetime %d", i+1)
			if i < len(r.Lifetimes) && !r.SandboxRemoved {
				fmt.Fprintf(&b, " (all of it: %s, %s)", r.Lifetimes[i].Stdout, r.Lifetimes[i].Stderr)
			}
			b.WriteString(":\n")
			for _, line := range out[max(0, len(out)-outputLines):] {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	verdict := "PASS"
	switch {
	case r.Diagnostic:
		verdict = "DIAGNOSTIC (no conformance claim)"
		if r.Failed() {
			verdict += ", with violations"
		}
	case r.Failed():
		verdict = "FAIL"
	case len(r.Unexercised()) > 0:
		verdict = "UNMET"
	}
	fmt.Fprintf(&b, "\n%s: %d records over %s, provider %s\n", verdict, len(r.Events), r.Duration.Round(100_000_000), r.Self)
	if r.Diagnostic {
		fmt.Fprintf(&b, "%s\n", DiagnosticBanner)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummary writes what happened, before any verdict.
func (r *Result) writeSummary(b *strings.Builder) {
	s := r.Summary
	row := func(name, format string, args ...any) {
		fmt.Fprintf(b, "  %-11s %s\n", name+":", fmt.Sprintf(format, args...))
	}
	b.WriteString("what happened\n")
	if len(r.Command) > 0 {
		row("command", "%s", strings.Join(r.Command, " "))
	}
	rej := 0
	for _, a := range s.Rejected {
		rej += a.Count
	}
	line := fmt.Sprintf("%d of %d admitted", s.Admitted, s.Broadcasts)
	if rej > 0 {
		parts := make([]string, len(s.Rejected))
		for i, a := range s.Rejected {
			parts[i] = a.String()
		}
		line += fmt.Sprintf("; %d rejected: %s", rej, strings.Join(parts, "; "))
	}
	row("broadcasts", "%s", line)
	if r.Diagnostic {
		if len(s.Waived) == 0 {
			row("waived", "nothing: every admission would have been the chain's own")
		} else {
			parts := make([]string, len(s.Waived))
			for i, a := range s.Waived {
				parts[i] = a.String()
			}
			row("waived", "admitted only because --admit-unverified let these checks pass: %s", strings.Join(parts, "; "))
		}
	}
	line = fmt.Sprintf("%d of the daemon's txs; %d rounds completed, %d with the daemon's submission", s.Committed, s.Rounds, s.WithSelf)
	if len(s.FailedInBlock) > 0 {
		parts := make([]string, len(s.FailedInBlock))
		for i, a := range s.FailedInBlock {
			parts[i] = a.String()
		}
		line += "; failed in a block: " + strings.Join(parts, "; ")
	}
	row("committed", "%s", line)
	methods := make([]string, 0, len(s.Calls))
	total := 0
	for m, n := range s.Calls {
		methods = append(methods, fmt.Sprintf("%s %d", m, n))
		total += n
	}
	slices.Sort(methods)
	line = fmt.Sprintf("%d (%s)", total, strings.Join(methods, ", "))
	if s.CallsLost > 0 {
		line += fmt.Sprintf(", %d answers lost", s.CallsLost)
	}
	row("calls", "%s", line)
	row("lifetimes", "%d (%d restarts by the harness); ended on their own: %d; Go traces: %d", s.Lifetimes, s.Restarts, s.OnItsOwn, s.Traces)
	for _, l := range r.Lifetimes {
		end := l.Ended
		switch {
		case end == "":
			end = "still running at the end"
		case l.AfterSignal != "":
			end += " after the harness's " + l.AfterSignal
		default:
			end += ", on its own"
		}
		where := l.Stdout + ", " + l.Stderr
		if r.SandboxRemoved {
			where = "removed with the sandbox (the run passed; --dir keeps it)"
		}
		row(fmt.Sprintf("life %d", l.Life), "%s; output: %s", end, where)
	}
	if s.Cause != "" {
		row("cause", "%s", s.Cause)
	}
	nx, warned := 0, 0
	for _, n := range oraclejudge.Names() {
		switch r.Report.Verdict(n) {
		case judge.NotExercised:
			nx++
		case judge.Warned:
			warned++
		}
	}
	row("verdicts", "%d of %d checkers violated (%d violations), %d warned, %d not exercised", s.ViolatedCheckers-warnedCheckers(r.Report), len(oraclejudge.Names()), s.Violations, warned, nx)
}

// warnedCheckers counts the checkers whose violations are all warnings.
func warnedCheckers(rep *judge.Report) int {
	n := 0
	for _, c := range violatedCheckers(rep) {
		if rep.Verdict(c) == judge.Warned {
			n++
		}
	}
	return n
}

// subjects names the subjects of vs, at most moreSubjects of them.
func subjects(vs []judge.Violation) string {
	var names []string
	for _, v := range vs {
		if v.Subject != "" && !slices.Contains(names, v.Subject) {
			names = append(names, v.Subject)
		}
	}
	if len(names) == 0 {
		return ""
	}
	more := ""
	if len(names) > moreSubjects {
		more = fmt.Sprintf(", … %d more", len(names)-moreSubjects)
		names = names[:moreSubjects]
	}
	return " (" + strings.Join(names, ", ") + more + ")"
}

// situations is the table's "situations seen" of checker n: each
// variant with its count, then the parts of its obligation that never
// arose.
func (r *Result) situations(n string) string {
	s := situations(r.Coverage[n])
	if r.Claim == nil {
		return s
	}
	if st, ok := r.Claim.Standing(n); ok && len(st.Missing) > 0 {
		s += "; NEVER: " + strings.Join(st.Missing, "; ")
	}
	return s
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
// violated or not exercised or a part of its situation never arose,
// skipped when that is allowed) and
// one for the harness's checks.
func (r *Result) JUnit(name string) *engine.JUnitSuites {
	s := engine.JUnitSuite{Name: name, Time: r.Duration.Seconds()}
	for _, n := range oraclejudge.Names() {
		c := engine.JUnitCase{Name: n, Classname: "oracle-conform"}
		var st judge.Standing
		if r.Claim != nil {
			st, _ = r.Claim.Standing(n)
		}
		if v := r.Report.Verdict(n); v != judge.Violated && v != judge.NotExercised && len(st.Missing) > 0 {
			// Exercised, but a part of its situation never arose.
			msg := "unmet: " + r.Claim.Shortfall(st)
			if st.Allowed {
				c.Skipped = &engine.JUnitSkipped{Message: msg + ", allowed: " + r.Why[n]}
			} else {
				c.Failure = &engine.JUnitFailure{Message: msg, Type: "unmet",
					Text: "parts: " + st.PartsLine() + "\nallow it by name with --allow-unexercised " + n}
			}
		}
		switch r.Report.Verdict(n) {
		case judge.Violated:
			var text strings.Builder
			for _, v := range r.Report.ByChecker(n) {
				text.WriteString(v.String() + "\n")
			}
			c.Failure = &engine.JUnitFailure{Message: "violated", Text: text.String()}
		case judge.NotExercised:
			if r.Claim != nil && slices.Contains(r.Claim.Allowed, n) {
				c.Skipped = &engine.JUnitSkipped{Message: "not exercised, allowed: " + r.Why[n]}
			} else {
				c.Failure = &engine.JUnitFailure{Message: "not exercised: its situation never arose, so nothing was judged", Type: "unmet",
					Text: "allow it by name with --allow-unexercised " + n}
			}
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
	if r.Diagnostic {
		s.Add(engine.JUnitCase{Name: "harness-diagnostic", Classname: "oracle-conform",
			Failure: &engine.JUnitFailure{Message: "diagnostic run", Text: DiagnosticBanner}})
	}
	sc := engine.JUnitCase{Name: "harness-script", Classname: "oracle-conform"}
	if len(r.Unmet) > 0 {
		sc.Skipped = &engine.JUnitSkipped{Message: "steps unmet: " + strings.Join(r.Unmet, "; ")}
	}
	s.Add(sc)
	return &engine.JUnitSuites{Name: name, Suites: []engine.JUnitSuite{s}}
}
