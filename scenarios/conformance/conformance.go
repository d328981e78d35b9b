package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/scenarios"
	"github.com/wsconverge/converge/sim/engine"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// Config says what to judge and how hard.
type Config struct {
	// NewSystem builds the system under test; it is called once per run
	// (a fresh system each time). Required.
	NewSystem func() ports.System

	// Seeds is the number of seeds of the default fault mix (default 100);
	// FirstSeed the first (default 1). Workspaces per seed (default 5) and
	// Duration of the fault phase (default 24h) size each run; the quiet
	// phase is wssim.DefaultQuiet.
	Seeds      int
	FirstSeed  uint64
	Workspaces int
	Duration   time.Duration
	// Faults is the fault mix (default wssim.DefaultFaults: every kind,
	// swarm style).
	Faults *wssim.FaultMix
	// Jobs is how many seeds run at once (default: the cores Go may use).
	Jobs int

	// ReplayDir is where the replay files of failing seeds and rapid
	// sequences go (default scenarios.ReplayDir: a directory under
	// os.TempDir made for the test process and kept, never the user's
	// home; its path is printed with each failure).
	ReplayDir string
	// ReplayCommand is how a user of this suite runs a replay file: a
	// converge binary that registers the system, e.g. "go run
	// ./cmd/acme-converge replay" (default "converge replay"); it is
	// printed with the file's path on failure.
	ReplayCommand string

	// Skip names parts not to run: "scenarios", "seeds", "rapid", or one
	// scenario ("scenarios/4-archive-ttl").
	Skip []string
}

func (c *Config) defaults() {
	if c.Seeds == 0 {
		c.Seeds = 100
	}
	if c.FirstSeed == 0 {
		c.FirstSeed = 1
	}
	if c.Workspaces == 0 {
		c.Workspaces = 5
	}
	if c.Duration == 0 {
		c.Duration = 24 * time.Hour
	}
	if c.Faults == nil {
		m := wssim.DefaultFaults()
		c.Faults = &m
	}
	if c.Jobs == 0 {
		c.Jobs = engine.DefaultJobs()
	}
	if c.ReplayCommand == "" {
		c.ReplayCommand = "converge replay"
	}
}

func (c *Config) skipped(name string) bool {
	for _, s := range c.Skip {
		if s == name {
			return true
		}
	}
	return false
}

// Run judges cfg.NewSystem with converge's whole suite, as subtests of t:
//
//   - scenarios/NAME: each of SPEC 6's scenarios;
//   - seeds: cfg.Seeds seeds of the fault mix, each run twice (the two
//     history hashes must match), with a subtest per failing seed that
//     prints its violations, the timeline around their evidence, and the
//     replay file written for it;
//   - checkers/NAME: one subtest per checker with its verdict over every
//     seed: pass, violated (fails, naming the seeds), or not exercised
//     (skipped: its situation never arose, so it proved nothing);
//   - rapid: the rapid state machine (shrinking, replay files, failfiles).
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.NewSystem == nil {
		t.Fatal("conformance.Config.NewSystem is required")
	}
	cfg.defaults()
	if !cfg.skipped("scenarios") {
		t.Run("scenarios", func(t *testing.T) {
			for _, sc := range scenarios.Spec() {
				t.Run(sc.Name, func(t *testing.T) {
					if cfg.skipped("scenarios/" + sc.Name) {
						t.Skip("skipped by Config.Skip")
					}
					t.Logf("SPEC 6: %s", sc.Spec)
					sc.Run(t, cfg.NewSystem())
				})
			}
		})
	}
	if !cfg.skipped("seeds") {
		tally := runSeeds(t, &cfg)
		t.Run("checkers", func(t *testing.T) {
			for _, c := range wsjudge.All() {
				name := c.Name()
				t.Run(name, func(t *testing.T) {
					switch tally.Verdict(name) {
					case judge.Violated:
						t.Errorf("%s (%s) violated in %d of %d seed(s), %d violation(s): see the seeds subtests", name, c.Contract(),
							tally.ViolatedRuns[name], tally.Runs, tally.Violations[name])
					case judge.NotExercised:
						t.Skipf("%s (%s) not exercised: its situation never arose in %d seed(s)", name, c.Contract(), tally.Runs)
					default:
						t.Logf("%s (%s) pass: exercised %d time(s) over %d seed(s)", name, c.Contract(), tally.Exercised[name], tally.Runs)
					}
				})
			}
		})
	}
	if !cfg.skipped("rapid") {
		t.Run("rapid", func(t *testing.T) { scenarios.StateMachineIn(t, cfg.ReplayDir, cfg.NewSystem) })
	}
}

// runSeeds judges every seed (on cfg.Jobs cores) inside the "seeds"
// subtest and returns the tally of their reports.
func runSeeds(t *testing.T, cfg *Config) *judge.Tally {
	t.Helper()
	tally := wssim.NewTally()
	t.Run("seeds", func(t *testing.T) {
		seeds := engine.Shard{}.Seeds(cfg.FirstSeed, cfg.Seeds)
		type outcome struct {
			res wssim.Result
			err error
			cfg wssim.Config
		}
		var mu sync.Mutex
		failed := 0
		engine.RunSeeds(t.Context(), seeds, cfg.Jobs, time.Now, func(ctx context.Context, seed uint64) (outcome, error) {
			c := wssim.Config{Seed: seed, Workspaces: cfg.Workspaces, Duration: cfg.Duration, Quiet: wssim.DefaultQuiet,
				Faults: *cfg.Faults, System: cfg.NewSystem()}
			res, err := wssim.Check(ctx, c)
			return outcome{res, err, c}, nil
		}, func(o engine.Outcome[outcome]) bool {
			mu.Lock()
			defer mu.Unlock()
			tally.Add(o.R.res.Report)
			if o.R.err == nil && o.R.res.OK() {
				return true
			}
			failed++
			t.Run(fmt.Sprintf("seed-%d", o.Seed), func(t *testing.T) {
				t.Error(describe(cfg, o.R.cfg, o.R.res, o.R.err))
			})
			return true
		})
		t.Logf("%d seed(s) of %d workspaces × %s, faults %s: %d failed", len(seeds), cfg.Workspaces, cfg.Duration, cfg.Faults, failed)
	})
	return tally
}

// describe renders a failing seed: what failed, the violations with their
// evidence, and how to replay it.
func describe(cfg *Config, c wssim.Config, res wssim.Result, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "%v\n", err)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "failure: %s\n", f)
	}
	if res.Report != nil {
		for i, v := range res.Report.Violations {
			fmt.Fprintf(&b, "violation: %s\n", v)
			if i < len(res.Evidence) {
				fmt.Fprintf(&b, "  %s\n", strings.Join(res.Evidence[i], "\n  "))
			}
		}
	}
	if f, ferr := wssim.NewReplay(c, "", res); ferr == nil {
		if path, werr := saveReplay(cfg.ReplayDir, f); werr == nil {
			fmt.Fprintf(&b, "replay file: %s\nreplay: %s %s\n", path, cfg.ReplayCommand, path)
		} else {
			fmt.Fprintf(&b, "replay file not written: %v\n", werr)
		}
	}
	return b.String()
}

// saveReplay writes f into dir ("": scenarios.ReplayDir()).
func saveReplay(dir string, f *wssim.Replay) (string, error) {
	if dir == "" {
		d, err := scenarios.ReplayDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	return wssim.SaveReplay(dir, f)
}
