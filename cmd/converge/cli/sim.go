package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
	"github.com/wsconverge/converge/sim/workspace/report"
)

// runShape is what every command that runs seeds shares.
type runShape struct {
	workspaces   int
	duration     time.Duration
	quiet        time.Duration
	coordinators int
	faultsSpec   string
	faults       wssim.FaultMix
}

func (r *runShape) register(cmd *cobra.Command, workspaces int) {
	f := cmd.Flags()
	f.IntVar(&r.workspaces, "workspaces", workspaces, "workspaces the user workload creates per run")
	f.DurationVar(&r.duration, "duration", 24*time.Hour, "length of the fault phase (a Go duration: 24h, 90m)")
	f.DurationVar(&r.quiet, "quiet", wssim.DefaultQuiet, "length of the quiet phase after it: no faults, no users, crashed coordinators restarted; every workspace must converge (0: none)")
	f.IntVar(&r.coordinators, "coordinators", wssim.DefaultCoordinators, "coordinator instances per run: one leads, the others stand by")
	f.StringVar(&r.faultsSpec, "faults", "swarm", `fault mix: swarm (each kind on or off per seed), all, none, or kinds "crash,outage"; "@R" scales rates (all@2)`)
}

func (r *runShape) validate() error {
	switch {
	case r.workspaces < 1 || r.workspaces > wssim.MaxWorkspaces:
		return usagef("--workspaces %d: want 1 to %d", r.workspaces, wssim.MaxWorkspaces)
	case r.duration <= 0 || r.duration > wssim.MaxDuration:
		return usagef("--duration %s: want a positive duration up to %s", r.duration, shortDuration(wssim.MaxDuration))
	case r.quiet < 0 || r.quiet > wssim.MaxDuration:
		return usagef("--quiet %s: want 0 up to %s", r.quiet, shortDuration(wssim.MaxDuration))
	case r.coordinators < 1 || r.coordinators > wssim.MaxCoordinators:
		return usagef("--coordinators %d: want 1 to %d", r.coordinators, wssim.MaxCoordinators)
	}
	m, err := wssim.ParseFaultMix(r.faultsSpec)
	if err != nil {
		return usagef("--faults: %s", trimBadInput(err))
	}
	r.faults = m
	return nil
}

// trimBadInput drops the "bad input: " marker an engine error carries
// (the CLI says so by its exit code).
func trimBadInput(err error) string {
	// The marker may stand after a file's name ("replay file F: bad
	// input: …"): it is for errors.Is, not for the user.
	return strings.ReplaceAll(err.Error(), engine.ErrBadInput.Error()+": ", "")
}

// simOptions are the sim command's flags.
type simOptions struct {
	runShape
	target
	simFlags
}

