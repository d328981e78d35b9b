package ports

import (
	"time"
)

// Daemon is an oracle daemon as its world drives it, one call at a time:
// Start begins a lifetime, Handle gives it one input (time never going
// back), and NextWake says when it wants a Wake if nothing else happens.
// The outputs of a call are in the order the world must act on them. A
// Reply or a Fetched may be handed over by address (*Reply, *Fetched, in
// the world's memory and valid during the call only; ByValue gives the
// values). The reference daemon (refimpl/oracle/core) is one; a mutant
// seen through bent ports is another.
type Daemon interface {
	Start(now time.Time) []Output
	Handle(now time.Time, in Input) []Output
	NextWake() (time.Time, bool)
}

// Rand is a daemon's only source of randomness: the ±10 % jitter of the
// submission and re-subscription backoffs. *math/rand/v2.Rand satisfies
// it; the simulator gives a seeded one.
type Rand interface {
	// Float64 returns a number in [0, 1).
	Float64() float64
}
