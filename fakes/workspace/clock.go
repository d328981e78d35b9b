package workspace

import (
	"sync"
	"time"
)

// Clock is a virtual clock (ports.Clock). It only moves when told to, and
// never backwards.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the current virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t. It panics if t is before the current time: a
// simulator whose clock runs backwards has a bug worth stopping for.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Before(c.now) {
		panic("fakes: clock moved backwards from " + c.now.Format(time.RFC3339Nano) + " to " + t.Format(time.RFC3339Nano))
	}
	c.now = t
}

// Advance moves the clock forward by d (d >= 0).
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("fakes: negative clock advance " + d.String())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