const simLong = `Judges a system in the deterministic simulator for seeds S … S+N-1: the
reference coordinator, a system registered in this binary (--system), with
--mutant one of the reference's deliberately broken variants, or with --exec an
implementation in any language run as a child process that gets its clock, its
ticks and every port call's answer over the driver protocol
(docs/driver-protocol.md).

Each run has two phases: faults and user activity for --duration (the seed
decides which fault kinds are on, swarm style, then when they strike), then
a quiet phase (no faults, no users, crashed coordinators restarted) in which
every workspace must converge. Every checker then judges the recorded
history and the final world. Each seed runs twice and fails if the two
history hashes differ; everything follows from the seed, so a failing seed
replays exactly. A failing seed writes a replay file (never overwriting
another) and prints the commands that rerun and replay it.

A pass is evidence: each checker states the situation it needs (its
obligation) and counts how often it arose. The run passes only if nothing
was violated and every obligation arose at least --min-exercised times.
--seeds is the minimum: while an obligation is unmet the run goes on, up to
--seed-budget seeds, in batches of --batch seeds, each batch steering its
seeds toward the unmet obligations (forcing on fault kinds and workload
shapes that tend to produce them: declared, and learned from the seeds
before). The steering of a batch depends only on the batches before it, so
a command gives the same seeds whatever --jobs is; a steered seed's replay
file and rerun command (--steer) record its steering. --allow-unexercised
names checkers that may stay unmet; every report prints them.

A failing seed's replay file is shrunk first (fewer fault actions, a
smaller fleet, shorter phases, while one of the checkers it violated still
fails), so it replays the smallest failing run found. Shrinking is bounded
so it stays affordable: at most --shrink-budget runs per failing seed, each
no larger than the seed's own run, and only for the first --shrink-seeds
failing seeds in seed order (later ones keep their replay file as they
failed). So it costs at most --shrink-budget × --shrink-seeds runs of the
failing seeds' size, one at a time, after the seed's own two runs. In
practice a shrink reaches one workspace in its third run and stops after
10 or 11, costing about twice the failing seed's own two runs:
"converge sim --mutant no-cas-claim --seeds 5" (all five seeds fail) took
2.3 CPU seconds with --no-shrink and 5.0 with the default (3 seeds shrunk;
6.4 with all 5), and 1.0-1.5 against 2.9-4.0 with --workspaces 20. Through
--exec each shrinking run starts the child again (docs/decisions/cli.md, DR363).
--no-shrink (or --shrink=false) writes replay files unshrunk.

Seeds run in parallel on --jobs cores (each seed's result is the same
whatever --jobs); --shard i/n runs every n-th seed of the range, for CI
matrices (each shard's obligations are judged on its own seeds).

Fault kinds: ` + "%s" + `.

Output: a legend, one line per seed, then totals and the coverage table:
each checker's verdict over every seed (pass, VIOLATED, NOT EXERCISED or
UNMET: its situation arose too rarely), how often its situation arose, in
how many seeds and first in which; then the state edges (observed × desired
× operation transitions, and fault kind × operation in progress) the seeds
never went through. A failing seed also prints its violations with the
timeline around their evidence. Progress goes to stderr when it is a
terminal.

Exit status: 0 pass, 1 a violation or a failed run, 5 an obligation unmet
after the budget (nothing violated), 2 bad usage, 3 the run could not be
carried out, 130 interrupted.`

func (c *config) simCommand() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "judge a system (or a mutant) in the deterministic simulator under faults",
		Long:  fmt.Sprintf(simLong, kindList()),
		Example: `  converge sim --seeds 20 --workspaces 50
  converge sim --seed 7 --seeds 1 --workspaces 1000 --json
  converge sim --mutant no-cas-claim --seeds 5 --workspaces 20
  converge sim --seeds 400 --shard 2/4 --junit seeds.xml
  converge sim --exec "python3 examples/python-coordinator/coordinator.py" --seeds 20 --html run.html`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd); err != nil {
				return err
			}
			fastGC()
			return c.runSim(cmd.Context(), &o)
		},
	}
	o.runShape.register(cmd, 50)
	o.target.register(cmd)
	f := cmd.Flags()
	o.simFlags.register(f)
	return cmd
}

func (o *simOptions) validate(cmd *cobra.Command) error {
	if err := o.runShape.validate(); err != nil {
		return err
	}
	if err := o.target.validate(cmd); err != nil {
		return err
	}
	return o.simFlags.validate(cmd, wsjudge.Names(), func(spec string) (*engine.Steering, error) { return wssim.ParseSteering(spec, o.faults) })
}

// CheckWritable is checkWritable for the commands added with WithCommands:
// a usage error (exit 2, one line) when path cannot be written once the
// run ends.
func CheckWritable(flag, path string) error { return checkWritable(flag, path) }

// checkWritable checks, before a run, that an output file can be written
// when the run ends: not a directory, in a directory that exists, and
// creatable there. It leaves the file as it found it (a file it had to
// create to try is removed).
func checkWritable(flag, path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return usagef("%s %s is a directory: want a file to write", flag, path)
	case err == nil && !fi.Mode().IsRegular():
		return usagef("%s %s is not a regular file", flag, path)
	case err == nil:
		f, oerr := os.OpenFile(path, os.O_WRONLY, 0)
		if oerr != nil {
			return usagef("%s %s cannot be written: %v", flag, path, errors.Unwrap(oerr))
		}
		return f.Close()
	case !errors.Is(err, os.ErrNotExist):
		return usagef("%s %s: %v", flag, path, errors.Unwrap(err))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return usagef("%s %s cannot be created: %v", flag, path, errors.Unwrap(err))
	}
	_ = f.Close()
	return os.Remove(path)
}

