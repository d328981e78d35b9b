package workspace

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sync"

	"github.com/google/uuid"
)

// IDs issues deterministic version-4 UUIDs from a seed (ports.IDs): the
// UUIDs are google/uuid's, made from a seeded random stream instead of the
// system's.
type IDs struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewIDs returns an id source; the same seed gives the same sequence.
func NewIDs(seed uint64) *IDs {
	return &IDs{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// NewID returns the next id, e.g. "3f2c9a1e-5b7d-4c0e-8a6f-0123456789ab".
func (g *IDs) NewID() string {
	var b [16]byte
	g.mu.Lock()
	binary.BigEndian.PutUint64(b[:8], g.rng.Uint64())
	binary.BigEndian.PutUint64(b[8:], g.rng.Uint64())
	g.mu.Unlock()
	// uuid sets the version and variant bits; a reader of 16 bytes
	// never fails.
	return uuid.Must(uuid.NewRandomFromReader(bytes.NewReader(b[:]))).String()
}
