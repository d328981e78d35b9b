package cli

import (
	"github.com/spf13/pflag"

	"github.com/wsconverge/converge/sim/engine"
)

// maxSeeds bounds --seeds.
const maxSeeds = 1_000_000

// seedRange is the seed flags both worlds' sim commands share: which seeds,
// how many at once, where failing seeds' replay files go, whether to stop
// at the first failure.
type seedRange struct {
	seed      uint64
	seeds     int
	jobs      int
	replayDir string
	stopFirst bool
}

func (r *seedRange) register(f *pflag.FlagSet) {
	f.Uint64Var(&r.seed, "seed", 1, "first seed")
	f.IntVar(&r.seeds, "seeds", 20, "number of seeds, S … S+N-1")
	f.IntVar(&r.jobs, "jobs", engine.DefaultJobs(), "seeds run at once")
	f.StringVar(&r.replayDir, "replay-dir", engine.DefaultReplayDir(), "where replay files of failing seeds go")
	f.BoolVar(&r.stopFirst, "stop-at-first-failure", false, "stop at the first failing seed")
}

func (r *seedRange) validate() error {
	switch {
	case r.seeds < 1 || r.seeds > maxSeeds:
		return usagef("--seeds %d: want 1 to %d", r.seeds, maxSeeds)
	case r.seed+uint64(r.seeds-1) < r.seed:
		return usagef("--seed %d with --seeds %d overflows", r.seed, r.seeds)
	case r.jobs < 1 || r.jobs > 256:
		return usagef("--jobs %d: want 1 to 256", r.jobs)
	case r.replayDir == "":
		return usagef("--replay-dir: want a directory")
	}
	return nil
}