// fastGC trades memory for fewer collections: a simulation allocates a
// great deal of short-lived garbage. GOGC, when set, still decides.
func fastGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func (o *simOptions) config(seed uint64, system ports.System, checks []func(*wssim.Sim) []string, st *engine.Steering) wssim.Config {
	return wssim.Config{
		Steering:     st,
		Seed:         seed,
		Workspaces:   o.workspaces,
		Duration:     o.duration,
		Quiet:        o.quiet,
		Faults:       o.faults,
		Coordinators: o.coordinators,
		System:       system,
		Checks:       checks,
	}
}

// seedResult is one seed's outcome as the sim command keeps it.
type seedResult struct {
	res wssim.Result
	err error
	cfg wssim.Config
}

func (c *config) runSim(ctx context.Context, o *simOptions) error {
	first, done, err := c.build(o.target)
	if err != nil {
		return err
	}
	done()
	if err := o.config(o.seed, first, nil, o.steer).Validate(); err != nil {
		return usagef("%s", trimBadInput(err))
	}
	seeds, minimum := o.simFlags.span()
	rep := newSimReport(o, first.Name())
	text := !o.json
	if text {
		writeLegend(c.stdout, rep)
	}
	start := c.now()
	failed := 0
	var runs []report.Run
	status := progress{w: c.progress}
	camp := engine.Campaign[seedResult]{
		Seeds: seeds, Min: minimum, Batch: o.batch, Jobs: o.jobs, Now: c.now,
		Run: func(ctx context.Context, seed uint64, st *engine.Steering) (seedResult, error) {
			system, done, err := c.build(o.target)
			if err != nil {
				return seedResult{}, err
			}
			defer done()
			if o.steer != nil {
				st = o.steer.Clone()
			}
			cfg := o.config(seed, system, c.checks, st)
			res, err := driver.Check(ctx, cfg)
			return seedResult{res: res, err: err, cfg: cfg}, nil
		},
		Sample: func(_ uint64, st *engine.Steering, sr seedResult) engine.Sample { return wssim.Sample(st, sr.res) },
		Emit: func(out engine.Outcome[seedResult], st *engine.Steering) bool {
			if out.Err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("seed %d: %v", out.Seed, out.Err))
				return false
			}
			sr := out.R
			if ctx.Err() != nil {
				return false
			}
			r := c.newRunReport(o, sr.res, sr.err, out.Wall, sr.cfg.Steering)
			if !r.Pass {
				failed++
				path, shrunk, err := c.writeReplayFile(ctx, o, sr.cfg, sr.res)
				r.Shrunk = shrunk
				if err != nil {
					r.Failures = append(r.Failures, "replay file not written: "+err.Error())
				} else {
					r.ReplayFile = path
					r.ReplayCommand = c.commandLine("replay", absPath(path))
				}
			}
			rep.add(r, sr.res)
			runs = append(runs, report.Run{System: rep.System, Result: sr.res, Wall: out.Wall})
			if text {
				status.clear()
				writeRun(c.stdout, r)
			}
			showProgress(&status, len(rep.Runs), minimum, failed)
			return !(o.stopFirst && !r.Pass)
		},
		Settled: func() bool { return failed > 0 },
	}
	if o.steer == nil {
		camp.Steerer = wssim.NewSteerer(o.faults, o.rule())
	}
	end := camp.Go(ctx)
	status.clear()
	rep.finish(c.now().Sub(start), minimum, end.Steered, o)
	rep.Interrupted = ctx.Err() != nil
	if o.html != "" && len(rep.Runs) > 0 {
		if err := c.writeHTML(ctx, o, rep); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	return c.endSim(&o.simFlags, func() *engine.JUnitSuites {
		j := report.JUnit("converge sim "+rep.System, runs)
		j.Suites = append(j.Suites, claimSuite("checkers over every seed", rep.System, rep.Coverage.Claim))
		return j
	}, rep, func(w io.Writer) { writeTotal(w, rep) },
		simVerdict{errors: rep.Errors, interrupted: rep.Interrupted, failed: rep.Total.Failed, unmet: rep.Coverage.Unmet})
}

