package streams

import "math/rand/v2"

// splitmix64 is the SplitMix64 finaliser: a bijective mixer that turns
// nearby inputs into unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// SubSeed derives the seed of one stream of randomness from a run's seed
// and a path of stream numbers (say: the coordinator-ids stream, instance
// 2, generation 1). Each consumer draws from its own stream, so adding
// draws to one never shifts another.
func SubSeed(seed uint64, path ...uint64) uint64 {
	s := splitmix64(seed)
	for _, p := range path {
		s = splitmix64(s ^ splitmix64(p+0x632be59bd9b4e019))
	}
	return s
}

// NewRand returns a generator private to one stream.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix64(seed)))
}
