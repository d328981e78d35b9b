package conformance

import (
	"context"
	"fmt"
	"strings"
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

	// Seeds is the number of seeds of the default fault mix (default 100):
	// the minimum; FirstSeed the first (default 1). Workspaces per seed
	// (default 5) and Duration of the fault phase (default 24h) size each
	// run; the quiet phase is wssim.DefaultQuiet.
	Seeds      int
	FirstSeed  uint64
	Workspaces int
	Duration   time.Duration
	// Faults is the fault mix (default wssim.DefaultFaults: every kind,
	// swarm style).
	Faults *wssim.FaultMix
	// Jobs is how many seeds run at once (default: the cores Go may use).
	Jobs int

	// A pass is evidence: each checker's situation (its obligation,
	// wsjudge.Obligations) must arise at least MinExercised times over the
	// seeds (default judge.DefaultMin), or its subtest fails. While one
	// has not, the suite runs more seeds, up to SeedBudget in all (default
	// 4 × Seeds), in batches of Batch (default engine.DefaultBatch), each
	// batch steering its seeds toward the unmet obligations (forcing on
	// fault kinds and workload shapes that tend to produce them). The
	// steering depends only on the batches before, never on Jobs.
	MinExercised int
	SeedBudget   int
	Batch        int
	// AllowUnexercised names the checkers whose obligation may stay unmet
	// (their subtests skip, saying so): for a system that cannot meet one.
	AllowUnexercised []string

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
	if c.MinExercised == 0 {
		c.MinExercised = judge.DefaultMin
	}
	if c.SeedBudget < c.Seeds {
		c.SeedBudget = 4 * c.Seeds
	}
	if c.Batch == 0 {
		c.Batch = engine.DefaultBatch
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
//   - seeds: cfg.Seeds seeds of the fault mix (more, steered, while an
//     obligation is unmet, up to cfg.SeedBudget), each run twice (the two
//     history hashes must match), with a subtest per failing seed that
//     prints its violations, the timeline around their evidence, and the
//     replay file written for it;
//   - checkers/NAME: one subtest per checker with its verdict over every
//     seed: pass (its situation arose at least cfg.MinExercised times),
//     violated (fails, naming the seeds), or unmet: not exercised, or too
//     rarely (fails: a situation that never arose proves nothing; it
//     skips, saying so, only when cfg.AllowUnexercised names it);
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
		rule := judge.Rule{Min: cfg.MinExercised, Allow: cfg.AllowUnexercised}
		if err := rule.Check(wsjudge.Names()); err != nil {
			t.Fatalf("conformance.Config.AllowUnexercised: %v", err)
		}
		tally := runSeeds(t, &cfg, rule)
		claim := tally.Claim(wssim.Obligations(), rule)
		t.Run("checkers", func(t *testing.T) {
			for _, st := range claim.Standings {
				t.Run(st.Checker, func(t *testing.T) {
					judgeStanding(t, claim, st, tally.Runs)
				})
			}
		})
	}
	if !cfg.skipped("rapid") {
		t.Run("rapid", func(t *testing.T) { scenarios.StateMachineIn(t, cfg.ReplayDir, cfg.NewSystem) })
	}
}

// judgeStanding is one checker's subtest: its verdict over every seed
// against its obligation.
func judgeStanding(t *testing.T, claim *judge.Claim, st judge.Standing, runs int) {
	t.Helper()
	switch {
	case st.Verdict == judge.Violated:
		t.Errorf("%s (%s) violated in %d violation(s) over %d seed(s): see the seeds subtests", st.Checker, st.Contract, st.Violations, runs)
	case !st.Met && st.Allowed:
		t.Skipf("%s (%s) %s over %d seed(s), allowed by Config.AllowUnexercised; its obligation: %s",
			st.Checker, st.Contract, claim.Describe(st), runs, st.Situation)
	case !st.Met:
		t.Errorf("%s (%s) %s over %d seed(s): its situation arose %d time(s), fewer than %d, so its pass would prove nothing.\n"+
			"  its obligation: %s\n"+
			"  more seeds may meet it (Config.Seeds, Config.SeedBudget); if your system cannot, allow it by name:\n"+
			"  conformance.Config{AllowUnexercised: []string{%q}}",
			st.Checker, st.Contract, claim.Describe(st), runs, st.Exercised, claim.Min, st.Situation, st.Checker)
	default:
		t.Logf("%s (%s) %s: its situation arose %d time(s) in %d of %d seed(s), first in seed %d", st.Checker, st.Contract, st.Verdict,
			st.Exercised, st.Seeds, runs, st.First)
	}
}

// runSeeds judges the seeds (on cfg.Jobs cores, in steered batches while
// an obligation of rule is unmet) inside the "seeds" subtest and returns
// the tally of their reports.
func runSeeds(t *testing.T, cfg *Config, rule judge.Rule) *judge.Tally {
	t.Helper()
	tally := wssim.NewTally()
	t.Run("seeds", func(t *testing.T) {
		type outcome struct {
			res wssim.Result
			err error
			cfg wssim.Config
		}
		failed := 0
		camp := engine.Campaign[outcome]{
			Seeds: engine.Shard{}.Seeds(cfg.FirstSeed, cfg.SeedBudget), Min: cfg.Seeds, Batch: cfg.Batch, Jobs: cfg.Jobs, Now: time.Now,
			Steerer: wssim.NewSteerer(*cfg.Faults, rule),
			Run: func(ctx context.Context, seed uint64, st *engine.Steering) (outcome, error) {
				c := wssim.Config{Seed: seed, Workspaces: cfg.Workspaces, Duration: cfg.Duration, Quiet: wssim.DefaultQuiet,
					Faults: *cfg.Faults, System: cfg.NewSystem(), Steering: st}
				res, err := wssim.Check(ctx, c)
				return outcome{res, err, c}, nil
			},
			Sample: func(_ uint64, st *engine.Steering, o outcome) engine.Sample { return wssim.Sample(st, o.res) },
			Emit: func(o engine.Outcome[outcome], _ *engine.Steering) bool {
				tally.AddSeed(o.Seed, o.R.res.Report)
				if o.R.err == nil && o.R.res.OK() {
					return true
				}
				failed++
				t.Run(fmt.Sprintf("seed-%d", o.Seed), func(t *testing.T) {
					t.Error(describe(cfg, o.R.cfg, o.R.res, o.R.err))
				})
				return true
			},
		}
		end := camp.Go(t.Context())
		t.Logf("%d seed(s) of %d workspaces × %s, faults %s (%d steered toward obligations earlier seeds had not met): %d failed",
			end.Ran, cfg.Workspaces, cfg.Duration, cfg.Faults, end.Steered, failed)
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