// writeHTML writes the timeline of the first failing seed (or the first
// seed) to o.html: the seed is run again (it reproduces exactly) to keep
// its history.
func (c *config) writeHTML(ctx context.Context, o *simOptions, rep *simReport) error {
	i := firstFailing(rep.Runs, func(r runReport) bool { return r.Pass })
	seed, st := rep.Runs[i].Seed, rep.Runs[i].Steering
	system, done, err := c.build(o.target)
	if err != nil {
		return err
	}
	defer done()
	start := c.now()
	s, res, err := wssim.Execute(ctx, driver.Judged(o.config(seed, system, c.checks, st)))
	if err != nil {
		return fmt.Errorf("re-run seed %d for --html: %w", seed, err)
	}
	return WriteFile(o.html, func(w io.Writer) error {
		return report.HTML(w, report.FromSim(system.Name(), s, res, c.now().Sub(start)))
	})
}

// rerunCommand is the complete command line that reruns one seed alone,
// with the steering it ran with.
func (c *config) rerunCommand(o *simOptions, seed uint64, st *engine.Steering) string {
	args := append([]string{"sim"}, o.target.flags()...)
	args = append(args, "--seed", strconv.FormatUint(seed, 10), "--seeds", "1", "--seed-budget", "1",
		"--workspaces", strconv.Itoa(o.workspaces), "--duration", shortDuration(o.duration),
		"--quiet", shortDuration(o.quiet), "--faults", o.faults.String(),
		"--coordinators", strconv.Itoa(o.coordinators))
	if st != nil {
		args = append(args, "--steer", st.String())
	}
	return c.commandLine(args...)
}

// shrinking is how the sim command shrinks failing seeds: by default, the
// first defaultShrinkSeeds failing seeds, each within defaultShrinkBudget
// runs (docs/decisions/cli.md, DR363).
type shrinking struct {
	shrink       bool
	noShrink     bool
	shrinkBudget int
	shrinkSeeds  int
	// shrunk counts the failing seeds shrunk so far (the command's Emit
	// runs one seed at a time, in seed order).
	shrunk int
}

// The defaults of --shrink-budget and --shrink-seeds.
const (
	defaultShrinkBudget = 40
	defaultShrinkSeeds  = 3
)

func (s *shrinking) register(f *pflag.FlagSet) {
	f.BoolVar(&s.shrink, "shrink", true, "shrink each failing seed's replay file (fewer faults, workspaces, time), within --shrink-budget and --shrink-seeds; --shrink=false or --no-shrink turns it off")
	f.BoolVar(&s.noShrink, "no-shrink", false, "write failing seeds' replay files unshrunk (the same as --shrink=false)")
	f.IntVar(&s.shrinkBudget, "shrink-budget", defaultShrinkBudget, "most runs spent shrinking one failing seed, each no larger than the seed's own run (0: do not shrink)")
	f.IntVar(&s.shrinkSeeds, "shrink-seeds", defaultShrinkSeeds, "most failing seeds shrunk per command, the first in seed order; later ones are written unshrunk (0: do not shrink)")
}

func (s *shrinking) validate(cmd *cobra.Command) error {
	switch {
	case s.noShrink && s.shrink && cmd.Flags().Changed("shrink"):
		return usagef("--shrink and --no-shrink contradict each other: give one")
	case s.shrinkBudget < 0 || s.shrinkBudget > 10_000:
		return usagef("--shrink-budget %d: want 0 to 10000", s.shrinkBudget)
	case s.shrinkSeeds < 0 || s.shrinkSeeds > 10_000:
		return usagef("--shrink-seeds %d: want 0 to 10000", s.shrinkSeeds)
	}
	return nil
}

// on reports whether failing seeds are shrunk at all.
func (s *shrinking) on() bool {
	return s.shrink && !s.noShrink && s.shrinkBudget > 0 && s.shrinkSeeds > 0
}

