package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/contracts/record"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver"
	"github.com/wsconverge/converge/sim/workspace/report"
)

// replayCheck is what both replay commands' JSON reports say first: the
// file, its run and whether the run gave the history hash it recorded.
type replayCheck struct {
	File         string `json:"file"`
	System       string `json:"system"`
	Seed         uint64 `json:"seed"`
	Hash         string `json:"hash"`
	RecordedHash string `json:"recorded_hash"`
	HashMatches  bool   `json:"hash_matches"`
}

func newReplayCheck(file, system string, seed uint64, hash, recorded string) replayCheck {
	return replayCheck{File: file, System: system, Seed: seed, Hash: hash, RecordedHash: recorded, HashMatches: hash == recorded}
}

// replayReport is the replay command's JSON form.
type replayReport struct {
	replayCheck
	Plan       []string          `json:"plan"`
	Pass       bool              `json:"pass"`
	Failures   []string          `json:"failures,omitempty"`
	Violations []violationReport `json:"violations,omitempty"`
	Timeline   []string          `json:"timeline,omitempty"`
}

func (c *config) replayCommand() *cobra.Command {
	var full, asJSON, allowExec bool
	var htmlFile string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "re-run a replay file written for a failing run and show its timeline",
		Long: `Re-runs the run a replay file describes (written by converge sim or converge
mutants for a failing seed): the same system, configuration, seed and explicit
fault plan, so the same history. The file's system must be registered in this
binary (the reference and its mutants always are). A file of a system judged with
--exec records the command line of its child: a replay file is data and never runs
a command by itself, so such a file is refused unless --allow-exec says to run the
command it records (the command is printed first). It checks the history hash
against the one recorded, then prints the plan, the violations with the
timeline around their evidence (virtual time since the start), and the
failures.

The file is read strictly: unknown fields, another world's file, unknown fault
kinds and values out of range are rejected with exit status 2.`,
		Example: `  converge replay ~/.local/state/converge/replays/reference-seed-20.json
  converge replay --full FILE
  converge replay --json FILE`,
		Args: exactArgs(1, "exactly one replay file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fastGC()
			return c.runReplay(cmd, args[0], replayOptions{full: full, asJSON: asJSON, allowExec: allowExec, htmlFile: htmlFile, timeout: timeout})
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "print the whole timeline (routine listings left out) instead of the events around each violation")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	cmd.Flags().StringVar(&htmlFile, "html", "", "also write the run's HTML timeline (swimlanes per workspace, the first violation marked) to this file")
	cmd.Flags().DurationVar(&timeout, "exec-timeout", driver.DefaultTimeout, "for a file of an --exec system: how long to wait for each message of a child")
	cmd.Flags().BoolVar(&allowExec, "allow-exec", false, "for a file of an --exec system: run the command line the file records (never without this flag)")
	return cmd
}

// replayOptions are the replay command's flags.
type replayOptions struct {
	full, asJSON, allowExec bool
	htmlFile                string
	timeout                 time.Duration
}

// replaySystem resolves a replay file's system in this binary, and the
// function that ends it after the run.
func (c *config) replaySystem(path string, f *wssim.Replay, o replayOptions) (ports.System, func(), error) {
	t := targetOfSystem(f.System, f.Mutant)
	if t.exec != "" {
		if !o.allowExec {
			return nil, nil, usagef("replay file %s records a command as its system (%s): a replay file never runs a command by itself; "+
				"to run it, replay with --allow-exec", path, shellQuote(t.exec))
		}
		t.timeout = o.timeout
		if err := checkExec(t.exec); err != nil {
			return nil, nil, usagef("replay file %s: the command it records: %v", path, err)
		}
		fmt.Fprintf(c.stderr, "replay: starting the file's command as the system's child processes (--allow-exec): %s\n", t.exec)
	}
	s, done, err := c.build(t)
	if err != nil && t.exec == "" && t.mutant == "" {
		return nil, nil, usagef("the file names system %q, which this binary does not know (it knows %s): replay it with a converge binary that registers it (cli.WithSystem)", f.System, c.systemNames())
	}
	return s, done, err
}

