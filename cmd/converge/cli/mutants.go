package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
)

const mutantsLong = `The kill matrix: proves the judge's power on the catalogue of mutants — the
reference with one deliberately broken rule each, bent from outside through
its ports. For each mutant it runs seeds 1, 2, … (one run each, the fault
mix of --faults) until a checker flags a violation that the reference, run
on the same seed and plan, does not show: the mutant is killed. It then
shrinks the killing run (fewer fault actions, workspaces and time) while the
mutant still fails the same checker, and prints the mutant × checker matrix,
the seeds and wall time to the first kill, and the shrunk counterexample's
size. A mutant the search does not kill is replayed against its stored
counterexample (scenarios/mutants/workspace/corpus) and reported as a corpus kill.

Mutants are hunted in parallel on --jobs cores.

With --exec, the same hunt runs over an implementation in any language: the
reference is the command --exec names and the mutants are its variants
(--variant NAME=COMMAND, e.g. the same program with a --bug switch), each a
child process over the driver protocol.`

type mutantsOptions struct {
	runShape
	exec         string
	variants     []string
	timeout      time.Duration
	seeds        int
	only         []string
	shrinkBudget int
	save         string
	list         bool
	json         bool
	jobs         int
}

// mutantReport is one mutant's row.
type mutantReport struct {
	Name        string `json:"name"`
	Contract    string `json:"contract"`
	Description string `json:"description"`
	Killed      bool   `json:"killed"`
	// ByCorpus: the random search did not kill it within --seeds; its
	// stored counterexample did.
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
	Shrunk        *wssim.Size `json:"shrunk,omitempty"`
	ShrinkRuns    int         `json:"shrink_runs,omitempty"`
	ShrinkSeconds float64     `json:"shrink_seconds,omitempty"`
	ReplayFile    string      `json:"replay_file,omitempty"`
}

type mutantsReport struct {
	Workspaces int            `json:"workspaces"`
	Duration   string         `json:"duration"`
	Faults     string         `json:"faults"`
	Checkers   []string       `json:"checkers"`
	Mutants    []mutantReport `json:"mutants"`
	Killed     int            `json:"killed"`
	Survived   int            `json:"survived"`
	// MedianSeconds and MaxSeconds summarise the wall time to first kill
	// by the random search.
	MedianSeconds float64 `json:"median_seconds"`
	MaxSeconds    float64 `json:"max_seconds"`
	// WallSeconds is the whole command's wall time.
	WallSeconds float64 `json:"wall_seconds"`
}

