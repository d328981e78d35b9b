package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/wsconverge/converge/contracts/ports"
)

// Clock is the wall clock, in UTC.
type Clock struct{}

// Now returns the current time.
func (Clock) Now() time.Time { return time.Now().UTC() }

// ScaledClock runs Speedup times faster than the wall clock from Start:
// real services, compressed schedules (drills and real-tier tests use it so
// that a 60 s TTL period takes seconds). Pass the same factor to
// Config.Speedup. Advance jumps it forward (to skip a GC's hours).
type ScaledClock struct {
	Start   time.Time
	Speedup float64
	origin  time.Time
	mu      sync.Mutex
	offset  time.Duration
}

// NewScaledClock starts a clock at start running speedup× real time.
func NewScaledClock(start time.Time, speedup float64) *ScaledClock {
	return &ScaledClock{Start: start.UTC(), origin: time.Now(), Speedup: speedup}
}

// NewScaledClockAt is the clock origin + (wall − origin)·speedup: a
// process started later reads the same time as one started at origin
// (CONVERGE_TIME_ORIGIN: every instance of a drill, and a restarted one,
// share the drill's clock).
func NewScaledClockAt(origin time.Time, speedup float64) *ScaledClock {
	return &ScaledClock{Start: origin.UTC(), origin: origin.Round(0), Speedup: speedup}
}

// Now is Start plus the real time elapsed since creation, times Speedup,
// plus every Advance.
func (c *ScaledClock) Now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.Start.Add(time.Duration(float64(time.Since(c.origin))*c.Speedup) + off)
}

// Advance moves the clock forward by d at once.
func (c *ScaledClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// IDs issues random UUIDv4 strings (google/uuid).
type IDs struct{}

// NewID returns a fresh random UUID.
func (IDs) NewID() string { return uuid.NewString() }

// Config tunes Run.
type Config struct {
	// Wake, when it receives, makes the runner step at once (e.g. a
	// monitor:trigger or change notification). Optional.
	Wake <-chan struct{}
	// MaxSleep caps one sleep (default 1 s) so that a leadership loss is
	// noticed within that long even when every component is idle.
	MaxSleep time.Duration
	// Speedup is how many seconds of the coordinator's clock pass per
	// real second (a ScaledClock's factor; default 1). Sleeps are divided
	// by it.
	Speedup float64
	// OnStep, if set, is called after every step with its wall time
	// (metrics).
	OnStep func(took time.Duration, leader bool)
	Logger *slog.Logger
}

// Waker is implemented by coordinators that can ask to be stepped early
// (the reference: when its change feed has notifications). The channel is
// taken afresh after every step.
type Waker interface {
	Wake() <-chan struct{}
}

// Run steps c until ctx is done (then closes c and returns ctx.Err()) or c
// reports an error (returned wrapped).
func Run(ctx context.Context, c ports.Coordinator, clock ports.Clock, cfg Config) error {
	if cfg.MaxSleep <= 0 {
		cfg.MaxSleep = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		start := clock.Now()
		next, err := c.Step(ctx)
		if cfg.OnStep != nil {
			took := clock.Now().Sub(start)
			if cfg.Speedup > 1 {
				took = time.Duration(float64(took) / cfg.Speedup) // wall time, on a scaled clock
			}
			cfg.OnStep(took, c.IsLeader())
		}
		if err != nil {
			if ctx.Err() != nil {
				return closeWith(c, ctx.Err())
			}
			return fmt.Errorf("coordinator step: %w", err)
		}
		sleep := next.Sub(clock.Now())
		if cfg.Speedup > 1 {
			sleep = time.Duration(float64(sleep) / cfg.Speedup)
		}
		if sleep > cfg.MaxSleep {
			sleep = cfg.MaxSleep
		}
		if sleep < 0 {
			sleep = 0
		}
		timer.Reset(sleep)
		var own <-chan struct{}
		if w, ok := c.(Waker); ok {
			own = w.Wake()
		}
		select {
		case <-ctx.Done():
			return closeWith(c, ctx.Err())
		case <-timer.C:
		case <-cfg.Wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-own:
			if !timer.Stop() {
				<-timer.C
			}
		}
	}
}

func closeWith(c ports.Coordinator, cause error) error {
	// Release the lock even though ctx is done.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(context.Background()), 5*time.Second)
	defer cancel()
	if err := c.Close(cctx); err != nil {
		return fmt.Errorf("%w (close: %v)", cause, err)
	}
	return cause
}
