package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/invariant"
	"github.com/wsconverge/converge/scenarios/mutants"
	"github.com/wsconverge/converge/sim"
)

const mutantsUsage = `Usage: converge mutants [flags]

The kill matrix: proves the harness's power on the catalogue of mutants —
the reference with one deliberately broken rule each. For each mutant it
runs seeds 1, 2, … (one run each, the default fault mix) until a checker
flags a violation that the reference, run on the same seed and plan, does
not show: the mutant is killed. It then shrinks the killing run (fewer
fault actions, workspaces and time) while the mutant still fails the same
checker, and prints the mutant × checker matrix, the seeds and wall time to
the first kill, and the shrunk counterexample's size.

Flags:
  --seeds N          most seeds per mutant (default 200)
  --workspaces W     workspaces per run (default 20)
  --duration D       fault phase per run (default 24h)
  --quiet D          quiet phase per run (default 1h41m)
  --faults MIX       the fault mix (default swarm; see converge sim --help)
  --only LIST        comma-separated mutant names to run (default all)
  --shrink-budget R  most runs spent shrinking each kill (default 40; 0: do
                     not shrink)
  --save DIR         write each kill's (shrunk) replay file into DIR
  --list             list the mutants and exit
  --json             print one JSON object instead of text

Exit codes: 0 every mutant killed, 1 a mutant survived, 2 usage error.
`

type mutantsOptions struct {
	seeds        int
	workspaces   int
	duration     time.Duration
	quiet        time.Duration
	faults       sim.FaultMix
	only         map[string]bool
	shrinkBudget int
	save         string
	list         bool
	json         bool
}

// mutantReport is one mutant's row.
type mutantReport struct {
	Name        string `json:"name"`
	Contract    string `json:"contract"`
	Description string `json:"description"`
	Killed      bool   `json:"killed"`
	// ByCorpus: the random search did not kill it within --seeds; its
	// stored counterexample (scenarios/mutants/corpus) did.
	ByCorpus bool `json:"by_corpus,omitempty"`
	// Seed killed it; Seeds is how many seeds ran.
	Seed  uint64 `json:"seed,omitempty"`
	Seeds int    `json:"seeds"`
	// WallSeconds is the wall time to the first kill (or to giving up),
	// the reference's run of the killing seed included.
	WallSeconds float64 `json:"wall_seconds"`
	// Checkers flagged it (and not the reference) in the killing run.
	Checkers  []string `json:"checkers,omitempty"`
	Violation string   `json:"violation,omitempty"`
	// Shrunk is the counterexample after shrinking (nil: not shrunk).
	Shrunk        *sim.Size `json:"shrunk,omitempty"`
	ShrinkRuns    int       `json:"shrink_runs,omitempty"`
	ShrinkSeconds float64   `json:"shrink_seconds,omitempty"`
	ReplayFile    string    `json:"replay_file,omitempty"`
}

type mutantsReport struct {
	Workspaces int            `json:"workspaces"`
	Duration   string         `json:"duration"`
	Faults     string         `json:"faults"`
	Checkers   []string       `json:"checkers"`
	Mutants    []mutantReport `json:"mutants"`
	Killed     int            `json:"killed"`
	Survived   int            `json:"survived"`
	// MedianSeconds and MaxSeconds summarise the wall time to first kill.
	MedianSeconds float64 `json:"median_seconds"`
	MaxSeconds    float64 `json:"max_seconds"`
}

func runMutantsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fastGC()
	return runMutants(ctx, args, stdout, stderr, defaultEnv(stderr))
}

