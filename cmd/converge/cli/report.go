package cli

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
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// simReport is the sim command's whole report (also its JSON form).
type simReport struct {
	System       string `json:"system"`
	Workspaces   int    `json:"workspaces"`
	Duration     string `json:"duration"`
	Quiet        string `json:"quiet"`
	Faults       string `json:"faults"`
	Coordinators int    `json:"coordinators"`
	Jobs         int    `json:"jobs"`
	ruleReport
	Runs  []runReport `json:"runs"`
	Total totalReport `json:"total"`
	// Coverage is each checker's obligation over every seed, and what
	// steering did; StateEdges and FaultEdges the state-edge matrix.
	Coverage    *claimReport `json:"coverage"`
	StateEdges  edgeReport   `json:"state_edges"`
	FaultEdges  edgeReport   `json:"fault_edges"`
	Interrupted bool         `json:"interrupted,omitempty"`
	// Errors are runs that could not be carried out.
	Errors []string `json:"errors,omitempty"`

	tally      *wssim.Tally
	stateEdges map[string]int
	faultEdges map[string]int
	faultMix   wssim.FaultMix
}

// edgeReport is one half of the state-edge matrix over every seed: each
// edge gone through with its count, and every edge never gone through.
type edgeReport struct {
	Total     int            `json:"total"`
	Seen      map[string]int `json:"seen"`
	NeverSeen []string       `json:"never_seen"`
}

func newEdgeReport(all []string, seen map[string]int) edgeReport {
	unseen := wssim.Unseen(all, seen)
	if unseen == nil {
		unseen = []string{}
	}
	return edgeReport{Total: len(all), Seen: seen, NeverSeen: unseen}
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
	Seed        uint64  `json:"seed"`
	SimHours    float64 `json:"sim_hours"`
	WallSeconds float64 `json:"wall_seconds"`
	// Speed is simulated time per wall time, both runs of the seed
	// counted.
	Speed float64 `json:"speed"`
	Hash  string  `json:"hash"`
	// Deterministic: the seed's two runs recorded the same history.
	Deterministic bool              `json:"deterministic"`
	Events        int               `json:"events"`
	APICalls      int               `json:"api_calls"`
	FaultKinds    []string          `json:"fault_kinds"`
	FaultActions  int               `json:"fault_actions"`
	Ops           map[string]int    `json:"ops"`
	Errors        int               `json:"errors"`
	Display       map[string]int    `json:"display"`
	Pass          bool              `json:"pass"`
	Failures      []string          `json:"failures,omitempty"`
	Violations    []violationReport `json:"violations,omitempty"`
	Timeline      []string          `json:"timeline,omitempty"`
	// Exercised counts, per checker, how often its situation arose in
	// this seed; Steering is what coverage steering forced on (none for
	// an unsteered seed).
	Exercised map[string]int   `json:"exercised"`
	Steering  *engine.Steering `json:"steering,omitempty"`
	// Rerun reruns the seed from the command line; ReplayFile is the
	// replay file written for a failing seed and ReplayCommand replays it.
	Rerun         string `json:"rerun,omitempty"`
	ReplayFile    string `json:"replay_file,omitempty"`
	ReplayCommand string `json:"replay_command,omitempty"`
	// Shrunk is what shrinking did to the replay file (absent when it
	// was not tried: shrinking off, or no checker violated).
	Shrunk *shrinkReport `json:"shrunk,omitempty"`
}

// checkerReport is one checker's verdict over every seed.
type checkerReport struct {
	Name     string `json:"name"`
	Contract string `json:"contract"`
	// Verdict is pass, violated, warned, not exercised or unmet (its
	// situation arose fewer than --min-exercised times).
	Verdict string `json:"verdict"`
	// Situation is the checker's obligation; Exercised how often it
	// arose, in Seeds seeds, first in FirstSeed; Met whether that is at
	// least --min-exercised; Allowed whether --allow-unexercised names it.
	Situation     string `json:"situation"`
	Exercised     int    `json:"exercised"`
	Seeds         int    `json:"seeds"`
	FirstSeed     uint64 `json:"first_seed,omitempty"`
	Met           bool   `json:"met"`
	Allowed       bool   `json:"allowed,omitempty"`
	Violations    int    `json:"violations"`
	ViolatedSeeds int    `json:"violated_seeds"`
	// Figures are the checker's measurements (not verdicts): each one's
	// sum over every seed and its largest value in one seed.
	Figures []figureReport `json:"figures,omitempty"`
}

