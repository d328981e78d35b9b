package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/sim/engine"
)

// The kill matrix of both worlds: `converge mutants` and `converge oracle
// mutants` hunt each mutant with engine.Hunt and share everything after
// it here: the flags, the row and report, the text table, --json and
// --junit (docs/decisions/cli.md, DR456).

// killFlags are the flags both kill matrices take.
type killFlags struct {
	seed         uint64
	seeds        int
	only         []string
	list         bool
	json         bool
	junit        string
	jobs         int
	shrinkBudget int
	save         string
}

// register adds the flags with the world's defaults for --seeds and
// --shrink-budget. --only is another name of --mutant (the workspace
// command's first name for it).
func (k *killFlags) register(cmd *cobra.Command, seeds, shrinkBudget int) {
	f := cmd.Flags()
	f.Uint64Var(&k.seed, "seed", 1, "first seed searched")
	f.IntVar(&k.seeds, "seeds", seeds, "most seeds searched per mutant")
	f.StringSliceVar(&k.only, "mutant", nil, "mutants to run, repeatable or comma-separated (default all; --only is the same flag)")
	f.BoolVar(&k.list, "list", false, "list the mutants and exit")
	f.BoolVar(&k.json, "json", false, "print one JSON object instead of text")
	f.StringVar(&k.junit, "junit", "", "also write a JUnit XML report to this file (a case per mutant)")
	f.IntVar(&k.jobs, "jobs", engine.DefaultJobs(), "mutants hunted at once")
	f.IntVar(&k.shrinkBudget, "shrink-budget", shrinkBudget, "most runs spent shrinking each kill (0: do not shrink)")
	f.StringVar(&k.save, "save", "", "write each kill's (shrunk) replay file into this directory")
	f.SetNormalizeFunc(onlyIsMutant)
}

// onlyIsMutant makes --only the same flag as --mutant.
func onlyIsMutant(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "only" {
		name = "mutant"
	}
	return pflag.NormalizedName(name)
}

func (k *killFlags) validate() error {
	switch {
	case k.seeds < 1 || k.seeds > maxSeeds:
		return usagef("--seeds %d: want 1 to %d", k.seeds, maxSeeds)
	case k.seed < 1 || k.seed+uint64(k.seeds-1) < k.seed:
		return usagef("--seed %d with --seeds %d: want a first seed ≥ 1 that does not overflow", k.seed, k.seeds)
	case k.shrinkBudget < 0 || k.shrinkBudget > 10_000:
		return usagef("--shrink-budget %d: want 0 to 10000", k.shrinkBudget)
	case k.jobs < 1 || k.jobs > 256:
		return usagef("--jobs %d: want 1 to 256", k.jobs)
	}
	if k.junit != "" && !k.list {
		return checkWritable("--junit", k.junit)
	}
	return nil
}

