package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/sim"
)

// simReport is the sim command's whole report (also its JSON form).
type simReport struct {
	System       string      `json:"system"`
	Workspaces   int         `json:"workspaces"`
	Duration     string      `json:"duration"`
	Quiet        string      `json:"quiet"`
	Faults       string      `json:"faults"`
	Coordinators int         `json:"coordinators"`
	Runs         []runReport `json:"runs"`
	Total        totalReport `json:"total"`
	Interrupted  bool        `json:"interrupted,omitempty"`

	tally *sim.Tally
}

// violationReport is one contract violation of a run.
type violationReport struct {
	Checker   string `json:"checker"`
	Contract  string `json:"contract"`
	Workspace string `json:"workspace,omitempty"`
	// At is the virtual time since the start ("+18:02:09.023").
	At      string `json:"at"`
	Message string `json:"message"`
	// Known names the known issue it is an instance of, if any.
	Known string `json:"known_issue,omitempty"`
	// Timeline is the history around its evidence.
	Timeline []string `json:"timeline,omitempty"`
}

// runReport is one seed.
type runReport struct {
	Seed         uint64            `json:"seed"`
	SimHours     float64           `json:"sim_hours"`
	WallSeconds  float64           `json:"wall_seconds"`
	Speed        float64           `json:"speed"`
	Hash         string            `json:"hash"`
	Events       int               `json:"events"`
	APICalls     int               `json:"api_calls"`
	FaultKinds   []string          `json:"fault_kinds"`
	FaultActions int               `json:"fault_actions"`
	Ops          map[string]int    `json:"ops"`
	Errors       int               `json:"errors"`
	Display      map[string]int    `json:"display"`
	Pass         bool              `json:"pass"`
	Failures     []string          `json:"failures,omitempty"`
	Violations   []violationReport `json:"violations,omitempty"`
	Timeline     []string          `json:"timeline,omitempty"`
	// Replay reruns the seed from the command line; ReplayFile is the
	// replay file written for a failing seed (converge replay FILE).
	Replay     string `json:"replay,omitempty"`
	ReplayFile string `json:"replay_file,omitempty"`
}

// checkerReport is one checker's verdict over every seed.
type checkerReport struct {
	Name          string `json:"name"`
	Contract      string `json:"contract"`
	Verdict       string `json:"verdict"`
	Exercised     int    `json:"exercised"`
	Violations    int    `json:"violations"`
	ViolatedSeeds int    `json:"violated_seeds"`
}

// totalReport sums the runs.
type totalReport struct {
	Seeds       int             `json:"seeds"`
	SimHours    float64         `json:"sim_hours"`
	WallSeconds float64         `json:"wall_seconds"`
	Speed       float64         `json:"speed"`
	Ops         map[string]int  `json:"ops"`
	Errors      int             `json:"errors"`
	Display     map[string]int  `json:"display"`
	Passed      int             `json:"passed"`
	Failed      int             `json:"failed"`
	Checkers    []checkerReport `json:"checkers"`
}

func newSimReport(o simOptions, system string) *simReport {
	return &simReport{
		System:       system,
		Workspaces:   o.workspaces,
		Duration:     shortDuration(o.duration),
		Quiet:        shortDuration(o.quiet),
		Faults:       o.faults.String(),
		Coordinators: o.coordinators,
		Runs:         []runReport{},
		Total:        totalReport{Ops: map[string]int{}, Display: map[string]int{}},
		tally:        sim.NewTally(),
	}
}

// runsPerSeed: sim.Check runs every seed twice.
const runsPerSeed = 2