// figureReport is one figure of a checker over every seed.
type figureReport struct {
	Name  string  `json:"name"`
	Total float64 `json:"total"`
	Max   float64 `json:"max"`
}

// totalReport sums the runs.
type totalReport struct {
	Seeds    int     `json:"seeds"`
	SimHours float64 `json:"sim_hours"`
	// WallSeconds is the whole command's wall time; RunSeconds the sum
	// of the seeds' (larger with --jobs > 1).
	WallSeconds float64 `json:"wall_seconds"`
	RunSeconds  float64 `json:"run_seconds"`
	// Speed is simulated time (both runs of every seed) per wall second
	// of the whole command; SeedsPerMinute likewise.
	Speed          float64         `json:"speed"`
	SeedsPerMinute float64         `json:"seeds_per_minute"`
	Ops            map[string]int  `json:"ops"`
	Errors         int             `json:"errors"`
	Display        map[string]int  `json:"display"`
	Passed         int             `json:"passed"`
	Failed         int             `json:"failed"`
	NotRun         int             `json:"not_run,omitempty"`
	Checkers       []checkerReport `json:"checkers"`
}

func newSimReport(o *simOptions, system string) *simReport {
	return &simReport{
		System:       system,
		Workspaces:   o.workspaces,
		Duration:     shortDuration(o.duration),
		Quiet:        shortDuration(o.quiet),
		Faults:       o.faults.String(),
		Coordinators: o.coordinators,
		Jobs:         o.jobs,
		ruleReport:   newRuleReport(&o.simFlags),
		Runs:         []runReport{},
		Total:        totalReport{Ops: map[string]int{}, Display: map[string]int{}},
		tally:        wssim.NewTally(),
		stateEdges:   map[string]int{},
		faultEdges:   map[string]int{},
		faultMix:     o.faults,
	}
}

// runsPerSeed: wssim.Check runs every seed twice.
const runsPerSeed = 2

func (c *config) newRunReport(o *simOptions, res wssim.Result, err error, wall time.Duration, st *engine.Steering) runReport {
	r := runReport{
		Seed:          res.Seed,
		SimHours:      res.SimDuration.Hours(),
		WallSeconds:   wall.Seconds(),
		Speed:         speed(runsPerSeed*res.SimDuration, wall),
		Hash:          res.Hash,
		Deterministic: !isNondeterministic(err),
		Events:        res.Events,
		APICalls:      res.APICalls,
		FaultKinds:    []string{},
		Ops:           map[string]int{},
		Errors:        res.Errors,
		Display:       map[string]int{},
		Pass:          err == nil && res.OK(),
		Failures:      res.Failures,
		Timeline:      res.Tail,
		Exercised:     map[string]int{},
		Steering:      st,
	}
	if res.Report != nil {
		r.Exercised = res.Report.Exercised
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
		r.Violations = violationReports(res, wssim.DefaultStart)
	}
	if err != nil && len(r.Failures) == 0 && len(r.Violations) == 0 {
		r.Failures = []string{err.Error()}
	}
	if !r.Pass {
		r.Rerun = c.rerunCommand(o, res.Seed, st)
	}
	return r
}

func isNondeterministic(err error) bool {
	return err != nil && strings.Contains(err.Error(), wssim.ErrNondeterministic.Error())
}