// names are the mutants --mutant chose, trimmed, each once.
func (k *killFlags) names() []string {
	var out []string
	for _, n := range k.only {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// mutantEntry is one mutant of --list, in either world.
type mutantEntry struct {
	Mutant   string   `json:"mutant"`
	Kind     string   `json:"kind"`
	Contract string   `json:"contract,omitempty"`
	Expected []string `json:"expected,omitempty"`
	Bug      string   `json:"bug,omitempty"`
	KnownGap string   `json:"known_gap,omitempty"`
}

// listMutants prints --list: a line per mutant (its name, kind, rule or
// expected checkers, and bug; a known gap on a line of its own), or one
// JSON object with --json.
func (c *config) listMutants(entries []mutantEntry, asJSON bool) error {
	if asJSON {
		if err := writeJSON(c.stdout, map[string]any{"mutants": entries}); err != nil {
			return &codeError{code: ExitError, err: err}
		}
		return nil
	}
	width := 28
	for _, e := range entries {
		width = max(width, len(e.Mutant))
	}
	for _, e := range entries {
		rule := e.Contract
		if len(e.Expected) > 0 {
			rule = strings.Join(e.Expected, " ")
		}
		fmt.Fprintf(c.stdout, "%-*s %-6s %-6s %s\n", width, e.Mutant, e.Kind, rule, e.Bug)
		if e.KnownGap != "" {
			fmt.Fprintf(c.stdout, "%-*s %-6s known gap of the world: %s\n", width, "", "", e.KnownGap)
		}
	}
	return nil
}

// killRow is one mutant's row of the kill matrix, in either world; S is
// the world's counterexample size.
type killRow[S any] struct {
	Name string `json:"name"`
	// Kind is how the mutant is made: "ports" (the reference behind bent
	// ports), "source" (its source edited) or "variant" (an --exec
	// command).
	Kind        string `json:"kind"`
	Contract    string `json:"contract,omitempty"`
	Description string `json:"description,omitempty"`
	// Expected are the checkers the catalogue says catch it (none: any
	// checker the reference passes).
	Expected []string `json:"expected,omitempty"`
	Killed   bool     `json:"killed"`
	// ByCorpus: the search did not kill it within --seeds; its stored
	// counterexample did.
	ByCorpus bool `json:"by_corpus,omitempty"`
	// Seed killed it; Seeds is how many seeds ran.
	Seed  uint64 `json:"seed,omitempty"`
	Seeds int    `json:"seeds"`
	// WallSeconds is the wall time to the first kill (or to giving up),
	// the reference's runs included.
	WallSeconds float64 `json:"wall_seconds"`
	// Checkers flagged it (and not the reference) in the killing run;
	// Violation is the first violation of the one that killed it.
	Checkers  []string `json:"checkers,omitempty"`
	Violation string   `json:"violation,omitempty"`
	// Shrunk is the counterexample's size after shrinking (nil: not
	// shrunk).
	Shrunk        *S      `json:"shrunk,omitempty"`
	ShrinkRuns    int     `json:"shrink_runs,omitempty"`
	ShrinkSeconds float64 `json:"shrink_seconds,omitempty"`
	ReplayFile    string  `json:"replay_file,omitempty"`
	// Skipped says why the mutant was not hunted (a source mutant with no
	// toolchain here); KnownGap why the world cannot yet show its bug (a
	// survival is reported, not counted).
	Skipped  string `json:"skipped,omitempty"`
	KnownGap string `json:"known_gap,omitempty"`
}

// fillKill puts a hunt's outcome into row: size measures a configuration,
// violation says a run's first violation of a checker.
func fillKill[S, C, R any](row *killRow[S], k engine.Kill[C, R], size func(C) S, violation func(r R, checker string) string) {
	row.Killed, row.ByCorpus, row.Seed, row.Seeds, row.Checkers = k.Killed, k.ByCorpus, k.Seed, k.Seeds, k.Checkers
	row.WallSeconds, row.ShrinkRuns, row.ShrinkSeconds = k.Wall.Seconds(), k.ShrinkRuns, k.ShrinkWall.Seconds()
	if !k.Killed {
		return
	}
	row.Violation = violation(k.Run, k.Target)
	if k.Shrunk || k.ByCorpus {
		z := size(k.Config)
		row.Shrunk = &z
	}
}

// killReport is the kill matrix's report (the JSON form's common part).
type killReport[S any] struct {
	Checkers  []string     `json:"checkers"`
	Mutants   []killRow[S] `json:"mutants"`
	Killed    int          `json:"killed"`
	Survived  int          `json:"survived"`
	KnownGaps int          `json:"known_gaps"`
	Skipped   int          `json:"skipped"`
	// MedianSeconds and MaxSeconds summarise the wall time to first kill
	// by the search.
	MedianSeconds float64 `json:"median_seconds"`
	MaxSeconds    float64 `json:"max_seconds"`
	// WallSeconds is the whole command's wall time.
	WallSeconds float64 `json:"wall_seconds"`
}

// killCandidate is one mutant to hunt: its row as the catalogue fills it,
// and the hunt that fills in the rest (nil: not hunted, row.Skipped says
// why).
type killCandidate[S any] struct {
	row  killRow[S]
	hunt func(ctx context.Context, row *killRow[S]) error
}

// killMatrix is what a world tells the shared kill matrix.
type killMatrix[S any] struct {
	// name is the command ("converge mutants") and class the JUnit
	// classname's prefix; title heads the text report.
	name, class, title string
	// size prints a counterexample's size in the table.
	size func(S) string
	// corpus names where stored counterexamples live, for the text;
	// replay is the command line that replays a saved file.
	corpus string
	replay func(path string) []string
}

// runKillMatrix hunts the candidates on --jobs goroutines and reports the
// rows in catalogue order: rep is filled in, and whole (which holds rep)
// is what --json prints.
func runKillMatrix[S any](ctx context.Context, c *config, f *killFlags, m killMatrix[S], cands []killCandidate[S], rep *killReport[S], whole any) error {
	start := c.now()
	idx := make([]uint64, len(cands))
	for i := range idx {
		idx[i] = uint64(i)
	}
	suite := engine.JUnitSuite{Name: m.name}
	var failure error
	status := progress{w: c.progress}
	engine.RunSeeds(ctx, idx, f.jobs, c.now, func(ctx context.Context, i uint64) (killRow[S], error) {
		cand := cands[i]
		row := cand.row
		if cand.hunt == nil {
			return row, nil
		}
		if err := cand.hunt(ctx, &row); err != nil {
			return row, fmt.Errorf("%s: %w", row.Name, err)
		}
		return row, nil
	}, func(out engine.Outcome[killRow[S]]) bool {
		if out.Err != nil {
			failure = out.Err
			return false
		}
		rep.add(out.R)
		suite.Add(killCase(m.class, out.R))
		status.show("[%d/%d] mutants hunted …", len(rep.Mutants), len(cands))
		return true
	})
	status.clear()
	if ctx.Err() != nil {
		return exitWith(ExitInterrupted)
	}
	if failure != nil {
		return &codeError{code: ExitError, err: failure}
	}
	rep.MedianSeconds, rep.MaxSeconds = killTimes(rep.Mutants)
	rep.WallSeconds = c.now().Sub(start).Seconds()
	if f.junit != "" {
		if err := WriteFile(f.junit, (&engine.JUnitSuites{Name: m.name, Suites: []engine.JUnitSuite{suite}}).Write); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	if f.json {
		if err := writeJSON(c.stdout, whole); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	} else {
		writeKillMatrix(c, c.stdout, m, rep)
	}
	if rep.Survived > 0 {
		return exitWith(ExitFailed)
	}
	return nil
}

// add counts row and appends it.
func (r *killReport[S]) add(row killRow[S]) {
	r.Mutants = append(r.Mutants, row)
	switch {
	case row.Skipped != "":
		r.Skipped++
	case row.Killed:
		r.Killed++
	case row.KnownGap != "":
		r.KnownGaps++
	default:
		r.Survived++
	}
}

// killCase is a mutant's JUnit case, timed by its hunt (and shrink): a
// survivor fails, a skip or a known gap is skipped.
func killCase[S any](class string, row killRow[S]) engine.JUnitCase {
	jc := engine.JUnitCase{Name: row.Name, Classname: class + "." + row.Kind, Time: row.WallSeconds + row.ShrinkSeconds}
	switch {
	case row.Skipped != "":
		jc.Skipped = &engine.JUnitSkipped{Message: row.Skipped}
	case row.Killed:
		jc.Out = fmt.Sprintf("killed on seed %d by %s", row.Seed, strings.Join(row.Checkers, " "))
		if row.ByCorpus {
			jc.Out = "killed by its stored counterexample, by " + strings.Join(row.Checkers, " ")
		}
	case row.KnownGap != "":
		jc.Skipped = &engine.JUnitSkipped{Message: "known gap of the world: " + row.KnownGap}
	default:
		msg := fmt.Sprintf("survived %d seeds", row.Seeds)
		if len(row.Expected) > 0 {
			msg += fmt.Sprintf("; expected %v", row.Expected)
		}
		jc.Failure = &engine.JUnitFailure{Message: msg, Type: row.Contract}
	}
	return jc
}

// killTimes is the median and maximum wall time to first kill of the
// mutants the search killed (a corpus kill's time is the search's budget,
// not a time to kill).
func killTimes[S any](rows []killRow[S]) (median, most float64) {
	var ts []float64
	for _, m := range rows {
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
// ("c8", "o7"), with the start of the next when other names share it
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

// writeKillMatrix prints the table (a row per mutant: result, seed, wall
// time, shrunk counterexample), the mutant × checker matrix, each kill's
// violation and replay command, and the totals.
func writeKillMatrix[S any](c *config, w io.Writer, m killMatrix[S], rep *killReport[S]) {
	width := 28
	for _, r := range rep.Mutants {
		width = max(width, len(r.Name))
	}
	fmt.Fprintf(w, "%s\n\n", m.title)
	fmt.Fprintf(w, "%-*s %-6s %-8s %5s %8s  %s\n", width, "mutant", "rule", "result", "seed", "wall", "shrunk counterexample")
	for _, r := range rep.Mutants {
		rule := r.Contract
		if rule == "" {
			rule = r.Kind
		}
		result, seed, detail := "SURVIVED", "-", "-"
		switch {
		case r.Skipped != "":
			result, detail = "skipped", r.Skipped
		case r.Killed:
			result, seed = "killed", fmt.Sprint(r.Seed)
			if r.ByCorpus {
				result, seed = "corpus", "c"+fmt.Sprint(r.Seed)
			}
			if r.Shrunk != nil {
				detail = m.size(*r.Shrunk)
			}
		case r.KnownGap != "":
			result, detail = "gap", "known gap of the world: "+r.KnownGap
		case len(r.Expected) > 0:
			detail = "expected " + strings.Join(r.Expected, " ")
		}
		fmt.Fprintf(w, "%-*s %-6s %-8s %5s %7.2fs  %s\n", width, r.Name, rule, result, seed, r.WallSeconds, detail)
	}
	fmt.Fprintln(w)
	heads := make([]string, len(rep.Checkers))
	for i, ch := range rep.Checkers {
		heads[i] = abbrev(ch, rep.Checkers)
	}
	fmt.Fprintf(w, "%-*s", width, "")
	for _, h := range heads {
		fmt.Fprintf(w, " %s", h)
	}
	fmt.Fprintln(w)
	for _, r := range rep.Mutants {
		fmt.Fprintf(w, "%-*s", width, r.Name)
		for i, ch := range rep.Checkers {
			mark := "."
			if slices.Contains(r.Checkers, ch) {
				mark = "X"
			}
			fmt.Fprintf(w, " %*s", len(heads[i]), mark)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	byCorpus := 0
	for _, r := range rep.Mutants {
		if r.Killed {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Violation)
		}
		if r.ReplayFile != "" {
			fmt.Fprintf(w, "  replay: %s\n", c.commandLine(m.replay(r.ReplayFile)...))
		}
	}
	for _, r := range rep.Mutants {
		if r.ByCorpus {
			byCorpus++
			fmt.Fprintf(w, "%s: not killed by %d random seeds; killed by its stored counterexample (%s)\n", r.Name, r.Seeds, m.corpus)
		}
	}
	fmt.Fprintf(w, "\n%d mutants: %d killed (%d by the random search, %d only by the stored corpus), %d survived",
		len(rep.Mutants), rep.Killed, rep.Killed-byCorpus, byCorpus, rep.Survived)
	if rep.KnownGaps > 0 {
		fmt.Fprintf(w, ", %d known gaps of the world", rep.KnownGaps)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", rep.Skipped)
	}
	fmt.Fprintf(w, "; wall time to first kill by search: median %.2fs, max %.2fs; %.1fs in all\n", rep.MedianSeconds, rep.MaxSeconds, rep.WallSeconds)
}