func parseMutantsFlags(args []string) (o mutantsOptions, help bool, err error) {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.seeds, "seeds", 200, "")
	fs.IntVar(&o.workspaces, "workspaces", 20, "")
	fs.DurationVar(&o.duration, "duration", 24*time.Hour, "")
	fs.DurationVar(&o.quiet, "quiet", sim.DefaultQuiet, "")
	faults := fs.String("faults", "swarm", "")
	only := fs.String("only", "", "")
	fs.IntVar(&o.shrinkBudget, "shrink-budget", 40, "")
	fs.StringVar(&o.save, "save", "", "")
	fs.BoolVar(&o.list, "list", false, "")
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
	if *only != "" {
		o.only = map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			n = strings.TrimSpace(n)
			if _, err := mutants.Lookup(n); err != nil {
				return o, false, err
			}
			o.only[n] = true
		}
	}
	if fs.NArg() > 0 {
		return o, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkRunShape(o.seeds, o.workspaces, o.duration, o.quiet); err != nil {
		return o, false, err
	}
	switch {
	case o.shrinkBudget < 0:
		return o, false, fmt.Errorf("--shrink-budget %d: want 0 or more", o.shrinkBudget)
	}
	return o, false, nil
}

func runMutants(ctx context.Context, args []string, stdout, stderr io.Writer, env simEnv) int {
	o, help, err := parseMutantsFlags(args)
	if help {
		io.WriteString(stdout, mutantsUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "converge mutants: %v\n\n%s", err, mutantsUsage)
		return exitUsage
	}
	if o.list {
		for _, m := range mutants.Catalogue() {
			fmt.Fprintf(stdout, "%-28s %-6s %s\n", m.Name, m.Contract, m.Description)
		}
		return exitOK
	}
	rep := mutantsReport{Workspaces: o.workspaces, Duration: shortDuration(o.duration), Faults: o.faults.String(), Checkers: invariant.Names()}
	for _, m := range mutants.Catalogue() {
		if o.only != nil && !o.only[m.Name] {
			continue
		}
		if env.progress != nil {
			fmt.Fprintf(env.progress, "\r\033[K%s …", m.Name)
		}
		mr, err := hunt(ctx, o, env, m)
		if err != nil {
			fmt.Fprintf(stderr, "converge mutants: %s: %v\n", m.Name, err)
			return exitFailure
		}
		rep.Mutants = append(rep.Mutants, mr)
		if mr.Killed {
			rep.Killed++
		} else {
			rep.Survived++
		}
	}
	if env.progress != nil {
		fmt.Fprint(env.progress, "\r\033[K")
	}
	rep.MedianSeconds, rep.MaxSeconds = killTimes(rep.Mutants)
	if o.json {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "converge mutants: %v\n", err)
			return exitFailure
		}
	} else {
		writeMutants(stdout, &rep)
	}
	if rep.Survived > 0 || ctx.Err() != nil {
		return exitFailure
	}
	return exitOK
}

// hunt runs seeds against mutant m until one kills it, then shrinks the
// kill.
func hunt(ctx context.Context, o mutantsOptions, env simEnv, m mutants.Mutant) (mutantReport, error) {
	mr := mutantReport{Name: m.Name, Contract: m.Contract, Description: m.Description}
	start := env.now()
	config := func(seed uint64) sim.Config {
		return sim.Config{Seed: seed, Workspaces: o.workspaces, Duration: o.duration, Quiet: o.quiet, Faults: o.faults, System: m.System}
	}
	for seed := uint64(1); seed <= uint64(o.seeds); seed++ {
		if ctx.Err() != nil {
			return mr, ctx.Err()
		}
		mr.Seeds++
		cfg := config(seed)
		res, err := sim.Run(ctx, cfg)
		if err != nil {
			return mr, err
		}
		if res.OK() {
			continue
		}
		ref := cfg
		ref.System = env.system()
		refRes, err := sim.Run(ctx, ref)
		if err != nil {
			return mr, err
		}
		kills := beyondReference(res, refRes)
		if len(kills) == 0 {
			continue
		}
		mr.Killed, mr.Seed, mr.Checkers = true, seed, kills
		mr.WallSeconds = env.now().Sub(start).Seconds()
		mr.Violation = firstViolation(res, kills[0])
		if o.shrinkBudget > 0 {
			shrinkKill(ctx, o, env, &mr, cfg, res, kills[0])
		} else if o.save != "" {
			mr.ReplayFile = saveKill(o, m.Name, cfg, res, kills)
		}
		return mr, nil
	}
	// The search did not kill it within its budget: replay the mutant's
	// stored counterexamples (found by an earlier search) and say so.
	for _, b := range mutants.Corpus(m.Name) {
		f, err := sim.ParseReplay(b)
		if err != nil {
			return mr, fmt.Errorf("corpus of %s: %w", m.Name, err)
		}
		cfg, err := f.Config(m.System)
		if err != nil {
			return mr, fmt.Errorf("corpus of %s: %w", m.Name, err)
		}
		res, err := sim.Run(ctx, cfg)
		if err != nil {
			return mr, err
		}
		ref := cfg
		ref.System = env.system()
		refRes, err := sim.Run(ctx, ref)
		if err != nil {
			return mr, err
		}
		if kills := beyondReference(res, refRes); len(kills) > 0 {
			mr.Killed, mr.ByCorpus, mr.Seed, mr.Checkers = true, true, cfg.Seed, kills
			mr.Violation = firstViolation(res, kills[0])
			size := sim.SizeOf(cfg)
			mr.Shrunk = &size
			break
		}
	}
	mr.WallSeconds = env.now().Sub(start).Seconds()
	return mr, nil
}

