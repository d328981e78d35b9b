package cli

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
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

// simFlags are the flags both worlds' sim commands share: the seeds, the
// rule of evidence, shrinking, and the campaign's steering, shard and
// report files.
type simFlags struct {
	seedRange
	evidence
	shrinking
	campaign
}

// register adds them.
func (s *simFlags) register(f *pflag.FlagSet) {
	s.seedRange.register(f)
	s.evidence.register(f)
	s.shrinking.register(f)
	s.campaign.register(f)
}

// validate checks them against the world's checkers, parsing --steer with
// the world's parse.
func (s *simFlags) validate(cmd *cobra.Command, checkers []string, parseSteer func(string) (*engine.Steering, error)) error {
	if err := s.seedRange.validate(); err != nil {
		return err
	}
	if err := s.evidence.validate(s.seeds, s.seed, checkers); err != nil {
		return err
	}
	if err := s.shrinking.validate(cmd); err != nil {
		return err
	}
	return s.campaign.validate(parseSteer)
}

// campaign is the flags both worlds' sim commands share about the seeds a
// run takes and what it writes besides its text: a fixed steering for
// every seed, a shard of the range, --json, --junit and --html.
type campaign struct {
	steerSpec string
	steer     *engine.Steering
	shardSpec string
	shard     engine.Shard
	json      bool
	junit     string
	html      string
}

// register adds the flags.
func (c *campaign) register(f *pflag.FlagSet) {
	f.StringVar(&c.steerSpec, "steer", "", "run every seed with this steering (fault kinds and workload features, comma-separated), as a steered seed's rerun command does; turns the run's own steering off")
	f.BoolVar(&c.json, "json", false, "print one JSON object (runs and totals) instead of text")
	f.StringVar(&c.junit, "junit", "", "also write a JUnit XML report to this file (a suite per seed, a case per checker)")
	f.StringVar(&c.html, "html", "", "also write an HTML timeline of the first failing seed (the first seed if all pass) to this file")
	f.StringVar(&c.shardSpec, "shard", "", "run only shard i of n of the seed range (i/n)")
}

// validate parses --steer with the world's parse and --shard, and checks
// the report files can be written.
func (c *campaign) validate(parseSteer func(string) (*engine.Steering, error)) error {
	if c.steerSpec != "" {
		st, err := parseSteer(c.steerSpec)
		if err != nil {
			return usagef("--steer: %s", trimBadInput(err))
		}
		c.steer = st
	}
	if c.shardSpec != "" {
		s, err := engine.ParseShard(c.shardSpec)
		if err != nil {
			return usagef("--shard %q: want i/n with 1 ≤ i ≤ n", c.shardSpec)
		}
		c.shard = s
	}
	for _, out := range []struct{ flag, path string }{{"--junit", c.junit}, {"--html", c.html}} {
		if out.path != "" {
			if err := checkWritable(out.flag, out.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// seeds are the seeds the run may take (its budget) and the least it takes
// (--seeds), of its shard.
func (s *simFlags) span() (all []uint64, minimum int) {
	return s.shard.Seeds(s.seed, s.budget), len(s.shard.Seeds(s.seed, s.seeds))
}

// simVerdict is what a sim command's run came to, in either world.
type simVerdict struct {
	errors      []string
	interrupted bool
	failed      int
	unmet       []string
}

// endSim ends a sim command in either world: it writes the JUnit report
// (when --junit), then rep as JSON (--json) or the text totals, and
// returns the exit the run earned: 3 a run not carried out, 130
// interrupted, 1 a failed seed, 5 an obligation unmet.
func (c *config) endSim(s *simFlags, junit func() *engine.JUnitSuites, rep any, text func(w io.Writer), v simVerdict) error {
	if s.junit != "" {
		if err := WriteFile(s.junit, junit().Write); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	}
	if s.json {
		if err := writeJSON(c.stdout, rep); err != nil {
			return &codeError{code: ExitError, err: err}
		}
	} else {
		text(c.stdout)
	}
	switch {
	case len(v.errors) > 0:
		return &codeError{code: ExitError, err: errors.New(v.errors[0])}
	case v.interrupted:
		return exitWith(ExitInterrupted)
	case v.failed > 0:
		return exitWith(ExitFailed)
	case len(v.unmet) > 0:
		return exitWith(ExitUnmet)
	}
	return nil
}

// firstFailing is the index of the first run that did not pass, or 0 when
// all passed: the seed --html draws.
func firstFailing[R any](runs []R, pass func(R) bool) int {
	for i, r := range runs {
		if !pass(r) {
			return i
		}
	}
	return 0
}
