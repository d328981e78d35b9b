package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl"
	"github.com/wsconverge/converge/scenarios/mutants"
	"github.com/wsconverge/converge/sim"
)

// simOptions are the sim command's flags.
type simOptions struct {
	seed         uint64
	seeds        int
	workspaces   int
	duration     time.Duration
	coordinators int
	json         bool
	faults       sim.FaultMix
	quiet        time.Duration
	mutant       string
	replayDir    string
	shrink       bool
}

// simEnv is what the commands run against; tests replace parts of it.
type simEnv struct {
	// system builds the reference system under test (a fresh one per run).
	system func() ports.System
	// mutant builds the named mutant.
	mutant func(name string) (ports.System, error)
	// checks run at the end of every run.
	checks []func(*sim.Sim) []string
	// progress receives a progress line per seed (nil: none).
	progress io.Writer
	// now is the wall clock, for timing runs.
	now func() time.Time
}

func defaultEnv(stderr io.Writer) simEnv {
	env := simEnv{system: refimpl.NewSystem, mutant: lookupMutant, now: time.Now}
	if isTerminal(stderr) {
		env.progress = stderr
	}
	return env
}

func lookupMutant(name string) (ports.System, error) {
	m, err := mutants.Lookup(name)
	if err != nil {
		return nil, err
	}
	return m.System, nil
}

// systemFor is the system a run uses: the named mutant, or the reference.
func (env simEnv) systemFor(mutant string) (ports.System, error) {
	if mutant == "" {
		return env.system(), nil
	}
	return env.mutant(mutant)
}

// fastGC trades memory for fewer collections: a simulation allocates a
// great deal of short-lived garbage. GOGC, when set, still decides.
func fastGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func runSimCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fastGC()
	return runSim(ctx, args, stdout, stderr, defaultEnv(stderr))
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// defaultReplayDir is where failing runs' replay files go by default.
func defaultReplayDir() string { return filepath.Join(os.TempDir(), "converge-replays") }

const simUsage = `Usage: converge sim [flags]

Judges a system — the reference coordinator, or with --mutant one of its
deliberately broken variants — in the deterministic simulator, for seeds
S … S+N-1. Each run has two phases: faults (the seed decides which fault
kinds are on, swarm style, then when they strike) and user activity for
--duration, then a quiet phase (no faults, no users, crashed coordinators
restarted) in which every workspace must converge. Every contract checker
then judges the recorded history and the final world.

Each seed runs twice and fails if the two history hashes differ; the
workload, ids and faults all follow from the seed, so a failing seed
replays exactly. A failing seed writes a replay file (the system, the
configuration and the explicit fault plan) and prints the command that
replays it.

Flags:
  --seed S           first seed (default 1)
  --seeds N          number of seeds to run, S … S+N-1 (default 20)
  --workspaces W     workspaces the user workload creates per run (default 50)
  --duration D       length of the fault phase, a Go duration such as 24h or
                     90m (default 24h)
  --quiet D          length of the quiet phase after it (default 1h41m: the
                     convergence bound and a margin; 0: none)
  --faults MIX       swarm (default: every fault kind, each on or off per
                     seed), all, none, or a comma-separated list of kinds;
                     "@R" scales their rates (all@2)
  --coordinators K   coordinator instances per run; one leads, the others
                     stand by (default 2)
  --mutant NAME      judge the named mutant instead of the reference (see
                     converge mutants --list)
  --replay-dir DIR   where replay files go (default $TMPDIR/converge-replays)
  --shrink           shrink a failing seed (fewer faults, workspaces, time)
                     before writing its replay file
  --json             print one JSON object (runs and total) instead of text

Fault kinds: crash, depose, kill-session, outage, lost-response, delay-start,
kill-container, remove-container, lose-volume, corrupt-object, remove-object,
drop-messages, flush-redis, drop-feed, break-feed.

Output: one line per seed — seed, simulated hours, wall time, speed
(simulated time per wall time, counting both runs of the seed), fault
actions, operations completed by kind, terminal errors, final display
states, violations, PASS or FAIL — then a total and each checker's verdict
over every seed: pass, VIOLATED or "not exercised" (its situation never
arose). A failing seed also prints its failures and violations, the
timeline around each violation's evidence (virtual time since the start),
and the replay command. Progress goes to stderr when stderr is a terminal.

Exit codes: 0 every seed passed, 1 a seed failed, 2 usage error.
`

