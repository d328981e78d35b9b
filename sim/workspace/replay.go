package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/engine"
)

// ReplayVersion is the version of the workspace world's replay format;
// ReplayWorld names the world in the file's header.
//
// Version 2 (issue 22) runs the workload of today; a file of version 1 was
// recorded with the workload before it and is replayed with
// Workload.Legacy, so that it reruns the same run.
const (
	ReplayVersion = 2
	ReplayWorld   = "workspace"
)

// Replay is a replay file: everything needed to run a judged run again
// exactly (the system by name, the configuration, the seed and the
// explicit plan), with what the run found, to compare.
type Replay struct {
	engine.Header

	Workspaces   int              `json:"workspaces"`
	Duration     string           `json:"duration"`
	Quiet        string           `json:"quiet"`
	Coordinators int              `json:"coordinators"`
	Start        time.Time        `json:"start"`
	Workload     Workload         `json:"workload"`
	Limits       contracts.Limits `json:"limits"`
	RestartDelay string           `json:"restart_delay,omitempty"`
	// Faults is the mix the plan was drawn from (for the reader; the plan
	// below is what runs).
	Faults string `json:"faults"`
	// Steering is what coverage steering forced on for the seed (none:
	// unsteered); Workload and Plan are already steered.
	Steering *engine.Steering `json:"steering,omitempty"`
	Plan     *Plan            `json:"plan"`
}

// NewReplay describes the run of cfg (defaults filled in) that gave r;
// mutant names the mutant when cfg.System is one.
func NewReplay(cfg Config, mutant string, r Result) (*Replay, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	plan := r.Plan
	if plan == nil {
		plan = cfg.Plan
	}
	if plan == nil {
		plan = GeneratePlan(cfg.Seed, cfg.Faults, cfg.Duration)
	}
	f := &Replay{
		Header: engine.Header{
			World: ReplayWorld, Version: ReplayVersion, System: cfg.System.Name(), Mutant: mutant,
			Seed: cfg.Seed, Hash: r.Hash, Failures: r.Failures,
		},
		Workspaces:   cfg.Workspaces,
		Duration:     cfg.Duration.String(),
		Quiet:        cfg.Quiet.String(),
		Coordinators: cfg.Coordinators,
		Start:        cfg.Start,
		Workload:     cfg.Workload,
		Limits:       cfg.Limits,
		Faults:       cfg.Faults.String(),
		Steering:     cfg.Steering.Clone(),
		Plan:         plan.Clone(),
	}
	if cfg.RestartDelay > 0 {
		f.RestartDelay = cfg.RestartDelay.String()
	}
	if r.Report != nil {
		for _, v := range r.Report.Violations {
			f.Violations = append(f.Violations, v.String())
		}
	}
	return f, nil
}

func badReplay(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{engine.ErrBadInput}, args...)...)
}

// check validates the header: the world, the version, system and mutant.
func (f *Replay) check() error {
	switch {
	case f.World != "" && f.World != ReplayWorld:
		return badReplay("a replay file of the %q world, not of the workspace world", f.World)
	case f.Version < 1 || f.Version > ReplayVersion:
		return badReplay("replay format version %d: this converge reads versions 1 to %d", f.Version, ReplayVersion)
	case f.Plan == nil:
		return badReplay("the file has no plan")
	}
	if err := f.CheckSystem(); err != nil {
		return badReplay("%v", err)
	}
	if err := f.CheckHash(); err != nil {
		return badReplay("%v", err)
	}
	return nil
}

