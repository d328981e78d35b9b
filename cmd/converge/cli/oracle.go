package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/record"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/sim/engine/chart"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// The oracle system's commands: `converge oracle sim | replay | mutants`,
// the oracle world's counterparts of the workspace commands, with the
// same exit codes, --json and --junit.

// The oracle world imports no daemon: the CLI registers the reference
// (refimpl/oracle), the daemon a run judges unless --mutant names
// another.
func init() { oraclesim.Register(oracled.NewSystem()) }

func (c *config) oracleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "oracle",
		Short: "judge the oracle daemon (the second system) in its deterministic simulator",
		Long: `The oracle system's commands: the reference oracle daemon (or one of its
mutants) run on the simulated chain and data sources under the faults of
ORACLE-SPEC 4.9, judged by the checkers O1–O18 of ORACLE-SPEC 5 and O19–O28
from audits of realistic daemon bugs. See docs/oracle.md.`,
		Args: noArgs,
	}
	cmd.AddCommand(c.oracleSimCommand(), c.oracleReplayCommand(), c.oracleMutantsCommand(), c.oracleConformCommand())
	return cmd
}

// oracleShape is the run shape the oracle commands share.
type oracleShape struct {
	requests int
	duration time.Duration
	quiet    time.Duration
	faults   int
	ops      int
	pool     int
}

func (s *oracleShape) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&s.requests, "requests", 4, "oracle requests registered at genesis (the moderator may register more)")
	f.DurationVar(&s.duration, "duration", 6*time.Minute, "length of the fault phase (workload and faults)")
	f.DurationVar(&s.quiet, "quiet", 4*time.Minute, "length of the quiet phase after it: healthy peers and sources, no faults; O16 judges it")
	f.IntVar(&s.faults, "faults", 8, "faults of ORACLE-SPEC 4.9 drawn per run (0: none)")
	f.IntVar(&s.ops, "ops", 6, "moderator actions drawn per run (0: none)")
	f.IntVar(&s.pool, "pool-size", 0, "the daemon's worker.pool_size (0: its default, 4)")
}

// options turns the shape into the world's options (a count of 0 is
// "none", which the world spells -1).
func (s *oracleShape) options(seed uint64, system oraclesim.System) oraclesim.Options {
	none := func(n int) int {
		if n == 0 {
			return -1
		}
		return n
	}
	return oraclesim.Options{Seed: seed, System: system, Requests: s.requests, FaultPhase: s.duration, QuietPhase: s.quiet,
		Faults: none(s.faults), Ops: none(s.ops), PoolSize: s.pool}
}

func (s *oracleShape) validate() error {
	if s.requests < 1 || s.duration <= 0 || s.quiet <= 0 || s.pool < 0 {
		return usagef("--requests %d, --duration %s, --quiet %s, --pool-size %d: want at least 1 request, positive phases, a pool size ≥ 0",
			s.requests, s.duration, s.quiet, s.pool)
	}
	if s.faults < 0 || s.ops < 0 {
		return usagef("--faults %d, --ops %d: want 0 or more", s.faults, s.ops)
	}
	if err := s.options(1, nil).Validate(); err != nil {
		return usagef("%s", trimBadInput(err))
	}
	return nil
}

// oracleSystem resolves --mutant ("" is the reference).
func oracleSystem(mutant string) (oraclesim.System, error) {
	if mutant == "" {
		if sys, ok := oraclesim.Lookup(oraclesim.ReferenceName); ok {
			return sys, nil
		}
		return nil, fmt.Errorf("no %s oracle daemon is registered", oraclesim.ReferenceName)
	}
	m, ok := oraclemutants.ByName(mutant)
	if _, src := oraclemutants.SourceByName(mutant); !ok && src {
		return nil, usagef("%q is a source mutant, built from the edited source: run it with converge oracle mutants --mutant %s", mutant, mutant)
	}
	if !ok {
		var names []string
		for _, m := range oraclemutants.All() {
			names = append(names, m.Name())
		}
		return nil, usagef("unknown oracle mutant %q: known are %s", mutant, strings.Join(names, ", "))
	}
	return m, nil
}