// parseSimFlags parses args; help is true for --help.
func parseSimFlags(args []string) (o simOptions, help bool, err error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Uint64Var(&o.seed, "seed", 1, "")
	fs.IntVar(&o.seeds, "seeds", 20, "")
	fs.IntVar(&o.workspaces, "workspaces", 50, "")
	fs.DurationVar(&o.duration, "duration", 24*time.Hour, "")
	fs.DurationVar(&o.quiet, "quiet", sim.DefaultQuiet, "")
	faults := fs.String("faults", "swarm", "")
	fs.IntVar(&o.coordinators, "coordinators", sim.DefaultCoordinators, "")
	fs.StringVar(&o.mutant, "mutant", "", "")
	fs.StringVar(&o.replayDir, "replay-dir", "", "")
	fs.BoolVar(&o.shrink, "shrink", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, true, nil
		}
		return o, false, err
	}
	if o.faults, err = sim.ParseFaultMix(*faults); err != nil {
		return o, false, fmt.Errorf("--faults: %w", err)
	}
	if o.replayDir == "" {
		o.replayDir = defaultReplayDir()
	}
	if fs.NArg() > 0 {
		return o, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkRunShape(o.seeds, o.workspaces, o.duration, o.quiet); err != nil {
		return o, false, err
	}
	switch {
	case o.coordinators < 1:
		return o, false, fmt.Errorf("--coordinators %d: want at least 1", o.coordinators)
	case o.seed+uint64(o.seeds-1) < o.seed:
		return o, false, fmt.Errorf("--seed %d with --seeds %d overflows", o.seed, o.seeds)
	}
	return o, false, nil
}

// config is the run of one seed.
func (o simOptions) config(seed uint64, system ports.System, env simEnv) sim.Config {
	return sim.Config{
		Seed:         seed,
		Workspaces:   o.workspaces,
		Duration:     o.duration,
		Quiet:        o.quiet,
		Faults:       o.faults,
		Coordinators: o.coordinators,
		System:       system,
		Checks:       env.checks,
	}
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer, env simEnv) int {
	o, help, err := parseSimFlags(args)
	if help {
		io.WriteString(stdout, simUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "converge sim: %v\n\n%s", err, simUsage)
		return exitUsage
	}
	first, err := env.systemFor(o.mutant)
	if err != nil {
		fmt.Fprintf(stderr, "converge sim: %v\n\n%s", err, simUsage)
		return exitUsage
	}
	rep := newSimReport(o, first.Name())
	for i := 0; i < o.seeds; i++ {
		seed := o.seed + uint64(i)
		if env.progress != nil {
			fmt.Fprintf(env.progress, "\r\033[K[%d/%d] seed %d: %d workspaces × %s …", i+1, o.seeds, seed, o.workspaces, shortDuration(o.duration))
		}
		system, err := env.systemFor(o.mutant)
		if err != nil {
			fmt.Fprintf(stderr, "converge sim: %v\n", err)
			return exitFailure
		}
		cfg := o.config(seed, system, env)
		start := env.now()
		res, err := sim.Check(ctx, cfg)
		r := newRunReport(o, res, err, env.now().Sub(start))
		if ctx.Err() != nil {
			rep.Interrupted = true
			break
		}
		if !r.Pass {
			path, err := writeReplayFile(ctx, o, cfg, res)
			if err != nil {
				fmt.Fprintf(stderr, "converge sim: seed %d: %v\n", seed, err)
			} else {
				r.ReplayFile = path
			}
		}
		rep.add(r, res.Report)
		if !o.json {
			writeRun(stdout, r)
		}
	}
	if env.progress != nil {
		fmt.Fprint(env.progress, "\r\033[K")
	}
	rep.finish()
	if o.json {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "converge sim: %v\n", err)
			return exitFailure
		}
	} else {
		writeTotal(stdout, rep)
	}
	if rep.Total.Failed > 0 || rep.Interrupted {
		return exitFailure
	}
	return exitOK
}

// writeReplayFile writes the replay file of a failing run (shrunk first
// with --shrink) and returns its path.
func writeReplayFile(ctx context.Context, o simOptions, cfg sim.Config, res sim.Result) (string, error) {
	if o.shrink && res.Report != nil && res.Report.Failed() {
		violated := map[string]bool{}
		for _, v := range res.Report.Violations {
			violated[v.Checker] = true
		}
		sh, err := sim.Shrink(ctx, cfg, func(r sim.Result) bool {
			if r.Report == nil {
				return false
			}
			for _, v := range r.Report.Violations {
				if violated[v.Checker] {
					return true
				}
			}
			return false
		}, 0)
		if err == nil {
			cfg, res = sh.Config, sh.Result
		}
	}
	f, err := sim.NewReplay(cfg, o.mutant, res)
	if err != nil {
		return "", err
	}
	path := filepath.Join(o.replayDir, sim.ReplayName(f.System, cfg.Seed))
	if err := sim.WriteReplay(path, f); err != nil {
		return "", err
	}
	return path, nil
}

// checkRunShape validates the flags every command that runs seeds shares.
func checkRunShape(seeds, workspaces int, duration, quiet time.Duration) error {
	switch {
	case seeds < 1:
		return fmt.Errorf("--seeds %d: want at least 1", seeds)
	case workspaces < 1:
		return fmt.Errorf("--workspaces %d: want at least 1", workspaces)
	case duration <= 0:
		return fmt.Errorf("--duration %s: want a positive duration", duration)
	case quiet < 0:
		return fmt.Errorf("--quiet %s: want a duration of 0 or more", quiet)
	}
	return nil
}