// Config rebuilds the run's configuration on system (which the caller
// resolves from System and Mutant), validating every field. Errors wrap
// engine.ErrBadInput.
func (f *Replay) Config(system ports.System) (Config, error) {
	if err := f.check(); err != nil {
		return Config{}, err
	}
	if err := f.checkFields(); err != nil {
		return Config{}, err
	}
	cfg := Config{
		Seed: f.Seed, Workspaces: f.Workspaces, Coordinators: f.Coordinators, Start: f.Start,
		Workload: f.Workload, Limits: f.Limits, Plan: f.Plan.Clone(), System: system, Steering: f.Steering.Clone(),
	}
	if f.Version < 2 {
		cfg.Workload.Legacy = true
	}
	var err error
	if cfg.Duration, err = parseDuration("duration", f.Duration); err != nil {
		return Config{}, err
	}
	if cfg.Quiet, err = parseDuration("quiet", f.Quiet); err != nil {
		return Config{}, err
	}
	if f.RestartDelay != "" {
		if cfg.RestartDelay, err = parseDuration("restart_delay", f.RestartDelay); err != nil {
			return Config{}, err
		}
	}
	if cfg.Faults, err = ParseFaultMix(f.Faults); err != nil {
		return Config{}, fmt.Errorf("faults: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// checkFields refuses what a replay file written by converge never holds:
// a file records every value explicitly (the defaults filled in), so a
// zero where the simulator would fill a default in, or a value out of
// range, is a hand edit or a corruption, named by its field.
func (f *Replay) checkFields() error {
	switch {
	case f.Start.IsZero():
		return badReplay(`"start" is missing`)
	case f.Start.Before(MinStart) || !f.Start.Before(MaxStart):
		return badReplay("start %s out of range [%s, %s)", f.Start.Format(time.RFC3339), MinStart.Format(time.DateOnly), MaxStart.Format(time.DateOnly))
	case f.Workspaces < 0 || f.Workspaces > MaxWorkspaces:
		return badReplay("workspaces %d out of range [0, %d]", f.Workspaces, MaxWorkspaces)
	case f.Coordinators < 1 || f.Coordinators > MaxCoordinators:
		return badReplay("coordinators %d out of range [1, %d]", f.Coordinators, MaxCoordinators)
	case f.Limits.MaxRunningPerUser < 1 || f.Limits.MaxRunningPerUser > maxLimit:
		return badReplay("limits.MaxRunningPerUser %d out of range [1, %d]", f.Limits.MaxRunningPerUser, maxLimit)
	case f.Limits.MaxRunningGlobal < 1 || f.Limits.MaxRunningGlobal > maxLimit:
		return badReplay("limits.MaxRunningGlobal %d out of range [1, %d]", f.Limits.MaxRunningGlobal, maxLimit)
	case f.Workload.Users < 1 || f.Workload.Users > MaxWorkspaces:
		return badReplay("workload.users %d out of range [1, %d]", f.Workload.Users, MaxWorkspaces)
	case f.Workload.CreateWindow <= 0 || f.Workload.CreateWindow > MaxDuration:
		return badReplay("workload.create_window %s out of range (0, %s]", f.Workload.CreateWindow, MaxDuration)
	case math.IsNaN(f.Workload.DeletesPerDay) || f.Workload.DeletesPerDay == 0 || f.Workload.DeletesPerDay > 100:
		// Negative is "none", as in Workload.
		return badReplay("workload.deletes_per_day %g: want a negative number (none) or one in (0, 100]", f.Workload.DeletesPerDay)
	case f.Duration == "":
		return badReplay(`"duration" is missing`)
	case f.Quiet == "":
		return badReplay(`"quiet" is missing`)
	}
	return nil
}

func parseDuration(field, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, badReplay("%s %q: %v", field, s, err)
	}
	return d, nil
}

// WriteReplay writes f to path (its directory created if need be),
// replacing what is there: the caller chose the path. SaveReplay never
// overwrites.
func WriteReplay(path string, f *Replay) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode replay file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write replay file: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write replay file: %w", err)
	}
	return nil
}

// SaveReplay writes f into dir under its ReplayName, never overwriting
// another run's file (a suffix -2, -3, … is added instead), and returns the
// path.
func SaveReplay(dir string, f *Replay) (string, error) {
	return engine.WriteNew(dir, strings.TrimSuffix(ReplayName(f.System, f.Seed), ".json"), f)
}

// ReadReplay reads and validates a replay file's header (see
// ParseReplay).
func ReadReplay(path string) (*Replay, error) {
	b, err := engine.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read replay file: %w", err)
	}
	f, err := ParseReplay(b)
	if err != nil {
		return nil, fmt.Errorf("replay file %s: %w", path, err)
	}
	return f, nil
}

// ParseReplay decodes a replay file strictly: unknown fields, trailing
// data, a file over engine.MaxReplayBytes, another world's file or an
// unknown version are errors wrapping engine.ErrBadInput. The
// configuration itself is validated by Config.
func ParseReplay(b []byte) (*Replay, error) {
	var f Replay
	if err := engine.DecodeStrict(bytes.NewReader(b), &f); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// IsBadInput reports whether err is about malformed or out-of-range input.
func IsBadInput(err error) bool { return errors.Is(err, engine.ErrBadInput) }

// ReplayName is the file name a run's replay file is written under.
func ReplayName(system string, seed uint64) string {
	return fmt.Sprintf("%s-seed-%d.json", engine.SafeName(system), seed)
}
