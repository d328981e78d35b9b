package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Severity says what a violation costs.
type Severity uint8

// Severities.
const (
	// Must: a violation fails the run.
	Must Severity = iota
	// Should: a violation is reported as a warning and does not fail the
	// run (a rule the spec makes binding on the reference only).
	Should
)

// Violation is one broken contract, with the events that prove it.
type Violation struct {
	Checker  string
	Contract string
	// Subject is what the violation is about (a workspace id, a request
	// id), "" for the whole run.
	Subject string
	At      time.Time
	Message string
	// Evidence are the sequence numbers of the events that prove it.
	Evidence []int64
	// Severity is Must unless the checker was run as a warning.
	Severity Severity
}

func (v Violation) String() string {
	subject := ""
	if v.Subject != "" {
		subject = " " + v.Subject
	}
	ev := make([]string, len(v.Evidence))
	for i, s := range v.Evidence {
		ev[i] = fmt.Sprintf("#%d", s)
	}
	return fmt.Sprintf("%s (%s) at %s%s: %s [events %s]", v.Contract, v.Checker, v.At.UTC().Format(time.RFC3339), subject, v.Message, strings.Join(ev, " "))
}

// Verdict of one checker.
type Verdict string

// Verdicts.
const (
	Pass         Verdict = "pass"
	Violated     Verdict = "violated"
	NotExercised Verdict = "not exercised"
	// Warned: only Should violations (the run does not fail).
	Warned Verdict = "warned"
)

// Named is what a report needs to know of a checker.
type Named interface {
	// Name is short and stable ("c4-non-preemptive", "o2-nonce").
	Name() string
	// Contract is the contract or rule it judges ("C4", "O2", "4.2.4").
	Contract() string
}

// MaxViolationsPerChecker caps a report: the first ones prove the point.
const MaxViolationsPerChecker = 20

// Report is the outcome of judging one run.
type Report struct {
	Violations []Violation
	// Exercised counts, per checker, how often its situation arose.
	Exercised map[string]int
	// Parts counts, per checker, how often each named part of its
	// situation arose (ExercisePart); Exercised counts them too.
	Parts map[string]map[string]int
	// Warnings lists the checkers that report Should violations only.
	Warnings map[string]bool
	// Figures holds measurements the checkers report, neither pass nor
	// fail (e.g. how long two instances believed they led), keyed
	// "checker.figure" and summed over the run.
	Figures map[string]float64
	// The running checker: current when set by As, else checkers[cur]
	// when cur ≥ 0 (set by a Stream, which switches checkers for every
	// event: an index costs no write barrier where an interface did).
	current  Named
	checkers []Named
	cur      int
	counts   map[string]int
}

// NewReport returns an empty report over checkers (each listed as
// exercised zero times); warn names those whose violations are warnings.
func NewReport(checkers []Named, warn ...string) *Report {
	r := &Report{Exercised: map[string]int{}, Warnings: map[string]bool{}, counts: map[string]int{}, checkers: checkers,
		cur: -1}
	for _, c := range checkers {
		r.Exercised[c.Name()] += 0
	}
	for _, w := range warn {
		r.Warnings[w] = true
	}
	return r
}

// As makes c the running checker: Flag and Exercise count for it.
func (r *Report) As(c Named) { r.current = c }

// asChecker makes the i-th of the checkers the report was made over the
// running checker (As of it). Only As sets current, so it is written only
// when set: a Stream calls this for every checker at every event, and the
// pointer's write barrier was a tenth of the Stream's own time.
func (r *Report) asChecker(i int) {
	if r.current != nil {
		r.current = nil
	}
	r.cur = i
}

// running is the running checker.
func (r *Report) running() Named {
	if r.current != nil || r.cur < 0 {
		return r.current
	}
	return r.checkers[r.cur]
}

// Flag records a violation by the running checker.
func (r *Report) Flag(subject string, at time.Time, msg string, evidence ...int64) {
	running := r.running()
	name := running.Name()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	if r.counts[name] >= MaxViolationsPerChecker {
		return
	}
	r.counts[name]++
	sev := Must
	if r.Warnings[name] {
		sev = Should
	}
	r.Violations = append(r.Violations, Violation{
		Checker: name, Contract: running.Contract(), Subject: subject, At: at, Message: msg,
		Evidence: evidence, Severity: sev,
	})
}

// Figure adds v to the running checker's figure name.
func (r *Report) Figure(name string, v float64) {
	if r.Figures == nil {
		r.Figures = map[string]float64{}
	}
	r.Figures[r.running().Name()+"."+name] += v
}

// Exercise counts one occurrence of the running checker's situation.
func (r *Report) Exercise() { r.Exercised[r.running().Name()]++ }

// ExercisePart counts one occurrence of the running checker's situation,
// and of the named part (or variant) of it that arose: an obligation with
// Parts is met only when each of them arose (Obligation.Parts).
func (r *Report) ExercisePart(part string) {
	name := r.running().Name()
	r.Exercised[name]++
	addPart(&r.Parts, name, part, 1)
}

// addPart adds n to (*m)[name][part], making the maps as needed.
func addPart(m *map[string]map[string]int, name, part string, n int) {
	if *m == nil {
		*m = map[string]map[string]int{}
	}
	pm := (*m)[name]
	if pm == nil {
		pm = map[string]int{}
		(*m)[name] = pm
	}
	pm[part] += n
}