func newRunReport(o simOptions, res sim.Result, err error, wall time.Duration) runReport {
	r := runReport{
		Seed:        res.Seed,
		SimHours:    res.SimDuration.Hours(),
		WallSeconds: wall.Seconds(),
		Speed:       speed(runsPerSeed*res.SimDuration, wall),
		Hash:        res.Hash,
		Events:      res.Events,
		APICalls:    res.APICalls,
		FaultKinds:  []string{},
		Ops:         map[string]int{},
		Errors:      res.Errors,
		Display:     map[string]int{},
		Pass:        err == nil && res.OK(),
		Failures:    res.Failures,
		Timeline:    res.Tail,
	}
	if res.Plan != nil {
		for _, k := range res.Plan.Faults {
			r.FaultKinds = append(r.FaultKinds, string(k))
		}
		r.FaultActions = len(res.Plan.Actions)
	}
	for op, n := range res.OpsCompleted {
		r.Ops[string(op)] = n
	}
	for d, n := range res.Display {
		r.Display[string(d)] = n
	}
	if res.Report != nil {
		r.Violations = violationReports(res, sim.DefaultStart)
	}
	if err != nil && len(r.Failures) == 0 && len(r.Violations) == 0 {
		r.Failures = []string{err.Error()}
	}
	if !r.Pass {
		r.Replay = replayCommand(o, res.Seed)
	}
	return r
}

func violationReports(res sim.Result, start time.Time) []violationReport {
	var out []violationReport
	for i, v := range res.Report.Violations {
		vr := violationReport{Checker: v.Checker, Contract: v.Contract, Workspace: v.Workspace,
			At: history.Offset(v.At.Sub(start)), Message: v.Message}
		if i < len(res.Known) {
			vr.Known = res.Known[i]
		}
		if i < len(res.Evidence) {
			vr.Timeline = res.Evidence[i]
		}
		out = append(out, vr)
	}
	return out
}

func (rep *simReport) add(r runReport, report *invariant.Report) {
	rep.Runs = append(rep.Runs, r)
	rep.tally.Add(report)
	t := &rep.Total
	t.Seeds++
	t.SimHours += r.SimHours
	t.WallSeconds += r.WallSeconds
	t.Speed = speed(time.Duration(runsPerSeed*t.SimHours*float64(time.Hour)), time.Duration(t.WallSeconds*float64(time.Second)))
	for k, n := range r.Ops {
		t.Ops[k] += n
	}
	for k, n := range r.Display {
		t.Display[k] += n
	}
	t.Errors += r.Errors
	if r.Pass {
		t.Passed++
	} else {
		t.Failed++
	}
}

// finish computes each checker's verdict over the seeds run.
func (rep *simReport) finish() { rep.Total.Checkers = checkerReports(rep.tally) }

func checkerReports(t *sim.Tally) []checkerReport {
	var out []checkerReport
	for _, c := range invariant.All() {
		n := c.Name()
		out = append(out, checkerReport{
			Name: n, Contract: c.Contract(), Verdict: string(t.Verdict(n)),
			Exercised: t.Exercised[n], Violations: t.Violations[n], ViolatedSeeds: t.ViolatedRuns[n],
		})
	}
	return out
}

// speed is simulated time per wall time, rounded to a whole number.
func speed(simulated, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return math.Round(float64(simulated) / float64(wall))
}

// replayCommand is the command line that reruns one seed alone.
func replayCommand(o simOptions, seed uint64) string {
	cmd := "converge sim --seed " + strconv.FormatUint(seed, 10) + " --seeds 1 --workspaces " +
		strconv.Itoa(o.workspaces) + " --duration " + shortDuration(o.duration)
	if o.quiet != sim.DefaultQuiet {
		cmd += " --quiet " + shortDuration(o.quiet)
	}
	if f := o.faults.String(); f != "swarm" {
		cmd += " --faults " + f
	}
	if o.coordinators != sim.DefaultCoordinators {
		cmd += " --coordinators " + strconv.Itoa(o.coordinators)
	}
	if o.mutant != "" {
		cmd += " --mutant " + o.mutant
	}
	return cmd
}

