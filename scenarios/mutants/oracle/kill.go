package oracle

import (
	"context"
	"time"

	oracled "github.com/wsconverge/converge/refimpl/oracle"
	"github.com/wsconverge/converge/sim/engine"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// A Hunt is engine.Hunt in the oracle world: a run's configuration is its
// Options, a run its Result.
type Hunt = engine.Hunt[oraclesim.Options, *oraclesim.Result]

// Kill is the outcome of a Hunt.
type Kill = engine.Kill[oraclesim.Options, *oraclesim.Result]

// reference is the world a mutant's runs are compared with: the same
// options, the reference daemon.
func reference() oraclesim.Runner { return oraclesim.Runner{System: oracled.NewSystem()} }

// NewHunt is the kill matrix's hunt for m: seeds first, first+1, … (at
// most n of them) until one of its expected checkers flags a violation
// that the reference, run on the same options, does not. now is the wall
// clock of the kill's times (nil: time.Now).
func NewHunt(m *Mutant, first uint64, n int, now func() time.Time) *Hunt {
	return &Hunt{
		First: first, Seeds: n, Expected: m.Kills, Now: clock(now),
		Config: func(seed uint64) oraclesim.Options {
			o := m.Options
			o.Seed, o.System = seed, m
			return o
		},
		Mutant: oraclesim.Runner{}, Reference: reference(),
	}
}

// NewSourceHunt is NewHunt for source mutant m, built as x.
func NewSourceHunt(m *SourceMutant, x *Built, first uint64, n int, now func() time.Time) *Hunt {
	return &Hunt{
		First: first, Seeds: n, Expected: m.Kills, Now: clock(now),
		Config: func(seed uint64) oraclesim.Options {
			o := m.Options
			o.Seed = seed
			return o
		},
		Mutant: x.World(), Reference: reference(),
	}
}

func clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// World is x as the engine drives it: each run is a run of the built
// command, its Result holding the seed, the history hash and the report
// (no records: they stay in the other process).
func (x *Built) World() engine.World[oraclesim.Options, *oraclesim.Result] { return builtWorld{x: x} }

type builtWorld struct {
	oraclesim.Runner
	x *Built
}

// Run runs o with the built daemon.
func (w builtWorld) Run(ctx context.Context, o oraclesim.Options, _ bool) (*oraclesim.Result, error) {
	rep, hash, err := w.x.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	return &oraclesim.Result{Seed: o.Seed, System: w.x.Name, Hash: hash, Report: rep}, nil
}