// shrinkReport is what shrinking a failing seed did, for its run report.
type shrinkReport struct {
	// From and To are the sizes of the run before and after; Runs how
	// many runs shrinking made, Seconds how long they took.
	From    string  `json:"from"`
	To      string  `json:"to"`
	Runs    int     `json:"runs"`
	Seconds float64 `json:"seconds"`
	// Skipped says why the seed was not shrunk (then From, To and Runs
	// are empty).
	Skipped string `json:"skipped,omitempty"`
}

// shrinkFailing shrinks a failing run, whichever its world, unless
// shrinking is off or its bound is reached: violated are the checkers the
// run violated (none: a failed run or a determinism difference, which
// shrinking could not keep failing), and shrink is the world's shrink,
// told by fails whether a run's checkers still include one of them (on
// success it keeps the shrunk run for the replay file). It returns what
// shrinking did, nil when it was not tried.
func (c *config) shrinkFailing(s *shrinking, violated []string,
	shrink func(fails func(checkers []string) bool) (from, to fmt.Stringer, runs int, err error)) *shrinkReport {
	switch {
	case !s.on() || len(violated) == 0:
		return nil
	case s.shrunk >= s.shrinkSeeds:
		return &shrinkReport{Skipped: fmt.Sprintf("not shrunk: --shrink-seeds %d failing seeds already shrunk", s.shrinkSeeds)}
	}
	s.shrunk++
	start := c.now()
	from, to, runs, err := shrink(func(checkers []string) bool {
		return slices.ContainsFunc(checkers, func(n string) bool { return slices.Contains(violated, n) })
	})
	if err != nil {
		return &shrinkReport{Skipped: "not shrunk: " + err.Error()}
	}
	return &shrinkReport{From: from.String(), To: to.String(), Runs: runs, Seconds: c.now().Sub(start).Seconds()}
}

// writeShrunk prints what shrinking did to a failing seed's replay file.
func writeShrunk(w io.Writer, indent string, s *shrinkReport) {
	switch {
	case s == nil:
	case s.Skipped != "":
		fmt.Fprintf(w, "%s%s\n", indent, s.Skipped)
	default:
		fmt.Fprintf(w, "%sshrunk: %s → %s (%d runs, %.1f s)\n", indent, s.From, s.To, s.Runs, s.Seconds)
	}
}

// writeReplayFile writes the replay file of a failing run, shrunk first
// unless shrinking is off or its bound reached, and returns its path and
// what shrinking did (nil when it was not tried).
func (c *config) writeReplayFile(ctx context.Context, o *simOptions, cfg wssim.Config, res wssim.Result) (string, *shrinkReport, error) {
	var violated []string
	if res.Report != nil && res.Report.Failed() {
		// The checkers, not a harness failure: shrinking keeps a
		// checker failing.
		violated = slices.DeleteFunc(wssim.Violated(res), func(n string) bool { return n == engine.Failure })
	}
	sr := c.shrinkFailing(&o.shrinking, violated, func(fails func([]string) bool) (fmt.Stringer, fmt.Stringer, int, error) {
		sh, err := wssim.Shrink(ctx, driver.Judged(cfg), func(r wssim.Result) bool { return fails(wssim.Violated(r)) }, o.shrinkBudget)
		if err == nil {
			cfg, res = sh.Config, sh.Result
		}
		return sh.From, sh.To, sh.Runs, err
	})
	f, err := wssim.NewReplay(cfg, o.target.mutant, res)
	if err != nil {
		return "", sr, err
	}
	path, err := wssim.SaveReplay(o.replayDir, f)
	return path, sr, err
}

// WriteFile creates path and lets write fill it (for --junit, --html and
// the like), its errors naming the path.
func WriteFile(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// kindList names every fault kind, for the help text.
func kindList() string {
	ks := wssim.FaultKinds()
	s := ""
	for i, k := range ks {
		if i > 0 {
			s += ", "
		}
		s += string(k)
	}
	for i, k := range wssim.OptInFaultKinds() {
		if i == 0 {
			s += "; named only (not in swarm or all): "
		} else {
			s += ", "
		}
		s += string(k)
	}
	return s
}