func (c *config) mutantsCommand() *cobra.Command {
	var o mutantsOptions
	cmd := &cobra.Command{
		Use:   "mutants",
		Short: "the kill matrix: find, per mutant, the first seed a checker kills it",
		Long:  mutantsLong,
		Example: `  converge mutants
  converge mutants --only no-cas-claim,gc-no-delay --json
  converge mutants --list
  converge mutants --exec "python3 coordinator.py" \
      --variant no-cas="python3 coordinator.py --bug no-cas-claim"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			fastGC()
			return c.runMutants(cmd.Context(), &o)
		},
	}
	o.runShape.register(cmd, 20)
	f := cmd.Flags()
	f.IntVar(&o.seeds, "seeds", 200, "most seeds searched per mutant")
	f.StringSliceVar(&o.only, "only", nil, "mutants to run, comma-separated (default all)")
	f.IntVar(&o.shrinkBudget, "shrink-budget", 40, "most runs spent shrinking each kill (0: do not shrink)")
	f.StringVar(&o.save, "save", "", "write each kill's (shrunk) replay file into this directory")
	f.BoolVar(&o.list, "list", false, "list the mutants and exit")
	f.BoolVar(&o.json, "json", false, "print one JSON object instead of text")
	f.IntVar(&o.jobs, "jobs", engine.DefaultJobs(), "mutants hunted at once")
	f.StringVar(&o.exec, "exec", "", "hunt the variants of an implementation in any language: its command line (the reference of the hunt)")
	f.StringArrayVar(&o.variants, "variant", nil, "with --exec: a variant to kill, NAME=COMMAND (repeatable)")
	f.DurationVar(&o.timeout, "exec-timeout", driver.DefaultTimeout, "with --exec: how long to wait for each message of a child")
	return cmd
}

func (o *mutantsOptions) validate() error {
	if err := o.runShape.validate(); err != nil {
		return err
	}
	switch {
	case o.seeds < 1 || o.seeds > maxSeeds:
		return usagef("--seeds %d: want 1 to %d", o.seeds, maxSeeds)
	case o.shrinkBudget < 0 || o.shrinkBudget > 10_000:
		return usagef("--shrink-budget %d: want 0 to 10000", o.shrinkBudget)
	case o.jobs < 1 || o.jobs > 256:
		return usagef("--jobs %d: want 1 to 256", o.jobs)
	}
	switch {
	case o.exec == "" && len(o.variants) > 0:
		return usagef("--variant needs --exec: the variants of an implementation run as child processes")
	case o.exec != "" && len(o.variants) == 0:
		return usagef("--exec needs at least one --variant NAME=COMMAND to hunt")
	case o.timeout <= 0:
		return usagef("--exec-timeout %s: want a positive duration", o.timeout)
	}
	for _, v := range o.variants {
		name, cmd, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(cmd) == "" {
			return usagef("--variant %q: want NAME=COMMAND", v)
		}
		if err := checkExec(strings.TrimSpace(cmd)); err != nil {
			return usagef("--variant %s: %v", strings.TrimSpace(name), err)
		}
	}
	if o.exec != "" {
		// As for sim --exec: a command line that cannot run is bad
		// usage, found before any child starts.
		if err := checkExec(o.exec); err != nil {
			return usagef("--exec: %v", err)
		}
		return nil
	}
	for _, n := range o.only {
		if _, err := wsmutants.Lookup(strings.TrimSpace(n)); err != nil {
			return usagef("--only: %v", err)
		}
	}
	return nil
}

// candidate is one mutant the hunt tries to kill, and what it is hunted
// against.
type candidate struct {
	wsmutants.Mutant
	// build and reference make the mutant's and the reference's systems
	// (the end function closes a child process's system after the hunt).
	build, reference func() (ports.System, func(), error)
	// replayMutant is the replay file's mutant field ("" for a variant
	// run with --exec, whose system names its command).
	replayMutant string
	corpus       bool
}

// candidates lists what the hunt runs: the reference's catalogue, or the
// --exec variants.
func (c *config) candidates(o *mutantsOptions) []candidate {
	if o.exec != "" {
		ref := func() (ports.System, func(), error) { return c.build(target{exec: o.exec, timeout: o.timeout}) }
		var out []candidate
		for _, v := range o.variants {
			name, cmd, _ := strings.Cut(v, "=")
			name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
			out = append(out, candidate{
				Mutant:    wsmutants.Mutant{Name: name, Contract: "-", Description: "variant: " + cmd},
				build:     func() (ports.System, func(), error) { return c.build(target{exec: cmd, timeout: o.timeout}) },
				reference: ref,
			})
		}
		return out
	}
	ref := func() (ports.System, func(), error) { return c.build(target{system: ReferenceSystem}) }
	var out []candidate
	for _, m := range wsmutants.Catalogue() {
		if len(o.only) == 0 || slices.ContainsFunc(o.only, func(n string) bool { return strings.TrimSpace(n) == m.Name }) {
			sys := m.System
			out = append(out, candidate{Mutant: m, build: func() (ports.System, func(), error) { return sys, func() {}, nil },
				reference: ref, replayMutant: m.Name, corpus: true})
		}
	}
	return out
}

func (c *config) runMutants(ctx context.Context, o *mutantsOptions) error {
	if o.list {
		for _, m := range wsmutants.Catalogue() {
			fmt.Fprintf(c.stdout, "%-28s %-6s %s\n", m.Name, m.Contract, m.Description)
		}
		return nil
	}
	chosen := c.candidates(o)
	start := c.now()
	rep := mutantsReport{Workspaces: o.workspaces, Duration: shortDuration(o.duration), Faults: o.faults.String(), Checkers: wsjudge.Names()}
	idx := make([]uint64, len(chosen))
	for i := range idx {
		idx[i] = uint64(i)
	}
	var failure error
	status := progress{w: c.progress}
	engine.RunSeeds(ctx, idx, o.jobs, c.now, func(ctx context.Context, i uint64) (mutantReport, error) {
		return c.hunt(ctx, o, chosen[i])
	}, func(out engine.Outcome[mutantReport]) bool {
		if out.Err != nil {
			failure = fmt.Errorf("%s: %w", chosen[out.Seed].Name, out.Err)
			return false
		}
		rep.Mutants = append(rep.Mutants, out.R)
		if out.R.Killed {
			rep.Killed++
		} else {
			rep.Survived++
		}
		status.show("[%d/%d] mutants hunted …", len(rep.Mutants), len(chosen))
		return true
	})
	status.clear()
	if failure != nil {
		return &codeError{code: ExitError, err: failure}
	}
	if ctx.Err() != nil {
		return exitWith(ExitInterrupted)
	}
	rep.MedianSeconds, rep.MaxSeconds = killTimes(rep.Mutants)
	rep.WallSeconds = c.now().Sub(start).Seconds()
	if o.json {
		if err := writeJSON(c.stdout, rep); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	} else {
		c.writeMutants(c.stdout, &rep)
	}
	if rep.Survived > 0 {
		return exitWith(ExitFailed)
	}
	return nil
}

// hunt runs the kill matrix's search for mutant m.
func (c *config) hunt(ctx context.Context, o *mutantsOptions, m candidate) (mutantReport, error) {
	mr := mutantReport{Name: m.Name, Contract: m.Contract, Description: m.Description}
	sys, endSys, err := m.build()
	if err != nil {
		return mr, err
	}
	defer endSys()
	ref, endRef, err := m.reference()
	if err != nil {
		return mr, err
	}
	defer endRef()
	h := &engine.Hunt[wssim.Config, wssim.Execution]{
		Seeds: o.seeds,
		Config: func(seed uint64) wssim.Config {
			return wssim.Config{Seed: seed, Workspaces: o.workspaces, Duration: o.duration, Quiet: o.quiet,
				Faults: o.faults, Coordinators: o.coordinators, System: sys}
		},
		Mutant:    driver.Runner{},
		Reference: driver.Runner{System: ref},
		Now:       c.now,
	}
	if m.corpus {
		h.Corpus = func() ([]wssim.Config, error) {
			var out []wssim.Config
			for i, b := range wsmutants.Corpus(m.Name) {
				f, err := wssim.ParseReplay(b)
				if err != nil {
					return nil, fmt.Errorf("corpus file %d of %s: %w", i+1, m.Name, err)
				}
				cfg, err := f.Config(sys)
				if err != nil {
					return nil, fmt.Errorf("corpus file %d of %s: %w", i+1, m.Name, err)
				}
				out = append(out, cfg)
			}
			return out, nil
		}
	}
	if o.shrinkBudget > 0 {
		h.Shrink = func(ctx context.Context, cfg wssim.Config, _ wssim.Execution, checker string) (wssim.Config, wssim.Execution, int, error) {
			sh, err := wssim.Shrink(ctx, driver.Judged(cfg), func(r wssim.Result) bool { return slices.Contains(wssim.Violated(r), checker) }, o.shrinkBudget)
			return sh.Config, wssim.Execution{Result: sh.Result}, sh.Runs, err
		}
	}
	k, err := h.Run(ctx)
	if err != nil {
		return mr, err
	}
	mr.Killed, mr.ByCorpus, mr.Seed, mr.Seeds, mr.Checkers = k.Killed, k.ByCorpus, k.Seed, k.Seeds, k.Checkers
	mr.WallSeconds, mr.ShrinkRuns, mr.ShrinkSeconds = k.Wall.Seconds(), k.ShrinkRuns, k.ShrinkWall.Seconds()
	if !k.Killed {
		return mr, nil
	}
	mr.Violation = firstViolation(k.Run.Result, k.Checkers[0])
	if k.Shrunk || k.ByCorpus {
		size := wssim.SizeOf(k.Config)
		mr.Shrunk = &size
	}
	if o.save != "" && !k.ByCorpus {
		f, err := wssim.NewReplay(k.Config, m.replayMutant, k.Run.Result)
		if err != nil {
			return mr, err
		}
		f.Kills = k.Checkers
		if k.Shrunk {
			f.Kills = k.Checkers[:1]
		}
		if mr.ReplayFile, err = wssim.SaveReplay(o.save, f); err != nil {
			return mr, err
		}
	}
	return mr, nil
}

func firstViolation(res wssim.Result, checker string) string {
	if checker == engine.Failure {
		return firstLine(res.Failures[0])
	}
	for _, v := range res.Report.Violations {
		if v.Checker == checker {
			return v.Contract + " (" + v.Checker + "): " + v.Message
		}
	}
	return ""
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

// abbrev shortens a checker name for the matrix's header: its first word
// ("c8", "retry"), with the start of the next when other names share it
// ("c12.con", "gc.met").
func abbrev(name string, all []string) string {
	parts := strings.SplitN(name, "-", 2)
	shared := 0
	for _, n := range all {
		if strings.HasPrefix(n, parts[0]+"-") || n == parts[0] {
			shared++
		}
	}
	if shared > 1 && len(parts) > 1 {
		return parts[0] + "." + parts[1][:min(3, len(parts[1]))]
	}
	return parts[0]
}

func (c *config) writeMutants(w io.Writer, rep *mutantsReport) {
	fmt.Fprintf(w, "kill matrix: %d workspaces × %s per run, faults %s\n\n", rep.Workspaces, rep.Duration, rep.Faults)
	fmt.Fprintf(w, "%-28s %-6s %-8s %5s %8s  %-30s\n", "mutant", "rule", "result", "seed", "wall", "shrunk counterexample")
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
		fmt.Fprintf(w, "%-28s %-6s %-8s %5s %7.2fs  %-30s\n", m.Name, m.Contract, result, seed, m.WallSeconds, shrunk)
	}
	fmt.Fprintln(w)
	heads := make([]string, len(rep.Checkers))
	for i, ch := range rep.Checkers {
		heads[i] = abbrev(ch, rep.Checkers)
	}
	fmt.Fprintf(w, "%-28s", "")
	for _, h := range heads {
		fmt.Fprintf(w, " %*s", len(h), h)
	}
	fmt.Fprintln(w)
	for _, m := range rep.Mutants {
		fmt.Fprintf(w, "%-28s", m.Name)
		for i, ch := range rep.Checkers {
			mark := "."
			if slices.Contains(m.Checkers, ch) {
				mark = "X"
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
			fmt.Fprintf(w, "  replay: %s\n", c.commandLine("replay", absPath(m.ReplayFile)))
		}
	}
	byCorpus := 0
	for _, m := range rep.Mutants {
		if m.ByCorpus {
			byCorpus++
			fmt.Fprintf(w, "%s: not killed by %d random seeds; killed by its stored counterexample (scenarios/mutants/workspace/corpus)\n", m.Name, m.Seeds)
		}
	}
	fmt.Fprintf(w, "\n%d mutants: %d killed (%d by the random search, %d only by the stored corpus), %d survived; wall time to first kill by search: median %.2fs, max %.2fs; %.1fs in all\n",
		len(rep.Mutants), rep.Killed, rep.Killed-byCorpus, byCorpus, rep.Survived, rep.MedianSeconds, rep.MaxSeconds, rep.WallSeconds)
}