func violationReports(res wssim.Result, start time.Time) []violationReport {
	var out []violationReport
	for i, v := range res.Report.Violations {
		vr := violationReport{Checker: v.Checker, Contract: v.Contract, Workspace: v.Subject,
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

func (rep *simReport) add(r runReport, res wssim.Result) {
	rep.Runs = append(rep.Runs, r)
	rep.tally.AddSeed(r.Seed, res.Report)
	for e, n := range res.StateEdges {
		rep.stateEdges[e] += n
	}
	for e, n := range res.FaultEdges {
		rep.faultEdges[e] += n
	}
	t := &rep.Total
	t.Seeds++
	t.SimHours += r.SimHours
	t.RunSeconds += r.WallSeconds
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

// finish computes the totals over the seeds run, wall being the whole
// command's wall time, each checker's verdict against its obligation,
// and the edges never seen; planned is the minimum of seeds (--seeds),
// steered the seeds steering ran.
func (rep *simReport) finish(wall time.Duration, planned, steered int, o *simOptions) {
	t := &rep.Total
	t.WallSeconds = wall.Seconds()
	t.Speed = speed(time.Duration(runsPerSeed*t.SimHours*float64(time.Hour)), wall)
	if wall > 0 {
		t.SeedsPerMinute = math.Round(float64(t.Seeds)/wall.Minutes()*10) / 10
	}
	t.NotRun = max(planned-t.Seeds, 0)
	claim := rep.tally.Claim(wssim.Obligations(), o.rule())
	rep.Coverage = newClaimReport(claim, steered, o.budget)
	t.Checkers = checkerReports(rep.tally, claim)
	rep.StateEdges = newEdgeReport(wssim.StateEdges(), rep.stateEdges)
	rep.FaultEdges = newEdgeReport(wssim.FaultEdges(rep.faultMix), rep.faultEdges)
}

func checkerReports(t *wssim.Tally, claim *judge.Claim) []checkerReport {
	var out []checkerReport
	for _, c := range wsjudge.All() {
		n := c.Name()
		st, _ := claim.Standing(n)
		cr := checkerReport{
			Name: n, Contract: c.Contract(), Verdict: string(st.Verdict), Situation: st.Situation,
			Exercised: t.Exercised[n], Seeds: st.Seeds, FirstSeed: st.First, Met: st.Met, Allowed: st.Allowed,
			Violations: t.Violations[n], ViolatedSeeds: t.ViolatedRuns[n],
		}
		for _, f := range wsjudge.FiguresOf(c) {
			key := n + "." + f
			cr.Figures = append(cr.Figures, figureReport{Name: f, Total: t.Figures[key], Max: t.FigureMax[key]})
		}
		out = append(out, cr)
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

// shortDuration renders d without trailing zero units ("24h", "1h30m").
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
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

// countsString lists the non-zero counts of keys, in order.
func countsString[K ~string](counts map[string]int, keys []K) string {
	var parts []string
	for _, k := range keys {
		if n := counts[string(k)]; n > 0 {
			parts = append(parts, string(k)+"="+strconv.Itoa(n))
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

// displayColumns are the final display states of the per-seed table.
var displayColumns = []struct {
	head  string
	state contracts.DisplayState
}{
	{"RUN", contracts.DisplayRunning}, {"STB", contracts.DisplayStandby}, {"ARC", contracts.DisplayArchived},
	{"PND", contracts.DisplayPending}, {"ERR", contracts.DisplayError}, {"DEL", contracts.DisplayDeleted},
}

// writeLegend explains the per-seed table (every line under 100 columns).
func writeLegend(w io.Writer, rep *simReport) {
	shard := ""
	if rep.Shard != "" {
		shard = ", shard " + rep.Shard
	}
	fmt.Fprintf(w, "converge sim: system %s, %d workspaces, %s of faults (%s) + %s quiet, %d jobs%s\n",
		rep.System, rep.Workspaces, rep.Duration, rep.Faults, rep.Quiet, rep.Jobs, shard)
	fmt.Fprint(w, `Each seed runs twice; det says whether both runs recorded the same history.
  sim h   simulated hours (fault phase + quiet)    wall s  wall seconds, both runs
  speed   simulated time per wall time              faults  fault actions injected
  ops     operations completed                      err     terminal errors recorded
  RUN STB ARC PND ERR DEL   final display states: RUNNING STANDBY ARCHIVED PENDING ERROR DELETED
`)
	fmt.Fprintf(w, "%6s %6s %7s %9s %6s %6s %4s", "seed", "sim h", "wall s", "speed", "faults", "ops", "err")
	for _, d := range displayColumns {
		fmt.Fprintf(w, " %4s", d.head)
	}
	fmt.Fprintf(w, "  %-4s %s\n", "det", "result")
}

// maxShownViolations is how many violations of a failing seed the text
// report prints in full.
const maxShownViolations = 5

func writeRun(w io.Writer, r runReport) {
	ops := 0
	for _, n := range r.Ops {
		ops += n
	}
	det := "ok"
	if !r.Deterministic {
		det = "DIFF"
	}
	fmt.Fprintf(w, "%6d %6.1f %7.2f %8.0f× %6d %6d %4d", r.Seed, r.SimHours, r.WallSeconds, r.Speed, r.FaultActions, ops, r.Errors)
	for _, d := range displayColumns {
		fmt.Fprintf(w, " %4d", r.Display[string(d.state)])
	}
	fmt.Fprintf(w, "  %-4s %s\n", det, verdict(r.Pass))
	if r.Steering != nil {
		fmt.Fprintf(w, "  steered toward %s: %s\n", r.Steering.Target, r.Steering)
	}
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
	fmt.Fprintf(w, "  rerun:  %s\n", r.Rerun)
	writeShrunk(w, "  ", r.Shrunk)
	if r.ReplayCommand != "" {
		fmt.Fprintf(w, "  replay: %s\n", r.ReplayCommand)
	}
}

// writeViolations prints the first violations, each with the timeline
// around its evidence, and says how many more there are.
func writeViolations(w io.Writer, seed uint64, vs []violationReport) {
	for i, v := range vs {
		if i == maxShownViolations {
			fmt.Fprintf(w, "  … and %d more violation(s), not shown (they are in --json and in the replay file)\n", len(vs)-i)
			break
		}
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
	if len(vs) >= wsjudge.MaxViolationsPerChecker {
		fmt.Fprintf(w, "  (a checker reports at most its first %d violations per run)\n", wsjudge.MaxViolationsPerChecker)
	}
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func writeTotal(w io.Writer, rep *simReport) {
	t := rep.Total
	fmt.Fprintf(w, "total: %d seeds: %d passed, %d failed", t.Seeds, t.Passed, t.Failed)
	if t.NotRun > 0 {
		fmt.Fprintf(w, ", %d not run", t.NotRun)
	}
	fmt.Fprintf(w, "\n  %.1f h simulated (×2 runs) in %.2f s wall: %.0f× real time, %.1f seeds/min\n",
		t.SimHours, t.WallSeconds, t.Speed, t.SeedsPerMinute)
	fmt.Fprintf(w, "  ops:     %s\n", countsString(t.Ops, contracts.AllOperations))
	fmt.Fprintf(w, "  final:   %s; %d terminal errors\n", countsString(t.Display, contracts.AllDisplay), t.Errors)
	writeCoverage(w, rep.Coverage, t.Seeds, func(name string) []string {
		for _, c := range t.Checkers {
			if c.Name != name {
				continue
			}
			var out []string
			for _, f := range c.Figures {
				out = append(out, fmt.Sprintf("figure %s: %.1f in all, at most %.1f in one seed", f.Name, f.Total, f.Max))
			}
			return out
		}
		return nil
	})
	writeEdges(w, "state edges", rep.StateEdges)
	writeEdges(w, "fault edges", rep.FaultEdges)
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: not every seed ran")
	}
}

// maxEdgeText bounds the never-seen edges a text report lists (--json
// lists them all).
const maxEdgeText = 600

// writeEdges prints how much of one half of the state-edge matrix the
// seeds went through, and compactly the edges they never did.
func writeEdges(w io.Writer, what string, er edgeReport) {
	if er.Total == 0 {
		return
	}
	head := fmt.Sprintf("%s: %d of %d seen", what, er.Total-len(er.NeverSeen), er.Total)
	if len(er.NeverSeen) == 0 {
		fmt.Fprintln(w, head)
		return
	}
	text := wssim.CompactEdges(er.NeverSeen)
	if len(text) > maxEdgeText {
		text = text[:strings.LastIndexByte(text[:maxEdgeText], ' ')] + " … (all in --json)"
	}
	wrap(w, "  ", head+"; never seen: "+text)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	return nil
}