// ---- oracle sim ----

// oracleViolation is one violation in the JSON reports.
type oracleViolation struct {
	Checker  string `json:"checker"`
	Contract string `json:"contract"`
	Subject  string `json:"subject,omitempty"`
	// At is the virtual time since genesis ("+00:03:12.518").
	At       string  `json:"at"`
	Message  string  `json:"message"`
	Evidence []int64 `json:"evidence,omitempty"`
}

// newOracleViolation is v as JSON, its time from genesis.
func newOracleViolation(v judge.Violation, genesis time.Time) oracleViolation {
	return oracleViolation{Checker: v.Checker, Contract: v.Contract, Subject: v.Subject, At: record.Offset(v.At.Sub(genesis)),
		Message: v.Message, Evidence: v.Evidence}
}

type oracleSimOptions struct {
	oracleShape
	simFlags
	mutant string
}

// oracleRun is one seed's line of the report.
type oracleRun struct {
	Seed    uint64 `json:"seed"`
	Pass    bool   `json:"pass"`
	Hash    string `json:"hash"`
	Records int64  `json:"records"`
	WallMS  int64  `json:"wall_ms"`
	// Exercised counts, per checker, how often its situation arose in
	// this seed; Steering is what coverage steering forced on.
	Exercised  map[string]int    `json:"exercised"`
	Steering   *engine.Steering  `json:"steering,omitempty"`
	Violations []oracleViolation `json:"violations,omitempty"`
	Failures   []string          `json:"failures,omitempty"`
	// Shrunk is what shrinking did to the replay file (absent when it
	// was not tried: shrinking off, or no checker violated).
	Shrunk        *shrinkReport `json:"shrunk,omitempty"`
	ReplayFile    string        `json:"replay_file,omitempty"`
	ReplayCommand string        `json:"replay_command,omitempty"`
	report        *judge.Report
}

// oracleSimReport is the oracle sim command's JSON form.
type oracleSimReport struct {
	System string `json:"system"`
	ruleReport
	Runs         []oracleRun       `json:"runs"`
	Passed       int               `json:"passed"`
	Failed       int               `json:"failed"`
	Verdicts     map[string]string `json:"verdicts"`
	NotExercised []string          `json:"not_exercised"`
	// Coverage is each checker's obligation over every seed.
	Coverage    *claimReport `json:"coverage"`
	Errors      []string     `json:"errors,omitempty"`
	Interrupted bool         `json:"interrupted,omitempty"`
}

