package fakes

import (
	"math/rand/v2"
	"sync"
)

// IDs issues deterministic UUIDv4-formatted ids from a seed (ports.IDs).
type IDs struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewIDs returns an id source; the same seed gives the same sequence.
func NewIDs(seed uint64) *IDs {
	return &IDs{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

const hexDigits = "0123456789abcdef"

// NewID returns the next id, e.g. "3f2c9a1e-5b7d-4c0e-8a6f-0123456789ab".
func (g *IDs) NewID() string {
	g.mu.Lock()
	hi, lo := g.rng.Uint64(), g.rng.Uint64()
	g.mu.Unlock()
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // variant 10
	var b [36]byte
	pos := 0
	put := func(v uint64, nibbles int) {
		for i := nibbles - 1; i >= 0; i-- {
			b[pos] = hexDigits[(v>>(uint(i)*4))&0xf]
			pos++
		}
	}
	dash := func() { b[pos] = '-'; pos++ }
	put(hi>>32, 8)
	dash()
	put(hi>>16, 4)
	dash()
	put(hi, 4)
	dash()
	put(lo>>48, 4)
	dash()
	put(lo, 12)
	return string(b[:])
}
