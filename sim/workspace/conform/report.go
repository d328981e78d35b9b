package conform

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/report"
)

// Summary is the report's first line: what the run did, then its
// verdict.
func (r *Result) Summary() string {
	var kinds []string
	for k, n := range r.Faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	faults := "no faults"
	if len(kinds) > 0 {
		faults = "faults: " + strings.Join(kinds, ", ")
	}
	verdict := "PASS"
	switch {
	case r.Failed():
		verdict = fmt.Sprintf("FAIL (%d violations, %d problems)", len(r.Report.Violations), len(r.Problems))
	case len(r.Unmet()) > 0:
		verdict = fmt.Sprintf("NOT A PASS (%d obligations unmet)", len(r.Unmet()))
	}
	return fmt.Sprintf("conform: %s — %d instances, %d restarts; %s; %d API calls; %d/%d workspaces converged; %d checkers judged, %d not judgeable black-box",
		verdict, r.Instances, r.Restarts, faults, r.APICalls, len(r.Converged), r.Workspaces, len(r.Judged), len(r.NotJudgeable))
}

// WriteText writes the report: the summary, what failed with its
// evidence, every checker's verdict, what cannot be judged and why, the
// figures.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Summary())
	if r.Replay != "" {
		fmt.Fprintf(&b, "replayed: %s\n", r.Replay)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "PROBLEM %s\n", p)
	}
	for i, v := range r.Report.Violations {
		fmt.Fprintf(&b, "VIOLATION %s\n", v.String())
		if i < len(r.Evidence) {
			for _, l := range r.Evidence[i] {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	fmt.Fprintf(&b, "\nuser data: %s", r.UserData)
	fmt.Fprintf(&b, "\nwriters: %s", r.Attribution)
	if r.LeaderInferred {
		b.WriteString("; leadership read from pg_locks (no system_locks row)")
	}
	fmt.Fprintf(&b, "\nengine: %d Docker events of the run's containers and volumes in the history (%d of the run's own faults left out), the engine's, not any instance's", r.EngineEvents, r.EngineOwn)
	fmt.Fprintf(&b, "\nchecker verdicts (judged on the world's evidence):\n")
	for _, name := range r.Judged {
		fmt.Fprintf(&b, "  %-24s %-24s %d situations\n", name, r.verdict(name), r.Report.Exercised[name])
	}
	if r.Claim != nil {
		r.Claim.WriteAllowedAndUnmet(&b, func(n string) string { return r.Unreached[n] })
	}
	fmt.Fprintf(&b, "not judgeable black-box:\n")
	var nj []string
	for n := range r.NotJudgeable {
		nj = append(nj, n)
	}
	sort.Strings(nj)
	for _, n := range nj {
		fmt.Fprintf(&b, "  %-24s %s\n", n, r.NotJudgeable[n])
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "not reproduced: %s\n", s)
	}
	fmt.Fprintf(&b, "figures (reported, not asserted):\n")
	fmt.Fprintf(&b, "  wall %s (fault phase %s, quiet phase %s)\n", r.Wall.Round(time.Second), r.FaultPhaseWall.Round(time.Second), r.QuietWall.Round(time.Second))
	var st []string
	for s, n := range r.Statuses {
		st = append(st, fmt.Sprintf("%d×%d", n, s))
	}
	sort.Strings(st)
	fmt.Fprintf(&b, "  API answers: %s\n", strings.Join(st, " "))
	for _, d := range r.Detections {
		fmt.Fprintf(&b, "  detect: %s\n", d)
	}
	var ids []string
	for id := range r.Converged {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "  converged: %s %s after the quiet phase began\n", id, r.Converged[id].Round(time.Millisecond))
	}
	for _, row := range r.Rows {
		if _, ok := r.Converged[row.ID]; !ok {
			ok2, why := wsjudge.Converged(&row)
			if !ok2 {
				fmt.Fprintf(&b, "  not converged: %s %s\n", row.ID, why)
			}
		}
	}
	if r.Dir != "" {
		fmt.Fprintf(&b, "evidence kept in %s\n", r.Dir)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// verdict is a judged checker's verdict in the report: the claim's (NOT
// EXERCISED, or "not exercised (allowed)" for one on the allow-list).
func (r *Result) verdict(n string) string {
	if r.Claim != nil {
		if st, ok := r.Claim.Standing(n); ok {
			return r.Claim.Describe(st)
		}
	}
	return string(r.Report.Verdict(n))
}

func (r *Result) standing(n string) (judge.Standing, bool) {
	if r.Claim == nil {
		return judge.Standing{}, false
	}
	return r.Claim.Standing(n)
}

// jsonResult is the --json form.
type jsonResult struct {
	Summary string `json:"summary"`
	Passed  bool   `json:"passed"`
	// Unmet lists the judged checkers whose obligation is unmet and not
	// allowed (exit 5).
	Unmet []string `json:"unmet"`
	*Result
	Verdicts   map[string]string   `json:"verdicts"`
	Violations []wsjudge.Violation `json:"violations"`
	Evidence   [][]string          `json:"evidence"`
}

// WriteJSON writes the result as JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	v := map[string]string{}
	for _, n := range r.Judged {
		v[n] = r.verdict(n)
	}
	for n := range r.NotJudgeable {
		v[n] = "not judgeable black-box"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	unmet := r.Unmet()
	if unmet == nil {
		unmet = []string{}
	}
	return enc.Encode(jsonResult{Summary: r.Summary(), Passed: r.Passed(), Unmet: unmet, Result: r, Verdicts: v,
		Violations: r.Report.Violations, Evidence: r.Evidence})
}

// JUnit is the run as one suite: a case per checker (skipped when not
// judgeable black-box or allowed to stay unexercised, failed when its
// obligation is unmet: a situation that never arose proves nothing) and
// a case for the run's own problems.
func (r *Result) JUnit() *engine.JUnitSuites {
	s := engine.JUnitSuite{Name: "conform " + r.System, Time: r.Wall.Seconds()}
	run := engine.JUnitCase{Name: "run", Classname: r.System, Time: r.Wall.Seconds(), Out: r.Summary()}
	if len(r.Problems) > 0 {
		run.Failure = &engine.JUnitFailure{Message: r.Problems[0], Type: "problem", Text: strings.Join(r.Problems, "\n")}
	}
	s.Add(run)
	for _, name := range wsjudge.Names() {
		if why, ok := r.NotJudgeable[name]; ok {
			s.Add(engine.JUnitCase{Name: name, Classname: r.System, Skipped: &engine.JUnitSkipped{Message: "not judgeable black-box: " + why}})
			continue
		}
		c := engine.CheckerCase(name, r.System, r.Report, func(i int) ([]string, bool) {
			if i < len(r.Evidence) {
				return r.Evidence[i], true
			}
			return nil, false
		})
		if c.Failure == nil {
			if st, ok := r.standing(name); ok && !st.Met {
				if st.Allowed {
					why := r.Unreached[name]
					if why == "" {
						why = "named by --allow-unexercised"
					}
					c.Skipped = &engine.JUnitSkipped{Message: "not exercised, allowed: " + why}
				} else {
					c.Failure = &engine.JUnitFailure{Message: name + ": obligation unmet, its situation never arose", Type: "unmet",
						Text: "needs: " + st.Situation + "\nallow it by name with --allow-unexercised " + name}
				}
			}
		}
		s.Add(c)
	}
	return &engine.JUnitSuites{Name: "converge conform", Suites: []engine.JUnitSuite{s}}
}

// WriteJUnit writes the JUnit XML.
func (r *Result) WriteJUnit(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	return enc.Encode(r.JUnit())
}

// WriteHTML writes the simulator's HTML timeline of the run.
func (r *Result) WriteHTML(w io.Writer) error {
	var failures []string
	failures = append(failures, r.Problems...)
	res := wssim.Result{Seed: r.Config.Seed, Report: r.Report, Failures: failures, Evidence: r.Evidence, APICalls: r.APICalls}
	return report.HTML(w, report.Run{System: "conform: " + r.System, Result: res, Wall: r.Wall, Events: r.Events, Start: r.Start, End: r.End})
}

// writeFiles keeps the report, the JSON and the whole timeline in dir.
func (r *Result) writeFiles(dir string) error {
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(evidencePath(dir, name))
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("report.txt", r.WriteText); err != nil {
		return err
	}
	if err := write("report.json", r.WriteJSON); err != nil {
		return err
	}
	return write("timeline.txt", func(w io.Writer) error {
		for _, l := range history.Timeline(r.Events, r.Start) {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
		return nil
	})
}
