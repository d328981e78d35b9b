package sim

import "math/rand/v2"

// Streams of randomness derived from the run's seed. Each consumer draws from
// its own stream, so adding draws to one (say, the workload) never shifts
// another (say, the ids a coordinator issues).
const (
	streamWorkload uint64 = 1 + iota
	streamAPIIDs
	streamFaults
	streamCoordinatorIDs
	// streamFaultDraws: per-call draws of partial outages.
	streamFaultDraws
	// streamScripted: the scripted users of a plan, one sub-stream each.
	streamScripted
)

// splitmix64 is the SplitMix64 finaliser: a bijective mixer that turns
// nearby inputs into unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// SubSeed derives the seed of one stream from a run's seed and a path of
// stream numbers (for example the coordinator-ids stream, instance 2,
// generation 1).
func SubSeed(seed uint64, path ...uint64) uint64 {
	s := splitmix64(seed)
	for _, p := range path {
		s = splitmix64(s ^ splitmix64(p+0x632be59bd9b4e019))
	}
	return s
}

// newRand returns a generator private to one stream.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix64(seed)))
}
