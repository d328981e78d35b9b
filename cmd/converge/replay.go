package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim"
)

const replayUsage = `Usage: converge replay [flags] FILE

Re-runs the run a replay file describes (written by converge sim or
converge mutants for a failing seed): the same system, configuration, seed
and explicit fault plan, so the same history. It checks the history hash
against the one recorded, then prints the plan, the violations with the
timeline around their evidence (virtual time since the start), and the
failures.

Flags:
  --full   print the whole timeline (routine listings left out) instead of
           the events around each violation
  --json   print one JSON object instead of text

Exit codes: 0 the run passed and its hash matched, 1 it failed (or its hash
differs: the code changed since the file was written), 2 usage error.
`

// replayReport is the replay command's JSON form.
type replayReport struct {
	File         string            `json:"file"`
	System       string            `json:"system"`
	Seed         uint64            `json:"seed"`
	Hash         string            `json:"hash"`
	RecordedHash string            `json:"recorded_hash"`
	HashMatches  bool              `json:"hash_matches"`
	Plan         []string          `json:"plan"`
	Pass         bool              `json:"pass"`
	Failures     []string          `json:"failures,omitempty"`
	Violations   []violationReport `json:"violations,omitempty"`
	Timeline     []string          `json:"timeline,omitempty"`
}

func runReplayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fastGC()
	return runReplay(ctx, args, stdout, stderr, defaultEnv(stderr))
}

// systemOf resolves a replay file's system.
func (env simEnv) systemOf(f *sim.Replay) (ports.System, error) {
	if f.Mutant != "" {
		return env.mutant(f.Mutant)
	}
	s := env.system()
	if f.System != s.Name() {
		return nil, fmt.Errorf("replay file names system %q: only the reference (%q) and mutants can be replayed", f.System, s.Name())
	}
	return s, nil
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer, env simEnv) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	full := fs.Bool("full", false, "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, replayUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "converge replay: %v\n\n%s", err, replayUsage)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "converge replay: want exactly one replay file\n\n%s", replayUsage)
		return exitUsage
	}
	path := fs.Arg(0)
	f, err := sim.ReadReplay(path)
	if err != nil {
		fmt.Fprintf(stderr, "converge replay: %v\n", err)
		return exitUsage
	}
	system, err := env.systemOf(f)
	if err != nil {
		fmt.Fprintf(stderr, "converge replay: %v\n", err)
		return exitUsage
	}
	cfg, err := f.Config(system)
	if err != nil {
		fmt.Fprintf(stderr, "converge replay: %v\n", err)
		return exitUsage
	}
	cfg.Checks = env.checks
	s, res, err := sim.Execute(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "converge replay: %v\n", err)
		return exitFailure
	}
	rep := replayReport{
		File: path, System: f.System, Seed: f.Seed, Hash: res.Hash, RecordedHash: f.Hash,
		HashMatches: res.Hash == f.Hash, Pass: res.OK(), Failures: res.Failures,
	}
	for _, a := range f.Plan.Actions {
		rep.Plan = append(rep.Plan, history.Offset(a.At)+" "+a.String())
	}
	if res.Report != nil {
		rep.Violations = violationReports(res, cfg.Start)
	}
	if *full {
		rep.Timeline = s.Timeline(0)
	} else if len(rep.Violations) == 0 {
		rep.Timeline = s.Timeline(sim.TailLines)
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "converge replay: %v\n", err)
			return exitFailure
		}
	} else {
		writeReplay(stdout, &rep, f)
	}
	if !rep.Pass || !rep.HashMatches {
		return exitFailure
	}
	return exitOK
}

func writeReplay(w io.Writer, rep *replayReport, f *sim.Replay) {
	fmt.Fprintf(w, "replay %s: system %s, seed %d, %d workspaces, %s of faults + %s quiet, %d coordinators\n",
		rep.File, rep.System, rep.Seed, f.Workspaces, f.Duration, f.Quiet, f.Coordinators)
	if rep.HashMatches {
		fmt.Fprintf(w, "hash %.16s… matches the recorded run\n", rep.Hash)
	} else {
		fmt.Fprintf(w, "HASH DIFFERS: %.16s… now, %.16s… recorded (the code changed since the file was written?)\n", rep.Hash, rep.RecordedHash)
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