func (c *config) oracleSimCommand() *cobra.Command {
	var o oracleSimOptions
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "judge the reference oracle daemon (or a mutant) for seeds S … S+N-1",
		Long: `Runs the oracle world for seeds S … S+N-1: the reference daemon (or --mutant
one of its broken variants) on the simulated chain and data sources, with a
seeded workload (requests, peers, moderator actions) and the faults of
ORACLE-SPEC 4.9 in a fault phase, then a quiet phase, then a graceful stop.
The checkers O1–O28 judge each run's history. Each seed runs twice and fails
if the two history hashes differ. A failing seed writes a replay file (never
overwriting another) and prints the command that replays it.

A failing seed's replay file is shrunk first, as converge sim's is, while one
of the checkers it violated still fails: the shortest quiet phase, then fewer
requests, faults and moderator actions (none, 1, 2, 4, …: a run's faults and
actions are drawn from its seed in order, so n of them are the first n of the
seed's), then a fault phase that ends a minute after the earliest violation.
Shrinking is bounded by runs, never by time, so the same command writes the
same replay files: at most --shrink-budget runs per failing seed, for the
first --shrink-seeds failing seeds in seed order (later ones keep their replay
file as they failed). --no-shrink (or --shrink=false) writes them unshrunk.

A pass is evidence: each checker's situation (its obligation, ORACLE-SPEC
5.3) must arise at least --min-exercised times over the run. --seeds is the
minimum: while an obligation is unmet the run goes on, up to --seed-budget
seeds in batches of --batch, steering each batch's seeds toward the unmet
obligations (half their faults drawn among the fault kinds that tend to
produce them, and world shapes such as more requests than the pool). The
steering depends only on the batches before, never on --jobs; a steered
seed's replay file records it. --allow-unexercised names checkers that may
stay unmet; every report prints them. --steer F1,crowd forces one steering
(fault ids of ORACLE-SPEC 4.9 and the world features crowd, partial-quorums,
long-reorder, late-duplicates, ragged-completes) on every seed and turns the
run's own off; --shard i/n runs every n-th seed of the range, for CI
matrices, as converge sim does.

Output: one line per seed, then the coverage table: each checker's verdict
over every seed (pass, VIOLATED, NOT EXERCISED, UNMET), how often its
situation arose, in how many seeds and first in which.

Exit status: 0 pass, 1 a violation, 5 an obligation unmet after the budget,
2 bad usage, 3 the run could not be carried out, 130 interrupted.`,
		Example: `  converge oracle sim --seeds 100
  converge oracle sim --seed 7 --seeds 1 --requests 20 --duration 1h --json
  converge oracle sim --mutant no-resync-on-32 --seeds 5
  converge oracle sim --mutant no-resync-on-32 --seeds 5 --no-shrink
  converge oracle sim --mutant no-resync-on-32 --seeds 3 --html run.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd); err != nil {
				return err
			}
			oraclesim.TuneGC()
			return c.runOracleSim(cmd.Context(), &o)
		},
	}
	o.oracleShape.register(cmd)
	f := cmd.Flags()
	o.simFlags.register(f)
	f.StringVar(&o.mutant, "mutant", "", "judge this mutant of the reference daemon instead (see converge oracle mutants)")
	return cmd
}

func (o *oracleSimOptions) validate(cmd *cobra.Command) error {
	if err := o.oracleShape.validate(); err != nil {
		return err
	}
	err := o.simFlags.validate(cmd, oraclejudge.Names(), func(spec string) (*engine.Steering, error) {
		return engine.ParseSteering(spec, oraclesim.SteerFeatures())
	})
	if err != nil {
		return err
	}
	if err := o.rule().CheckParts(oraclesim.Obligations()); err != nil {
		return usagef("--allow-unexercised: %v", err)
	}
	_, err = oracleSystem(o.mutant)
	return err
}

func (c *config) runOracleSim(ctx context.Context, o *oracleSimOptions) error {
	system, err := oracleSystem(o.mutant)
	if err != nil {
		return err
	}
	rep := &oracleSimReport{System: system.Name(), ruleReport: newRuleReport(&o.simFlags), Verdicts: map[string]string{}}
	tally := judge.NewTally(oraclejudge.Names())
	seeds, minimum := o.simFlags.span()
	junit := &engine.JUnitSuites{Name: "converge oracle sim " + rep.System}
	status := progress{w: c.progress}
	type outcome struct {
		res *oraclesim.Result
		err error
		opt oraclesim.Options
	}
	camp := engine.Campaign[outcome]{
		Seeds: seeds, Min: minimum, Batch: o.batch, Jobs: o.jobs, Now: c.now,
		Run: func(ctx context.Context, seed uint64, st *engine.Steering) (outcome, error) {
			if o.steer != nil {
				st = o.steer.Clone()
			}
			opt := o.options(seed, system)
			opt.Steering = st
			res, _, err := engine.Twice[oraclesim.Options, *oraclesim.Result](ctx, oraclesim.Runner{}, opt)
			if err != nil && !errors.Is(err, engine.ErrNondeterministic) {
				return outcome{}, err
			}
			return outcome{res, err, opt}, nil
		},
		Sample: func(_ uint64, st *engine.Steering, out outcome) engine.Sample { return oraclesim.Sample(st, out.res) },
		Emit: func(out engine.Outcome[outcome], _ *engine.Steering) bool {
			if out.Err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("seed %d: %v", out.Seed, out.Err))
				return false
			}
			if ctx.Err() != nil {
				return false
			}
			res := out.R.res
			r := oracleRun{Seed: out.Seed, Hash: res.Hash, Records: res.Records, WallMS: out.Wall.Milliseconds(), report: res.Report,
				Exercised: res.Report.Exercised, Steering: out.R.opt.Steering}
			for _, v := range res.Report.Violations {
				r.Violations = append(r.Violations, newOracleViolation(v, oraclesim.Genesis))
			}
			if out.R.err != nil {
				r.Failures = append(r.Failures, out.R.err.Error())
			}
			r.Pass = len(r.Violations) == 0 && len(r.Failures) == 0
			if !r.Pass {
				rep.Failed++
				path, shrunk, err := c.saveOracleReplay(ctx, o, out.R.opt, res)
				r.Shrunk = shrunk
				if err != nil {
					r.Failures = append(r.Failures, "replay file not written: "+err.Error())
				} else {
					r.ReplayFile, r.ReplayCommand = path, c.commandLine("oracle", "replay", absPath(path))
				}
			} else {
				rep.Passed++
			}
			tally.AddSeed(out.Seed, res.Report)
			rep.Runs = append(rep.Runs, r)
			junit.Suites = append(junit.Suites, oracleSuite(rep.System, r, out.Wall))
			if !o.json {
				status.clear()
				writeOracleRun(c.stdout, r)
			}
			showProgress(&status, len(rep.Runs), minimum, rep.Failed)
			return !(o.stopFirst && !r.Pass)
		},
		Settled: func() bool { return rep.Failed > 0 },
	}
	if o.steer == nil {
		camp.Steerer = oraclesim.NewSteerer(o.rule())
	}
	end := camp.Go(ctx)
	status.clear()
	rep.Interrupted = ctx.Err() != nil
	claim := tally.Claim(oraclesim.Obligations(), o.rule())
	rep.Coverage = newClaimReport(claim, end.Steered, o.budget)
	for _, st := range claim.Standings {
		rep.Verdicts[st.Checker] = string(st.Verdict)
	}
	rep.NotExercised = tally.NotExercised()
	if o.html != "" && len(rep.Runs) > 0 {
		i := firstFailing(rep.Runs, func(r oracleRun) bool { return r.Pass })
		opt := o.options(rep.Runs[i].Seed, system)
		opt.Steering, opt.Keep = rep.Runs[i].Steering, true
		if err := writeOracleHTML(ctx, o.html, opt); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	return c.endSim(&o.simFlags, func() *engine.JUnitSuites {
		junit.Suites = append(junit.Suites, claimSuite("checkers over every seed", "oracle."+rep.System, claim))
		return junit
	}, rep, func(w io.Writer) { writeOracleTotals(w, rep) },
		simVerdict{errors: rep.Errors, interrupted: rep.Interrupted, failed: rep.Failed, unmet: rep.Coverage.Unmet})
}

// saveOracleReplay writes the replay file of a failing run, shrunk first
// unless shrinking is off or its bound reached, and returns its path and
// what shrinking did (nil when it was not tried).
func (c *config) saveOracleReplay(ctx context.Context, o *oracleSimOptions, opt oraclesim.Options, res *oraclesim.Result) (string, *shrinkReport, error) {
	sr := c.shrinkFailing(&o.shrinking, oraclesim.Runner{}.Violated(res), func(fails func([]string) bool) (fmt.Stringer, fmt.Stringer, int, error) {
		sh, err := oraclesim.Shrink(ctx, opt, func(r *oraclesim.Result) bool { return fails(oraclesim.Runner{}.Violated(r)) }, o.shrinkBudget)
		if err == nil {
			opt, res = sh.Options, sh.Result
		}
		return sh.From, sh.To, sh.Runs, err
	})
	path, err := writeOracleReplay(o.replayDir, opt, o.mutant, res)
	return path, sr, err
}

// writeOracleReplay writes the replay file of run res of options opt
// (mutant names the mutant, "" for a system) into dir, never over another.
func writeOracleReplay(dir string, opt oraclesim.Options, mutant string, res *oraclesim.Result) (string, error) {
	f := oraclesim.NewReplay(opt, mutant, res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("replay dir: %w", err)
	}
	name := "oracle-" + res.System
	if mutant != "" {
		name = "oracle-mutant-" + mutant
	}
	return engine.WriteNew(dir, engine.SafeName(name+"-seed-"+strconv.FormatUint(res.Seed, 10)), f)
}

// oracleSuite is one seed's JUnit suite: a case per checker.
func oracleSuite(system string, r oracleRun, wall time.Duration) engine.JUnitSuite {
	s := engine.JUnitSuite{Name: fmt.Sprintf("%s seed %d", system, r.Seed), Time: wall.Seconds()}
	for _, n := range oraclejudge.Names() {
		jc := engine.CheckerCase(n, "oracle."+system, r.report, nil)
		switch {
		case jc.Failure != nil:
		case r.report.Verdict(n) == judge.NotExercised:
			jc.Skipped = &engine.JUnitSkipped{Message: "not exercised in this seed (the run's verdict is in the suite \"checkers over every seed\")"}
		}
		s.Add(jc)
	}
	if len(r.Failures) > 0 {
		s.Add(engine.JUnitCase{Name: "run", Classname: "oracle." + system,
			Failure: &engine.JUnitFailure{Message: "run failed", Text: strings.Join(r.Failures, "\n")}})
	}
	return s
}

func writeOracleRun(w io.Writer, r oracleRun) {
	status := "pass"
	if !r.Pass {
		status = "FAIL"
	}
	fmt.Fprintf(w, "seed %-6d %-4s  hash %s  %7d records  %5d ms\n", r.Seed, status, r.Hash[:16], r.Records, r.WallMS)
	if r.Steering != nil {
		fmt.Fprintf(w, "    steered toward %s: %s\n", r.Steering.Target, r.Steering)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "    %s: %s %s\n", v.Checker, v.Subject, v.Message)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "    %s\n", f)
	}
	writeShrunk(w, "    ", r.Shrunk)
	if r.ReplayCommand != "" {
		fmt.Fprintf(w, "    replay: %s\n", r.ReplayCommand)
	}
}

func writeOracleTotals(w io.Writer, rep *oracleSimReport) {
	shard := ""
	if rep.Shard != "" {
		shard = " (shard " + rep.Shard + ")"
	}
	fmt.Fprintf(w, "\n%s: %d seeds%s, %d passed, %d failed\n", rep.System, len(rep.Runs), shard, rep.Passed, rep.Failed)
	writeCoverage(w, rep.Coverage, len(rep.Runs), nil)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}

// ---- oracle replay ----

// oracleReplayReport is the oracle replay command's JSON form.
type oracleReplayReport struct {
	replayCheck
	Pass       bool              `json:"pass"`
	Violations []oracleViolation `json:"violations,omitempty"`
	Timeline   []string          `json:"timeline,omitempty"`
}

// writeOracleHTML runs opt again (it reproduces exactly) keeping its
// records, and writes its timeline page to path.
func writeOracleHTML(ctx context.Context, path string, opt oraclesim.Options) error {
	opt.Keep = true
	res, err := oraclesim.Run(ctx, opt)
	if err != nil {
		return fmt.Errorf("re-run seed %d for --html: %w", opt.Seed, err)
	}
	return WriteFile(path, func(w io.Writer) error { return chart.HTML(w, oraclesim.Page(res.System, res)) })
}

func (c *config) oracleReplayCommand() *cobra.Command {
	var full, asJSON bool
	var htmlFile string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "re-run an oracle replay file and show its violations and timeline",
		Long: `Re-runs the run an oracle replay file describes (written by converge oracle
sim for a failing seed): the same daemon (the reference or a mutant), shape and
seed, so the same history. It checks the history hash against the recorded
one, then prints the violations with the records around their evidence.

Exit status: 0 when the run reproduces (same hash), 1 when it does not, 2 for
a file that is malformed, another world's, or out of range.`,
		Example: `  converge oracle replay ~/.local/state/converge/replays/oracle-reference-seed-7.json
  converge oracle replay --full --json FILE`,
		Args: exactArgs(1, "exactly one replay file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if htmlFile != "" {
				if err := checkWritable("--html", htmlFile); err != nil {
					return err
				}
			}
			return c.runOracleReplay(cmd.Context(), args[0], full, asJSON, htmlFile)
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "print the whole timeline instead of the records around each violation")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	cmd.Flags().StringVar(&htmlFile, "html", "", "also write the run's HTML timeline (the daemon, the faults, swimlanes per request, the first violation marked) to this file")
	return cmd
}

