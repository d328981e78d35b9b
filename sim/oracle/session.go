package oracle

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wsconverge/converge/internal/streams"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/sim/engine"
)

// Session is a run driven step by step from outside (a property-based
// state machine, say): time advances, faults and moderator actions happen
// when the caller says, and Finish plays the quiet phase and the final
// stop, then judges every record. Options.Faults and Options.Ops are
// ignored: nothing is planned.
type Session struct {
	w *world
}

// MaxFaultWindow bounds a fault window a Session opens.
const MaxFaultWindow = 2 * time.Minute

// NewSession starts a run at genesis: the requests are registered, the
// blocks and the daemon scheduled.
func NewSession(o Options) (*Session, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("oracle sim: %w", err)
	}
	o = o.withDefaults()
	w, err := newWorld(o)
	if err != nil {
		return nil, err
	}
	w.begin()
	return &Session{w: w}, nil
}

// Now is the session's virtual time.
func (s *Session) Now() time.Time { return s.w.now() }

// Advance runs the world for d.
func (s *Session) Advance(ctx context.Context, d time.Duration) error {
	return s.w.runUntil(ctx, s.w.now().Add(d))
}

// Inject starts fault id of the catalogue now, its knobs drawn from seed;
// a window lasts at most MaxFaultWindow.
func (s *Session) Inject(id string, seed uint64) error {
	if !slices.Contains(Catalogue, id) {
		return fmt.Errorf("%w: unknown fault %q", engine.ErrBadInput, id)
	}
	s.w.inject(id, MaxFaultWindow, streams.NewRand(seed))
	return s.w.err
}

// Operate is one moderator action now, drawn from seed.
func (s *Session) Operate(seed uint64) error {
	s.w.operate(streams.NewRand(seed))
	return s.w.err
}

// Finish waits for the last fault window to close (plus 40 s), plays the
// quiet phase and the final stop, and judges the whole run.
func (s *Session) Finish(ctx context.Context) (*Result, error) {
	w := s.w
	quiet := w.now()
	if end := w.faultsEnd.Add(40 * time.Second); end.After(quiet) {
		quiet = end
	}
	end, err := w.finish(ctx, quiet)
	if err != nil {
		return nil, err
	}
	p := Params(w.o)
	p.QuietFrom = quiet
	evs := w.rec.Events()
	rep, err := oraclejudge.Check(p, evs)
	if err != nil {
		return nil, fmt.Errorf("oracle sim: %w", err)
	}
	return &Result{Seed: w.o.Seed, System: w.o.System.Name(), Hash: w.rec.Hash(), Records: int64(len(evs)), Report: rep,
		SimTime: end.Sub(Genesis), Events: evs, QuietFrom: quiet}, nil
}
