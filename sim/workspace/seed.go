package workspace

import (
	"math/rand/v2"

	"github.com/wsconverge/converge/internal/streams"
)

// Streams of randomness derived from the run's seed (streams.SubSeed). Each
// consumer draws from its own stream, so adding draws to one (say, the
// workload) never shifts another (say, the ids a coordinator issues).
const (
	streamWorkload uint64 = 1 + iota
	streamAPIIDs
	streamFaults
	streamCoordinatorIDs
	// streamFaultDraws: per-call draws of partial outages.
	streamFaultDraws
	// streamScripted: the scripted users of a plan, one sub-stream each.
	streamScripted
	// streamInterleave: which concurrent API call runs next.
	streamInterleave
	// streamLaterFaults: the plan's draws of the fault kinds added after
	// the first stream was pinned (laterFaultKinds, DR496).
	streamLaterFaults
)

// SubSeed derives the seed of one stream from a run's seed and a path of
// stream numbers (streams.SubSeed).
func SubSeed(seed uint64, path ...uint64) uint64 { return streams.SubSeed(seed, path...) }

// newRand returns a generator private to one stream.
func newRand(seed uint64) *rand.Rand { return streams.NewRand(seed) }
