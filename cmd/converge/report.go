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
	"github.com/wsconverge/converge/sim"
)

// simReport is the sim command's whole report (also its JSON form).
type simReport struct {
	System       string      `json:"system"`
	Workspaces   int         `json:"workspaces"`
	Duration     string      `json:"duration"`
	Coordinators int         `json:"coordinators"`
	Runs         []runReport `json:"runs"`
	Total        totalReport `json:"total"`
	Interrupted  bool        `json:"interrupted,omitempty"`
}

// runReport is one seed.
type runReport struct {
	Seed        uint64         `json:"seed"`
	SimHours    float64        `json:"sim_hours"`
	WallSeconds float64        `json:"wall_seconds"`
	Speed       float64        `json:"speed"`
	Hash        string         `json:"hash"`
	Events      int            `json:"events"`
	APICalls    int            `json:"api_calls"`
	Ops         map[string]int `json:"ops"`
	Errors      int            `json:"errors"`
	Display     map[string]int `json:"display"`
	Pass        bool           `json:"pass"`
	Failures    []string       `json:"failures,omitempty"`
	Timeline    []string       `json:"timeline,omitempty"`
	Replay      string         `json:"replay,omitempty"`
}

// totalReport sums the runs.
type totalReport struct {
	Seeds       int            `json:"seeds"`
	SimHours    float64        `json:"sim_hours"`
	WallSeconds float64        `json:"wall_seconds"`
	Speed       float64        `json:"speed"`
	Ops         map[string]int `json:"ops"`
	Errors      int            `json:"errors"`
	Display     map[string]int `json:"display"`
	Passed      int            `json:"passed"`
	Failed      int            `json:"failed"`
}

func newSimReport(o simOptions, system string) *simReport {
	return &simReport{
		System:       system,
		Workspaces:   o.workspaces,
		Duration:     shortDuration(o.duration),
		Coordinators: o.coordinators,
		Runs:         []runReport{},
		Total:        totalReport{Ops: map[string]int{}, Display: map[string]int{}},
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
		Ops:         map[string]int{},
		Errors:      res.Errors,
		Display:     map[string]int{},
		Pass:        err == nil && res.OK(),
		Failures:    res.Failures,
		Timeline:    res.Tail,
	}
	for op, n := range res.OpsCompleted {
		r.Ops[string(op)] = n
	}
	for d, n := range res.Display {
		r.Display[string(d)] = n
	}
	if err != nil && len(r.Failures) == 0 {
		r.Failures = []string{err.Error()}
	}
	if !r.Pass {
		r.Replay = replayCommand(o, res.Seed)
	}
	return r
}

func (rep *simReport) add(r runReport) {
	rep.Runs = append(rep.Runs, r)
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
	if o.coordinators != sim.DefaultCoordinators {
		cmd += " --coordinators " + strconv.Itoa(o.coordinators)
	}
	return cmd
}

// shortDuration renders d without trailing zero units ("24h", "1h30m").
func shortDuration(d time.Duration) string {
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
	fmt.Fprintf(w, "seed %-6d %6.1fh  wall %6.2fs  speed %8.0fx  ops %s  errors %d  display %s  %s\n",
		r.Seed, r.SimHours, r.WallSeconds, r.Speed, opsString(r.Ops), r.Errors, displayString(r.Display), verdict(r.Pass))
	if r.Pass {
		return
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  FAIL seed %d: %s\n", r.Seed, indent(f, "    "))
	}
	if len(r.Timeline) > 0 {
		fmt.Fprintf(w, "  timeline (last %d events):\n", len(r.Timeline))
		for _, l := range r.Timeline {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	fmt.Fprintf(w, "  replay: %s\n", r.Replay)
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func writeTotal(w io.Writer, rep *simReport) {
	t := rep.Total
	fmt.Fprintf(w, "total: %d seeds × %d workspaces (%s)  %.1fh simulated  wall %.2fs  speed %.0fx  ops %s  errors %d  display %s  %d passed, %d failed\n",
		t.Seeds, rep.Workspaces, rep.System, t.SimHours, t.WallSeconds, t.Speed, opsString(t.Ops), t.Errors, displayString(t.Display), t.Passed, t.Failed)
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: not every seed ran")
	}
}

func writeJSON(w io.Writer, rep *simReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	return nil
}
