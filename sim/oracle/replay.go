package oracle

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wsconverge/converge/sim/engine"
)

// World is the oracle world's name in replay files.
const World = "oracle"

// ReplayVersion is the oracle replay format's version.
const ReplayVersion = 1

// Limits of a run's shape (flags and replay files are checked against
// them).
const (
	MaxRequests = 200
	MaxPhase    = 48 * time.Hour
	MaxFaults   = 10_000
	MaxPoolSize = 256
)

// Validate reports the first problem with o's shape (after defaults).
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Requests < 1 || o.Requests > MaxRequests:
		return fmt.Errorf("%w: %d requests: want 1 to %d", engine.ErrBadInput, o.Requests, MaxRequests)
	case o.FaultPhase < 2*time.Minute || o.FaultPhase > MaxPhase:
		return fmt.Errorf("%w: fault phase %s: want 2m to %s", engine.ErrBadInput, o.FaultPhase, MaxPhase)
	case o.QuietPhase < time.Minute || o.QuietPhase > MaxPhase:
		return fmt.Errorf("%w: quiet phase %s: want 1m to %s", engine.ErrBadInput, o.QuietPhase, MaxPhase)
	case o.Faults > MaxFaults || o.Ops > MaxFaults:
		return fmt.Errorf("%w: %d faults, %d ops: want at most %d each", engine.ErrBadInput, o.Faults, o.Ops, MaxFaults)
	case o.PoolSize < 0 || o.PoolSize > MaxPoolSize:
		return fmt.Errorf("%w: pool size %d: want 0 (default) to %d", engine.ErrBadInput, o.PoolSize, MaxPoolSize)
	}
	return checkSteering(o.Steering)
}

// Replay is an oracle replay file: the shared header and the run's shape.
// A run is a function of its seed and shape, so nothing else is needed to
// replay it.
type Replay struct {
	engine.Header
	Requests   int    `json:"requests"`
	FaultPhase string `json:"fault_phase"`
	QuietPhase string `json:"quiet_phase"`
	Faults     int    `json:"faults"`
	Ops        int    `json:"ops"`
	PoolSize   int    `json:"pool_size,omitempty"`
	// Steering is what coverage steering forced on for the seed (none:
	// unsteered); Requests is already steered.
	Steering *engine.Steering `json:"steering,omitempty"`
}

// NewReplay describes run res of options o (mutant: the mutant's name, or
// "").
func NewReplay(o Options, mutant string, res *Result) Replay {
	o = o.withDefaults()
	system := ReferenceName
	if o.System != nil {
		system = o.System.Name()
	}
	r := Replay{Header: engine.Header{World: World, Version: ReplayVersion, System: system, Mutant: mutant,
		Seed: o.Seed, Hash: res.Hash}, Requests: o.Requests, FaultPhase: o.FaultPhase.String(), QuietPhase: o.QuietPhase.String(),
		Faults: o.Faults, Ops: o.Ops, PoolSize: o.PoolSize, Steering: o.Steering.Clone()}
	if mutant != "" {
		r.System = engine.MutantPrefix + mutant
	}
	if res.Report != nil {
		for _, v := range res.Report.Violations {
			r.Violations = append(r.Violations, v.String())
		}
	}
	return r
}

// Options are the run's options, with system as the daemon (nil: the
// system registered as ReferenceName).
func (r *Replay) Options(system System) (Options, error) {
	fp, err := time.ParseDuration(r.FaultPhase)
	if err != nil {
		return Options{}, fmt.Errorf("%w: fault_phase %q: %v", engine.ErrBadInput, r.FaultPhase, err)
	}
	qp, err := time.ParseDuration(r.QuietPhase)
	if err != nil {
		return Options{}, fmt.Errorf("%w: quiet_phase %q: %v", engine.ErrBadInput, r.QuietPhase, err)
	}
	// A file records every count and phase after the defaults were
	// filled in, "none" as -1: a zero, or another negative, is a hand
	// edit the defaults would silently turn into another run.
	switch {
	case r.Requests < 1:
		return Options{}, fmt.Errorf("%w: requests %d: want 1 to %d", engine.ErrBadInput, r.Requests, MaxRequests)
	case r.Faults == 0 || r.Faults < -1:
		return Options{}, fmt.Errorf("%w: faults %d: want -1 (none) or 1 to %d", engine.ErrBadInput, r.Faults, MaxFaults)
	case r.Ops == 0 || r.Ops < -1:
		return Options{}, fmt.Errorf("%w: ops %d: want -1 (none) or 1 to %d", engine.ErrBadInput, r.Ops, MaxFaults)
	case fp <= 0:
		return Options{}, fmt.Errorf("%w: fault_phase %s: want 2m to %s", engine.ErrBadInput, fp, MaxPhase)
	case qp <= 0:
		return Options{}, fmt.Errorf("%w: quiet_phase %s: want 1m to %s", engine.ErrBadInput, qp, MaxPhase)
	}
	o := Options{Seed: r.Seed, System: system, Requests: r.Requests, FaultPhase: fp, QuietPhase: qp, Faults: r.Faults,
		Ops: r.Ops, PoolSize: r.PoolSize, Steering: r.Steering.Clone()}
	if err := o.Validate(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// errNotOracle: the file is another world's.
var errNotOracle = errors.New("not an oracle replay file")

// DecodeReplay reads an oracle replay file strictly: unknown fields,
// another world's file, another version or a shape out of range are
// errors wrapping engine.ErrBadInput.
func DecodeReplay(rd io.Reader) (*Replay, error) {
	var r Replay
	if err := engine.DecodeStrict(rd, &r); err != nil {
		return nil, err
	}
	switch {
	case r.World != World:
		return nil, fmt.Errorf("%w: %w: its world is %q", engine.ErrBadInput, errNotOracle, r.World)
	case r.Version != ReplayVersion:
		return nil, fmt.Errorf("%w: replay format version %d: this binary reads %d", engine.ErrBadInput, r.Version, ReplayVersion)
	}
	if err := r.CheckHash(); err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrBadInput, err)
	}
	if err := r.CheckSystem(); err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrBadInput, err)
	}
	if _, err := r.Options(nil); err != nil {
		return nil, err
	}
	return &r, nil
}