// Verdict is a checker's outcome in r.
func (r *Report) Verdict(name string) Verdict {
	warned := false
	for i := range r.Violations {
		if r.Violations[i].Checker == name {
			if r.Violations[i].Severity == Must {
				return Violated
			}
			warned = true
		}
	}
	switch {
	case warned:
		return Warned
	case r.Exercised[name] == 0:
		return NotExercised
	}
	return Pass
}

// Failed reports whether any Must violation was found.
func (r *Report) Failed() bool {
	for i := range r.Violations {
		if r.Violations[i].Severity == Must {
			return true
		}
	}
	return false
}

// ByChecker returns the violations of one checker.
func (r *Report) ByChecker(name string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Checker == name {
			out = append(out, v)
		}
	}
	return out
}

// Checkers lists the checkers of the report, sorted by name.
func (r *Report) Checkers() []string {
	out := make([]string, 0, len(r.Exercised))
	for n := range r.Exercised {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sortViolations orders violations by time, keeping each checker's order.
func (r *Report) sortViolations() {
	sort.SliceStable(r.Violations, func(i, j int) bool { return r.Violations[i].At.Before(r.Violations[j].At) })
}

// Tally sums the reports of many runs: a checker is violated if any run
// violated it, passes if some run exercised it and none violated it, and
// is "not exercised" otherwise.
type Tally struct {
	// Runs counts the reports added.
	Runs int
	// Exercised counts, per checker, its situations over every run;
	// Parts the named parts of them (Report.Parts) over every run.
	Exercised map[string]int
	Parts     map[string]map[string]int
	// Violations counts, per checker, its Must violations; ViolatedRuns
	// the runs with at least one; Warnings its Should violations.
	Violations   map[string]int
	ViolatedRuns map[string]int
	Warnings     map[string]int
	// Figures sums each figure over the runs; FigureMax is its largest
	// value in one run.
	Figures   map[string]float64
	FigureMax map[string]float64
	// SeedsExercised counts, per checker, the runs in which its situation
	// arose; First is the seed of the first such run added with AddSeed.
	SeedsExercised map[string]int
	First          map[string]uint64
	names          []string
}

// NewTally returns an empty tally over the named checkers (in report
// order).
func NewTally(names []string) *Tally {
	t := &Tally{Exercised: map[string]int{}, Violations: map[string]int{}, ViolatedRuns: map[string]int{}, Warnings: map[string]int{},
		Figures: map[string]float64{}, FigureMax: map[string]float64{}, SeedsExercised: map[string]int{}, First: map[string]uint64{},
		names: append([]string(nil), names...)}
	for _, n := range names {
		t.Exercised[n] += 0
	}
	return t
}

// NotExercised lists the checkers named at NewTally that no run
// exercised, in their order.
func (t *Tally) NotExercised() []string {
	var out []string
	for _, n := range t.names {
		if t.Exercised[n] == 0 {
			out = append(out, n)
		}
	}
	return out
}

// Add counts one run's report (nil is ignored).
func (t *Tally) Add(r *Report) { t.AddSeed(0, r) }

// AddSeed counts the report of the run of seed (0: not known): the first
// seed to exercise each checker is kept (runs are added in seed order).
func (t *Tally) AddSeed(seed uint64, r *Report) {
	if r == nil {
		return
	}
	t.Runs++
	for n, c := range r.Exercised {
		t.Exercised[n] += c
		if c > 0 {
			t.SeedsExercised[n]++
			if _, ok := t.First[n]; !ok && seed != 0 {
				t.First[n] = seed
			}
		}
	}
	for n, pm := range r.Parts {
		for p, c := range pm {
			addPart(&t.Parts, n, p, c)
		}
	}
	for n, v := range r.Figures {
		t.Figures[n] += v
		t.FigureMax[n] = max(t.FigureMax[n], v)
	}
	seen := map[string]bool{}
	for _, v := range r.Violations {
		if v.Severity == Should {
			t.Warnings[v.Checker]++
			continue
		}
		t.Violations[v.Checker]++
		if !seen[v.Checker] {
			seen[v.Checker] = true
			t.ViolatedRuns[v.Checker]++
		}
	}
}

// Merge adds another tally's counts.
func (t *Tally) Merge(o *Tally) {
	t.Runs += o.Runs
	for n, c := range o.Exercised {
		t.Exercised[n] += c
	}
	for n, pm := range o.Parts {
		for p, c := range pm {
			addPart(&t.Parts, n, p, c)
		}
	}
	for n, c := range o.Violations {
		t.Violations[n] += c
	}
	for n, c := range o.ViolatedRuns {
		t.ViolatedRuns[n] += c
	}
	for n, c := range o.Warnings {
		t.Warnings[n] += c
	}
	for n, v := range o.Figures {
		t.Figures[n] += v
	}
	for n, v := range o.FigureMax {
		t.FigureMax[n] = max(t.FigureMax[n], v)
	}
	for n, c := range o.SeedsExercised {
		t.SeedsExercised[n] += c
	}
	for n, f := range o.First {
		if old, ok := t.First[n]; !ok || f < old {
			t.First[n] = f
		}
	}
}

// Verdict is checker name's verdict over every run added.
func (t *Tally) Verdict(name string) Verdict {
	switch {
	case t.Violations[name] > 0:
		return Violated
	case t.Warnings[name] > 0:
		return Warned
	case t.Exercised[name] == 0:
		return NotExercised
	}
	return Pass
}