func (c *config) runReplay(cmd *cobra.Command, path string, o replayOptions) error {
	full, asJSON, htmlFile := o.full, o.asJSON, o.htmlFile
	if htmlFile != "" {
		if err := checkWritable("--html", htmlFile); err != nil {
			return err
		}
	}
	f, err := wssim.ReadReplay(path)
	if err != nil {
		return usagef("%s", trimBadInput(err))
	}
	// Every field is validated before anything starts (a child process
	// included): a bad file is one line and exit 2.
	if _, err := f.Config(placeholderSystem{name: f.System}); err != nil {
		return usagef("replay file %s: %s", path, trimBadInput(err))
	}
	system, done, err := c.replaySystem(path, f, o)
	if err != nil {
		return err
	}
	defer done()
	cfg, err := f.Config(system)
	if err != nil {
		return usagef("replay file %s: %s", path, trimBadInput(err))
	}
	cfg.Checks = c.checks
	start := c.now()
	s, res, err := wssim.Execute(cmd.Context(), driver.Judged(cfg))
	if err != nil {
		return &codeError{code: ExitError, err: err}
	}
	if htmlFile != "" {
		run := report.FromSim(f.System, s, res, c.now().Sub(start))
		if err := WriteFile(htmlFile, func(w io.Writer) error { return report.HTML(w, run) }); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	rep := replayReport{replayCheck: newReplayCheck(path, f.System, f.Seed, res.Hash, f.Hash), Pass: res.OK(), Failures: res.Failures}
	for _, a := range f.Plan.Actions {
		rep.Plan = append(rep.Plan, history.Offset(a.At)+" "+a.String())
	}
	if res.Report != nil {
		rep.Violations = violationReports(res, cfg.Start)
	}
	if full {
		rep.Timeline = s.Timeline(0)
	} else if len(rep.Violations) == 0 {
		rep.Timeline = s.Timeline(wssim.TailLines)
	}
	if asJSON {
		if err := writeJSON(c.stdout, rep); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	} else {
		writeReplay(c.stdout, &rep, f)
	}
	if !rep.Pass || !rep.HashMatches {
		return exitWith(ExitFailed)
	}
	return nil
}

// oldHashNote says why a replay file's hash cannot match: it was written
// before history hashes became XXH3-128 (record.OldHash).
const oldHashNote = "the file's hash is a SHA-256 history hash, written by a converge before history hashes " +
	"became XXH3-128: no run of this converge can match it (the run itself may well be the same); " +
	"write the file again to compare"

func writeReplay(w io.Writer, rep *replayReport, f *wssim.Replay) {
	fmt.Fprintf(w, "replay %s: system %s, seed %d, %d workspaces, %s of faults + %s quiet, %d coordinators\n",
		rep.File, rep.System, rep.Seed, f.Workspaces, f.Duration, f.Quiet, f.Coordinators)
	if rep.HashMatches {
		fmt.Fprintf(w, "hash %.16s… matches the recorded run\n", rep.Hash)
	} else {
		fmt.Fprintf(w, "HASH DIFFERS: %.16s… now, %.16s… recorded (the code changed since the file was written?)\n", rep.Hash, rep.RecordedHash)
		if record.OldHash(rep.RecordedHash) {
			fmt.Fprintln(w, oldHashNote)
		}
	}
	fmt.Fprintf(w, "plan (%d actions):\n", len(rep.Plan))
	for _, a := range rep.Plan {
		fmt.Fprintf(w, "  %s\n", a)
	}
	for _, fl := range rep.Failures {
		fmt.Fprintf(w, "FAIL: %s\n", indent(fl, "  "))
	}
	writeViolations(w, rep.Seed, rep.Violations)
	if len(rep.Timeline) > 0 {
		fmt.Fprintf(w, "timeline (%d events):\n", len(rep.Timeline))
		for _, l := range rep.Timeline {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if len(f.Violations) > 0 && !rep.HashMatches {
		fmt.Fprintf(w, "violations recorded in the file:\n  %s\n", strings.Join(f.Violations, "\n  "))
	}
	fmt.Fprintf(w, "%s: %d violation(s), %d failure(s)\n", verdict(rep.Pass), len(rep.Violations), len(rep.Failures))
}

// absPath makes a path absolute for printed commands (a relative one would
// break when pasted elsewhere).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// placeholderSystem stands for a replay file's system while the file is
// validated, before the real one is built (or a child started).
type placeholderSystem struct{ name string }

func (p placeholderSystem) Name() string { return p.name }

func (placeholderSystem) NewCoordinator(ports.Deps) (ports.Coordinator, error) {
	return nil, errors.New("placeholder system: validation only")
}

func (placeholderSystem) NewAPI(ports.Deps) (ports.API, error) {
	return nil, errors.New("placeholder system: validation only")
}