// beyondReference lists the checkers res violated (or "failure" for a
// harness failure) that ref, the reference on the same run, did not.
func beyondReference(res, ref sim.Result) []string {
	bad := map[string]bool{}
	if ref.Report != nil {
		for _, v := range ref.Report.Violations {
			bad[v.Checker] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	if res.Report != nil {
		for _, v := range res.Report.Violations {
			if !bad[v.Checker] && !seen[v.Checker] {
				seen[v.Checker] = true
				out = append(out, v.Checker)
			}
		}
	}
	if len(res.Failures) > 0 && len(ref.Failures) == 0 {
		out = append(out, "failure")
	}
	return out
}

func firstViolation(res sim.Result, checker string) string {
	if checker == "failure" {
		return firstLine(res.Failures[0])
	}
	for _, v := range res.Report.Violations {
		if v.Checker == checker {
			return v.Contract + " (" + v.Checker + "): " + v.Message
		}
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// violates reports whether r shows checker's violation (or, for
// "failure", a harness failure).
func violates(r sim.Result, checker string) bool {
	if checker == "failure" {
		return len(r.Failures) > 0
	}
	if r.Report == nil {
		return false
	}
	for _, v := range r.Report.Violations {
		if v.Checker == checker {
			return true
		}
	}
	return false
}

// shrinkKill shrinks the killing run while the mutant still fails checker,
// keeping the shrunk run only if the reference passes that checker on it.
func shrinkKill(ctx context.Context, o mutantsOptions, env simEnv, mr *mutantReport, cfg sim.Config, res sim.Result, checker string) {
	start := env.now()
	sh, err := sim.Shrink(ctx, cfg, func(r sim.Result) bool { return violates(r, checker) }, o.shrinkBudget)
	mr.ShrinkRuns = sh.Runs
	if err == nil {
		ref := sh.Config
		ref.System = env.system()
		if refRes, err := sim.Run(ctx, ref); err == nil && !violates(refRes, checker) {
			cfg, res = sh.Config, sh.Result
			size := sh.To
			mr.Shrunk = &size
		}
	}
	mr.ShrinkSeconds = env.now().Sub(start).Seconds()
	if o.save != "" {
		mr.ReplayFile = saveKill(o, mr.Name, cfg, res, []string{checker})
	}
}

func saveKill(o mutantsOptions, name string, cfg sim.Config, res sim.Result, kills []string) string {
	f, err := sim.NewReplay(cfg, name, res)
	if err != nil {
		return ""
	}
	f.Kills = kills
	path := filepath.Join(o.save, sim.ReplayName(f.System, cfg.Seed))
	if err := sim.WriteReplay(path, f); err != nil {
		return ""
	}
	return path
}

// killTimes is the median and maximum wall time to first kill of the
// mutants the random search killed (a corpus kill's time is the search's
// budget, not a time to kill).
func killTimes(ms []mutantReport) (median, most float64) {
	var ts []float64
	for _, m := range ms {
		if m.Killed && !m.ByCorpus {
			ts = append(ts, m.WallSeconds)
		}
	}
	if len(ts) == 0 {
		return 0, 0
	}
	sort.Float64s(ts)
	median = ts[len(ts)/2]
	if len(ts)%2 == 0 {
		median = (ts[len(ts)/2-1] + ts[len(ts)/2]) / 2
	}
	return median, ts[len(ts)-1]
}

var checkerNumber = regexp.MustCompile(`^c[0-9]+$`)

// abbrev shortens a checker name for the matrix's header: "c8",
// "c12.con", "retry".
func abbrev(name string, all []string) string {
	parts := strings.SplitN(name, "-", 2)
	if !checkerNumber.MatchString(parts[0]) {
		return parts[0]
	}
	shared := 0
	for _, n := range all {
		if strings.HasPrefix(n, parts[0]+"-") {
			shared++
		}
	}
	if shared > 1 && len(parts) > 1 {
		return parts[0] + "." + parts[1][:min(3, len(parts[1]))]
	}
	return parts[0]
}

func writeMutants(w io.Writer, rep *mutantsReport) {
	fmt.Fprintf(w, "kill matrix: %d workspaces × %s per run, faults %s\n\n", rep.Workspaces, rep.Duration, rep.Faults)
	fmt.Fprintf(w, "%-28s %-6s %-8s %5s %8s  %-34s %s\n", "mutant", "rule", "result", "seed", "wall", "shrunk counterexample", "killed by")
	for _, m := range rep.Mutants {
		result, seed, shrunk := "SURVIVED", "-", "-"
		if m.Killed {
			result, seed = "killed", fmt.Sprint(m.Seed)
			if m.ByCorpus {
				result, seed = "corpus", "c"+fmt.Sprint(m.Seed)
			}
			if m.Shrunk != nil {
				shrunk = fmt.Sprintf("%d actions, %d ws, %s+%s", m.Shrunk.Actions, m.Shrunk.Workspaces, shortDuration(m.Shrunk.Duration), shortDuration(m.Shrunk.Quiet))
			}
		}
		fmt.Fprintf(w, "%-28s %-6s %-8s %5s %7.2fs  %-34s %s\n", m.Name, m.Contract, result, seed, m.WallSeconds, shrunk, strings.Join(m.Checkers, ", "))
	}
	fmt.Fprintln(w)
	heads := make([]string, len(rep.Checkers))
	for i, c := range rep.Checkers {
		heads[i] = abbrev(c, rep.Checkers)
	}
	fmt.Fprintf(w, "%-28s", "")
	for _, h := range heads {
		fmt.Fprintf(w, " %*s", len(h), h)
	}
	fmt.Fprintln(w)
	for _, m := range rep.Mutants {
		fmt.Fprintf(w, "%-28s", m.Name)
		for i, c := range rep.Checkers {
			mark := "."
			for _, k := range m.Checkers {
				if k == c {
					mark = "X"
				}
			}
			fmt.Fprintf(w, " %*s", len(heads[i]), mark)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, m := range rep.Mutants {
		if m.Killed {
			fmt.Fprintf(w, "%s: %s\n", m.Name, m.Violation)
		}
		if m.ReplayFile != "" {
			fmt.Fprintf(w, "  replay: converge replay %s\n", m.ReplayFile)
		}
	}
	byCorpus := 0
	for _, m := range rep.Mutants {
		if m.ByCorpus {
			byCorpus++
			fmt.Fprintf(w, "%s: not killed by %d random seeds; killed by its stored counterexample (scenarios/mutants/corpus)\n", m.Name, m.Seeds)
		}
	}
	fmt.Fprintf(w, "\n%d mutants: %d killed (%d by the random search, %d only by the stored corpus), %d survived; wall time to first kill by search: median %.2fs, max %.2fs\n",
		len(rep.Mutants), rep.Killed, rep.Killed-byCorpus, byCorpus, rep.Survived, rep.MedianSeconds, rep.MaxSeconds)
}