// shortDuration renders d without trailing zero units ("24h", "1h30m").
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// opsString lists the non-zero counts in the spec's order of operations.
func opsString(ops map[string]int) string {
	var parts []string
	for _, op := range contracts.AllOperations {
		if n := ops[string(op)]; n > 0 {
			parts = append(parts, string(op)+"="+strconv.Itoa(n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// displayString lists the non-zero counts in the spec's order of display
// states.
func displayString(display map[string]int) string {
	var parts []string
	for _, d := range contracts.AllDisplay {
		if n := display[string(d)]; n > 0 {
			parts = append(parts, string(d)+"="+strconv.Itoa(n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

func writeRun(w io.Writer, r runReport) {
	fmt.Fprintf(w, "seed %-6d %6.1fh  wall %6.2fs  speed %8.0fx  faults %d  ops %s  errors %d  display %s  violations %d  %s\n",
		r.Seed, r.SimHours, r.WallSeconds, r.Speed, r.FaultActions, opsString(r.Ops), r.Errors, displayString(r.Display), len(r.Violations), verdict(r.Pass))
	if r.Pass {
		return
	}
	if len(r.FaultKinds) > 0 {
		fmt.Fprintf(w, "  fault kinds on: %s\n", strings.Join(r.FaultKinds, ", "))
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  FAIL seed %d: %s\n", r.Seed, indent(f, "    "))
	}
	writeViolations(w, r.Seed, r.Violations)
	if len(r.Timeline) > 0 {
		fmt.Fprintf(w, "  timeline (last %d events):\n", len(r.Timeline))
		for _, l := range r.Timeline {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	fmt.Fprintf(w, "  rerun: %s\n", r.Replay)
	if r.ReplayFile != "" {
		fmt.Fprintf(w, "  replay: converge replay %s\n", r.ReplayFile)
	}
}

// writeViolations prints each violation and the timeline around its
// evidence.
func writeViolations(w io.Writer, seed uint64, vs []violationReport) {
	for _, v := range vs {
		ws := ""
		if v.Workspace != "" {
			ws = " ws=" + history.ShortID(v.Workspace)
		}
		known := ""
		if v.Known != "" {
			known = "  [known issue: " + v.Known + "]"
		}
		fmt.Fprintf(w, "  VIOLATION seed %d: %s (%s) at %s%s: %s%s\n", seed, v.Contract, v.Checker, v.At, ws, v.Message, known)
		if len(v.Timeline) > 0 {
			fmt.Fprintln(w, "    timeline:")
			for _, l := range v.Timeline {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func writeTotal(w io.Writer, rep *simReport) {
	t := rep.Total
	fmt.Fprintf(w, "total: %d seeds × %d workspaces (%s)  faults %s  %.1fh simulated  wall %.2fs  speed %.0fx  ops %s  errors %d  display %s  %d passed, %d failed\n",
		t.Seeds, rep.Workspaces, rep.System, rep.Faults, t.SimHours, t.WallSeconds, t.Speed, opsString(t.Ops), t.Errors, displayString(t.Display), t.Passed, t.Failed)
	writeCheckers(w, t.Checkers)
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: not every seed ran")
	}
}

// writeCheckers prints each checker's verdict over every seed.
func writeCheckers(w io.Writer, cs []checkerReport) {
	fmt.Fprintln(w, "checkers:")
	for _, c := range cs {
		switch invariant.Verdict(c.Verdict) {
		case invariant.Violated:
			fmt.Fprintf(w, "  %-24s %-6s VIOLATED in %d seed(s), %d violation(s)\n", c.Name, c.Contract, c.ViolatedSeeds, c.Violations)
		case invariant.NotExercise:
			fmt.Fprintf(w, "  %-24s %-6s not exercised\n", c.Name, c.Contract)
		default:
			fmt.Fprintf(w, "  %-24s %-6s pass (exercised %d times)\n", c.Name, c.Contract, c.Exercised)
		}
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	return nil
}
