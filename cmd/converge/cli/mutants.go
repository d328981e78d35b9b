package cli

import (
	"context"
	"fmt"
	"slices"
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

Mutants are hunted in parallel on --jobs cores. The flags, the table, --json
and --junit are converge oracle mutants' too.

With --exec, the same hunt runs over an implementation in any language: the
reference is the command --exec names and the mutants are its variants
(--variant NAME=COMMAND, e.g. the same program with a --bug switch), each a
child process over the driver protocol.`

type mutantsOptions struct {
	runShape
	killFlags
	exec     string
	variants []string
	timeout  time.Duration
}

// mutantsReport is the workspace kill matrix's JSON form: the run's
// shape, then what both worlds' kill matrices report.
type mutantsReport struct {
	Workspaces int    `json:"workspaces"`
	Duration   string `json:"duration"`
	Faults     string `json:"faults"`
	killReport[wssim.Size]
}

func (c *config) mutantsCommand() *cobra.Command {
	var o mutantsOptions
	cmd := &cobra.Command{
		Use:   "mutants",
		Short: "the kill matrix: find, per mutant, the first seed a checker kills it",
		Long:  mutantsLong,
		Example: `  converge mutants
  converge mutants --mutant no-cas-claim,gc-no-delay --json
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
	o.killFlags.register(cmd, 200, 40)
	f := cmd.Flags()
	f.StringVar(&o.exec, "exec", "", "hunt the variants of an implementation in any language: its command line (the reference of the hunt)")
	f.StringArrayVar(&o.variants, "variant", nil, "with --exec: a variant to kill, NAME=COMMAND (repeatable)")
	f.DurationVar(&o.timeout, "exec-timeout", driver.DefaultTimeout, "with --exec: how long to wait for each message of a child")
	return cmd
}

func (o *mutantsOptions) validate() error {
	if err := o.runShape.validate(); err != nil {
		return err
	}
	if err := o.killFlags.validate(); err != nil {
		return err
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
	for _, n := range o.names() {
		if _, err := wsmutants.Lookup(n); err != nil {
			return usagef("--mutant: %v", err)
		}
	}
	return nil
}

// candidate is one mutant the hunt tries to kill, and what it is hunted
// against.
type candidate struct {
	wsmutants.Mutant
	kind string
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
				kind:      "variant",
				build:     func() (ports.System, func(), error) { return c.build(target{exec: cmd, timeout: o.timeout}) },
				reference: ref,
			})
		}
		return out
	}
	ref := func() (ports.System, func(), error) { return c.build(target{system: ReferenceSystem}) }
	only := o.names()
	var out []candidate
	for _, m := range wsmutants.Catalogue() {
		if len(only) == 0 || slices.Contains(only, m.Name) {
			sys := m.System
			out = append(out, candidate{Mutant: m, kind: "ports", build: func() (ports.System, func(), error) { return sys, func() {}, nil },
				reference: ref, replayMutant: m.Name, corpus: true})
		}
	}
	return out
}

func (c *config) runMutants(ctx context.Context, o *mutantsOptions) error {
	if o.list {
		var entries []mutantEntry
		for _, m := range wsmutants.Catalogue() {
			entries = append(entries, mutantEntry{Mutant: m.Name, Kind: "ports", Contract: m.Contract, Bug: m.Description})
		}
		return c.listMutants(entries, o.json)
	}
	var cands []killCandidate[wssim.Size]
	for _, m := range c.candidates(o) {
		cands = append(cands, killCandidate[wssim.Size]{
			row:  killRow[wssim.Size]{Name: m.Name, Kind: m.kind, Contract: m.Contract, Description: m.Description},
			hunt: func(ctx context.Context, row *killRow[wssim.Size]) error { return c.hunt(ctx, o, m, row) },
		})
	}
	rep := mutantsReport{Workspaces: o.workspaces, Duration: shortDuration(o.duration), Faults: o.faults.String(),
		killReport: killReport[wssim.Size]{Checkers: wsjudge.Names()}}
	return runKillMatrix(ctx, c, &o.killFlags, killMatrix[wssim.Size]{
		name: "converge mutants", class: "mutants",
		title: fmt.Sprintf("kill matrix: %d workspaces × %s per run, faults %s", rep.Workspaces, rep.Duration, rep.Faults),
		size: func(z wssim.Size) string {
			return fmt.Sprintf("%d actions, %d ws, %s+%s", z.Actions, z.Workspaces, shortDuration(z.Duration), shortDuration(z.Quiet))
		},
		corpus: "scenarios/mutants/workspace/corpus",
		replay: func(path string) []string { return []string{"replay", absPath(path)} },
	}, cands, &rep.killReport, &rep)
}

// hunt runs the kill matrix's search for mutant m into row.
func (c *config) hunt(ctx context.Context, o *mutantsOptions, m candidate, row *killRow[wssim.Size]) error {
	sys, endSys, err := m.build()
	if err != nil {
		return err
	}
	defer endSys()
	ref, endRef, err := m.reference()
	if err != nil {
		return err
	}
	defer endRef()
	h := &engine.Hunt[wssim.Config, wssim.Execution]{
		First: o.seed,
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
		return err
	}
	fillKill(row, k, wssim.SizeOf, func(x wssim.Execution, checker string) string { return firstViolation(x.Result, checker) })
	if !k.Killed || o.save == "" || k.ByCorpus {
		return nil
	}
	f, err := wssim.NewReplay(k.Config, m.replayMutant, k.Run.Result)
	if err != nil {
		return err
	}
	f.Kills = k.Checkers
	if k.Shrunk {
		f.Kills = []string{k.Target}
	}
	row.ReplayFile, err = wssim.SaveReplay(o.save, f)
	return err
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
