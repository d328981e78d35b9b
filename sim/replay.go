package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// ReplayVersion is the version of the replay file format.
const ReplayVersion = 1

// Replay is a replay file: everything needed to run a judged run again
// exactly (the system by name, the configuration, the seed and the
// explicit plan), with what the run found, to compare.
type Replay struct {
	Version int `json:"version"`
	// System is the system's name ("reference", "mutant:<bug>", …);
	// Mutant the mutant's name when it is one.
	System string `json:"system"`
	Mutant string `json:"mutant,omitempty"`

	Seed         uint64           `json:"seed"`
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
	Plan   *Plan  `json:"plan"`

	// Hash is the history hash the run recorded; a replay must match it.
	Hash string `json:"hash"`
	// Violations and Failures are what the run found.
	Violations []string `json:"violations,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	// Kills, for a mutant's kill, lists the checkers that flagged the
	// mutant and not the reference on the same run.
	Kills []string `json:"kills,omitempty"`
}

// NewReplay describes the run of cfg (defaults filled in) that gave r.
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
		Version:      ReplayVersion,
		System:       cfg.System.Name(),
		Mutant:       mutant,
		Seed:         cfg.Seed,
		Workspaces:   cfg.Workspaces,
		Duration:     cfg.Duration.String(),
		Quiet:        cfg.Quiet.String(),
		Coordinators: cfg.Coordinators,
		Start:        cfg.Start,
		Workload:     cfg.Workload,
		Limits:       cfg.Limits,
		Faults:       cfg.Faults.String(),
		Plan:         plan.Clone(),
		Hash:         r.Hash,
		Failures:     r.Failures,
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

// Config rebuilds the run's configuration on system (which the caller
// resolves from System and Mutant).
func (f *Replay) Config(system ports.System) (Config, error) {
	if f.Version != ReplayVersion {
		return Config{}, fmt.Errorf("replay file version %d: want %d", f.Version, ReplayVersion)
	}
	if f.Plan == nil {
		return Config{}, errors.New("replay file has no plan")
	}
	var err error
	cfg := Config{
		Seed: f.Seed, Workspaces: f.Workspaces, Coordinators: f.Coordinators, Start: f.Start,
		Workload: f.Workload, Limits: f.Limits, Plan: f.Plan.Clone(), System: system,
	}
	if cfg.Duration, err = time.ParseDuration(f.Duration); err != nil {
		return Config{}, fmt.Errorf("replay file duration: %w", err)
	}
	if cfg.Quiet, err = time.ParseDuration(f.Quiet); err != nil {
		return Config{}, fmt.Errorf("replay file quiet: %w", err)
	}
	if f.RestartDelay != "" {
		if cfg.RestartDelay, err = time.ParseDuration(f.RestartDelay); err != nil {
			return Config{}, fmt.Errorf("replay file restart delay: %w", err)
		}
	}
	if cfg.Faults, err = ParseFaultMix(f.Faults); err != nil {
		return Config{}, fmt.Errorf("replay file faults: %w", err)
	}
	return cfg, nil
}

// WriteReplay writes f to path (its directory created if need be).
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

// ReadReplay reads a replay file.
func ReadReplay(path string) (*Replay, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read replay file: %w", err)
	}
	f, err := ParseReplay(b)
	if err != nil {
		return nil, fmt.Errorf("read replay file %s: %w", path, err)
	}
	return f, nil
}

// ParseReplay decodes a replay file's contents.
func ParseReplay(b []byte) (*Replay, error) {
	var f Replay
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode replay: %w", err)
	}
	return &f, nil
}

// ReplayName is the file name a run's replay file is written under.
func ReplayName(system string, seed uint64) string {
	safe := make([]byte, 0, len(system))
	for i := 0; i < len(system); i++ {
		c := system[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			safe = append(safe, c)
		default:
			safe = append(safe, '-')
		}
	}
	return fmt.Sprintf("%s-seed-%d.json", safe, seed)
}