func (c *config) runOracleReplay(ctx context.Context, path string, full, asJSON bool, htmlFile string) error {
	b, err := engine.ReadFile(path)
	if err != nil {
		return usagef("%s", trimBadInput(err))
	}
	f, err := oraclesim.DecodeReplay(bytes.NewReader(b))
	if err != nil {
		return usagef("%s: %s", path, trimBadInput(err))
	}
	system, err := oracleSystem(f.Mutant)
	if err != nil {
		return err
	}
	o, err := f.Options(system)
	if err != nil {
		return usagef("%s: %s", path, trimBadInput(err))
	}
	o.Keep = true
	res, err := oraclesim.Run(ctx, o)
	if err != nil {
		return &codeError{code: ExitError, err: err}
	}
	rep := oracleReplayReport{replayCheck: newReplayCheck(path, res.System, res.Seed, res.Hash, f.Hash), Pass: len(res.Report.Violations) == 0}
	for _, v := range res.Report.Violations {
		rep.Violations = append(rep.Violations, newOracleViolation(v, oraclesim.Genesis))
	}
	rep.Timeline = oracleTimeline(res, full)
	if htmlFile != "" {
		if err := WriteFile(htmlFile, func(w io.Writer) error { return chart.HTML(w, oraclesim.Page(res.System, res)) }); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	if asJSON {
		if err := writeJSON(c.stdout, rep); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	} else {
		fmt.Fprintf(c.stdout, "%s seed %d: hash %s (recorded %s): ", rep.System, rep.Seed, rep.Hash[:16], shortHash(f.Hash))
		if rep.HashMatches {
			fmt.Fprintln(c.stdout, "reproduced")
		} else {
			fmt.Fprintln(c.stdout, "NOT REPRODUCED")
			if record.OldHash(f.Hash) {
				fmt.Fprintln(c.stdout, oldHashNote)
			}
		}
		for _, v := range res.Report.Violations {
			fmt.Fprintf(c.stdout, "%s\n", v.String())
		}
		for _, l := range rep.Timeline {
			fmt.Fprintf(c.stdout, "  %s\n", l)
		}
	}
	if !rep.HashMatches {
		return exitWith(ExitFailed)
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// oracleTimeline is the whole timeline (full), or the records around each
// violation's evidence.
func oracleTimeline(res *oraclesim.Result, full bool) []string {
	if full {
		return history.Timeline(res.Events, oraclesim.Genesis)
	}
	var out []string
	seen := map[int64]bool{}
	for _, v := range res.Report.Violations {
		for _, seq := range v.Evidence {
			for s := seq - 3; s <= seq+3; s++ {
				if s < 1 || int(s) > len(res.Events) || seen[s] {
					continue
				}
				seen[s] = true
				out = append(out, history.Line(res.Events[s-1], oraclesim.Genesis))
			}
		}
	}
	return out
}

// ---- oracle mutants ----

// oracleMutantsReport is the oracle kill matrix's JSON form: what both
// worlds' kill matrices report.
type oracleMutantsReport struct {
	killReport[oraclesim.Size]
}

// oracleMutantSet is what one `converge oracle mutants` runs.
type oracleMutantSet struct {
	ports   []*oraclemutants.Mutant
	sources []*oraclemutants.SourceMutant
}

func (c *config) oracleMutantsCommand() *cobra.Command {
	var f killFlags
	cmd := &cobra.Command{
		Use:   "mutants",
		Short: "the oracle kill matrix (ORACLE-SPEC 5.4): find, per mutant, the first seed its expected checker kills it",
		Long: `Runs every mutant of the reference oracle daemon (or those --mutant names)
on seeds S, S+1, … until one of the checkers ORACLE-SPEC 5.4 names for it
reports a violation that the reference, run on the same seed and options,
does not show, and prints the kill matrix: the same search, table, --json
and --junit as converge mutants. Two kinds: "ports" mutants are the
reference behind bent ports, run in this process; "source" mutants are the
reference with a few lines of its source edited, built with go build
-overlay from the module's source (found where this binary was built, or in
the working directory) and judged here. Without a go command or the source
the source mutants are reported as skipped. A source mutant marked with a
known gap is one whose situation the simulated world cannot yet produce; its
survival is reported, not counted.

--shrink-budget N shrinks each kill within N runs while the mutant still
fails the checker that killed it (the fewest requests, faults, moderator
actions and the shortest phases, as converge oracle sim shrinks). --save DIR
writes each kill of a ports mutant as a replay file for converge oracle
replay (a source mutant is rebuilt only by this command, so it has none).

Mutants are hunted in parallel on --jobs cores. Exit status 1 when a mutant
survives --seeds seeds.`,
		Example: `  converge oracle mutants
  converge oracle mutants --mutant pool-limit-ignored --json
  converge oracle mutants --mutant pool-limit-ignored,nonce-not-plus-one --shrink-budget 20 --save kills
  converge oracle mutants --mutant success-leaves-job-pending
  converge oracle mutants --list`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			set, err := chooseOracleMutants(f.names())
			if err != nil {
				return err
			}
			if f.list {
				return c.listOracleMutants(set, f.json)
			}
			oraclesim.TuneGC()
			return c.runOracleMutants(cmd.Context(), set, &f)
		},
	}
	f.register(cmd, 40, 0)
	return cmd
}

// chooseOracleMutants is the catalogue, or the mutants named (each once,
// ports mutants first as the catalogue runs them).
func chooseOracleMutants(names []string) (oracleMutantSet, error) {
	if len(names) == 0 {
		return oracleMutantSet{ports: oraclemutants.All(), sources: oraclemutants.Sources()}, nil
	}
	var set oracleMutantSet
	for _, name := range names {
		if m, ok := oraclemutants.ByName(name); ok {
			set.ports = append(set.ports, m)
		} else if m, ok := oraclemutants.SourceByName(name); ok {
			set.sources = append(set.sources, m)
		} else {
			return oracleMutantSet{}, usagef("unknown oracle mutant %q: known are %s", name, strings.Join(oracleMutantNames(), ", "))
		}
	}
	return set, nil
}

func (c *config) listOracleMutants(set oracleMutantSet, asJSON bool) error {
	var out []mutantEntry
	for _, m := range set.ports {
		out = append(out, mutantEntry{Mutant: m.Name(), Kind: "ports", Expected: m.Kills})
	}
	for _, m := range set.sources {
		out = append(out, mutantEntry{Mutant: m.Name(), Kind: "source", Expected: m.Kills, Bug: m.Bug, KnownGap: m.Gap})
	}
	return c.listMutants(out, asJSON)
}

// oracleMutantNames lists both catalogues' names.
func oracleMutantNames() []string {
	var names []string
	for _, m := range oraclemutants.All() {
		names = append(names, m.Name())
	}
	for _, m := range oraclemutants.Sources() {
		names = append(names, m.Name())
	}
	return names
}

// oracleCandidates are the hunts of set: the ports mutants, then the source
// mutants built (every one skipped, with the reason, on a machine that
// cannot build them). The end function removes the builds.
func (c *config) oracleCandidates(ctx context.Context, set oracleMutantSet, f *killFlags) ([]killCandidate[oraclesim.Size], func(), error) {
	var out []killCandidate[oraclesim.Size]
	for _, m := range set.ports {
		out = append(out, killCandidate[oraclesim.Size]{
			row: killRow[oraclesim.Size]{Name: m.Name(), Kind: "ports", Expected: m.Kills},
			hunt: func(ctx context.Context, row *killRow[oraclesim.Size]) error {
				return c.huntOracle(ctx, f, oraclemutants.NewHunt(m, f.seed, f.seeds, c.now), oraclesim.Runner{}, m.Name(), row)
			},
		})
	}
	if len(set.sources) == 0 {
		return out, func() {}, nil
	}
	b, err := oraclemutants.NewBuilder(ctx)
	if errors.Is(err, oraclemutants.ErrUnavailable) {
		for _, m := range set.sources {
			out = append(out, killCandidate[oraclesim.Size]{row: killRow[oraclesim.Size]{Name: m.Name(), Kind: "source", Expected: m.Kills,
				KnownGap: m.Gap, Skipped: err.Error()}})
		}
		return out, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	// The builds live in a temporary directory: one left behind is worth
	// a warning, not a failed run.
	done := func() {
		if err := b.Close(); err != nil {
			slog.Warn("source mutants' builds not removed", "err", err)
		}
	}
	built, err := b.BuildAll(ctx, set.sources)
	if err != nil {
		done()
		return nil, nil, err
	}
	for i, m := range set.sources {
		x := built[i]
		out = append(out, killCandidate[oraclesim.Size]{
			row: killRow[oraclesim.Size]{Name: m.Name(), Kind: "source", Expected: m.Kills, KnownGap: m.Gap},
			hunt: func(ctx context.Context, row *killRow[oraclesim.Size]) error {
				return c.huntOracle(ctx, f, oraclemutants.NewSourceHunt(m, x, f.seed, f.seeds, c.now), x.World(), "", row)
			},
		})
	}
	return out, done, nil
}

// huntOracle runs h into row, shrinking the kill in world w and saving it
// as a replay file of mutant (none: it cannot be replayed) as the flags
// ask.
func (c *config) huntOracle(ctx context.Context, f *killFlags, h *oraclemutants.Hunt, w engine.World[oraclesim.Options, *oraclesim.Result],
	mutant string, row *killRow[oraclesim.Size]) error {
	if f.shrinkBudget > 0 {
		h.Shrink = func(ctx context.Context, o oraclesim.Options, _ *oraclesim.Result, checker string) (oraclesim.Options, *oraclesim.Result, int, error) {
			sh, err := oraclesim.ShrinkIn(ctx, w, o, func(r *oraclesim.Result) bool { return slices.Contains(w.Violated(r), checker) }, f.shrinkBudget)
			return sh.Options, sh.Result, sh.Runs, err
		}
	}
	k, err := h.Run(ctx)
	if err != nil {
		return err
	}
	fillKill(row, k, oraclesim.SizeOf, oracleFirstViolation)
	if !k.Killed || f.save == "" || mutant == "" {
		return nil
	}
	row.ReplayFile, err = writeOracleReplay(f.save, k.Config, mutant, k.Run)
	return err
}

// oracleFirstViolation is r's first violation of checker.
func oracleFirstViolation(r *oraclesim.Result, checker string) string {
	if r == nil || r.Report == nil {
		return ""
	}
	for _, v := range r.Report.ByChecker(checker) {
		return v.Contract + " (" + v.Checker + "): " + v.Message
	}
	return ""
}

func (c *config) runOracleMutants(ctx context.Context, set oracleMutantSet, f *killFlags) error {
	cands, done, err := c.oracleCandidates(ctx, set, f)
	if err != nil {
		if ctx.Err() != nil {
			return exitWith(ExitInterrupted)
		}
		return &codeError{code: ExitError, err: err}
	}
	defer done()
	rep := oracleMutantsReport{killReport[oraclesim.Size]{Checkers: oraclejudge.Names()}}
	return runKillMatrix(ctx, c, f, killMatrix[oraclesim.Size]{
		name: "converge oracle mutants", class: "oracle.mutants",
		title:  "oracle kill matrix: each mutant's runs shaped as its catalogue entry says",
		size:   oraclesim.Size.String,
		replay: func(path string) []string { return []string{"oracle", "replay", absPath(path)} },
	}, cands, &rep.killReport, &rep)
}
