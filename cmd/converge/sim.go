package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl"
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
}

// simEnv is what the sim command runs against; tests replace parts of it.
type simEnv struct {
	// system builds the system under test (a fresh one per run).
	system func() ports.System
	// checks run at the end of every run.
	checks []func(*sim.Sim) []string
	// progress receives a progress line per seed (nil: none).
	progress io.Writer
	// now is the wall clock, for timing runs.
	now func() time.Time
}

func runSimCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// A simulation allocates a great deal of short-lived garbage; trading
	// memory for fewer collections makes it markedly faster. GOGC, when
	// set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	env := simEnv{system: refimpl.NewSystem, now: time.Now}
	if isTerminal(stderr) {
		env.progress = stderr
	}
	return runSim(ctx, args, stdout, stderr, env)
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

const simUsage = `Usage: converge sim [flags]

Runs the deterministic simulator against the reference coordinator for
seeds S … S+N-1. Each seed runs twice and fails if the two history hashes
differ; the user workload, ids and (later) faults all follow from the seed,
so a failing seed replays exactly with --seed S --seeds 1.

Flags:
  --seed S           first seed (default 1)
  --seeds N          number of seeds to run, S … S+N-1 (default 20)
  --workspaces W     workspaces the user workload creates per run (default 50)
  --duration D       simulated time per run, a Go duration such as 24h or
                     90m (default 24h)
  --coordinators K   coordinator instances per run; one leads, the others
                     stand by (default 2)
  --json             print one JSON object (runs and total) instead of text

Output: one line per seed — seed, simulated hours, wall time, speed
(simulated time per wall time, counting both runs of the seed), operations
completed by kind, terminal errors, final display states, PASS or FAIL —
then a total. A failing seed also prints its failures, the last timeline
lines of its history and the command that replays it. Progress goes to
stderr when stderr is a terminal.

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
	fs.IntVar(&o.coordinators, "coordinators", sim.DefaultCoordinators, "")
	fs.BoolVar(&o.json, "json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, true, nil
		}
		return o, false, err
	}
	switch {
	case fs.NArg() > 0:
		return o, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.seeds < 1:
		return o, false, fmt.Errorf("--seeds %d: want at least 1", o.seeds)
	case o.workspaces < 1:
		return o, false, fmt.Errorf("--workspaces %d: want at least 1", o.workspaces)
	case o.duration <= 0:
		return o, false, fmt.Errorf("--duration %s: want a positive duration", o.duration)
	case o.coordinators < 1:
		return o, false, fmt.Errorf("--coordinators %d: want at least 1", o.coordinators)
	case o.seed+uint64(o.seeds-1) < o.seed:
		return o, false, fmt.Errorf("--seed %d with --seeds %d overflows", o.seed, o.seeds)
	}
	return o, false, nil
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
	rep := newSimReport(o, env.system().Name())
	for i := 0; i < o.seeds; i++ {
		seed := o.seed + uint64(i)
		if env.progress != nil {
			fmt.Fprintf(env.progress, "\r\033[K[%d/%d] seed %d: %d workspaces × %s …", i+1, o.seeds, seed, o.workspaces, shortDuration(o.duration))
		}
		cfg := sim.Config{
			Seed:         seed,
			Workspaces:   o.workspaces,
			Duration:     o.duration,
			Coordinators: o.coordinators,
			System:       env.system(),
			Checks:       env.checks,
		}
		start := env.now()
		res, err := sim.Check(ctx, cfg)
		r := newRunReport(o, res, err, env.now().Sub(start))
		if ctx.Err() != nil {
			rep.Interrupted = true
			break
		}
		rep.add(r)
		if !o.json {
			writeRun(stdout, r)
		}
	}
	if env.progress != nil {
		fmt.Fprint(env.progress, "\r\033[K")
	}
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
