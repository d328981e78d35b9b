package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Coverage-steered generation, for any world: seeds run in batches of a
// fixed size, and while some obligation (a checker's situation) has arisen
// fewer times than required, each seed of the next batch aims at one of
// them by forcing on a few of the world's features (fault kinds, workload
// shapes) that tend to produce it. What tends to produce it is declared by
// the world (Steerer.Prior) and learned from the seeds already run: how
// much more often the obligation arose in seeds where the feature was on
// than in seeds where it was off. As FoundationDB's buggify and probes, or
// Antithesis's guided search: the run makes sure the evidence arises
// instead of hoping N seeds hit it.
//
// The steering of a batch is a function of the seeds before it and their
// results only, and results are taken in seed order: the same command
// gives the same seeds, steering and verdicts whatever --jobs is.

// DefaultBatch is how many seeds a steering batch holds by default.
const DefaultBatch = 16

// Steering is what coverage steering changed for one seed: the features
// it forced on, and the obligation it aimed at. A world's replay file
// records it, so a steered seed replays exactly.
type Steering struct {
	// Target is the obligation (a checker's name) the seed aims at
	// (informational: On alone decides the run).
	Target string `json:"target,omitempty"`
	// On are the world's features forced on, in the world's order.
	On []string `json:"on"`
}

// String renders the features forced on, comma-separated (the form
// ParseSteering reads).
func (s *Steering) String() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.On, ",")
}

// Clone returns a copy sharing nothing with s.
func (s *Steering) Clone() *Steering {
	if s == nil {
		return nil
	}
	return &Steering{Target: s.Target, On: slices.Clone(s.On)}
}

// ParseSteering reads "f1,f2" (ParseSteering(s.String()) gives s back,
// without its target), each feature one of known. "" is no steering.
func ParseSteering(s string, known []string) (*Steering, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	st := &Steering{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("%w: steering feature %q: known are %s", ErrBadInput, f, strings.Join(known, ", "))
		}
		if !slices.Contains(st.On, f) {
			st.On = append(st.On, f)
		}
	}
	return st, nil
}

// Sample is what steering learns from one finished seed.
type Sample struct {
	Seed uint64
	// Features are the world's features that were on in the seed, forced
	// or drawn.
	Features []string
	// Exercised counts each obligation's situation in the seed; Parts
	// each named part of it (judge.Report.Parts).
	Exercised map[string]int
	Parts     map[string]map[string]int
}

// Steerer chooses the steering of the next batch of seeds from the
// samples of the batches before it.
type Steerer struct {
	// Required are the obligations to meet, in report order.
	Required []string
	// Min is how often each must arise (0: 1).
	Min int
	// Features are the features a seed can be steered to, in a stable
	// order.
	Features []string
	// Prior declares, per obligation, features known to tend to produce
	// its situation.
	Prior map[string][]string
	// Parts names, per obligation, the parts of its situation that must
	// each arise at least once (judge.Obligation.Parts): a part that has
	// not is a target of its own, PartTarget(obligation, part), steered
	// with the obligation's Prior and learned by the part's own count.
	Parts map[string][]string
	// MaxOn bounds the features forced on per seed (0: 3).
	MaxOn int
}

// Counts sums each required obligation's situations over samples.
func (st *Steerer) Counts(samples []Sample) map[string]int {
	c := make(map[string]int, len(st.Required))
	for _, s := range samples {
		for _, o := range st.Required {
			c[o] += s.Exercised[o]
		}
	}
	return c
}

// partSep joins an obligation and one of its parts in a target's name.
const partSep = ": "

// PartTarget names the steering target of one part of an obligation:
// "o5-submit-retries: code 13".
func PartTarget(obligation, part string) string { return obligation + partSep + part }

// Unmet lists the steering targets not yet met over samples, in order:
// each required obligation that arose fewer than Min times, and each
// of its Parts that never arose (PartTarget).
func (st *Steerer) Unmet(samples []Sample) []string {
	c := st.Counts(samples)
	var out []string
	for _, o := range st.Required {
		if c[o] < max(st.Min, 1) {
			out = append(out, o)
		}
		for _, p := range st.Parts[o] {
			if !slices.ContainsFunc(samples, func(s Sample) bool { return s.Parts[o][p] > 0 }) {
				out = append(out, PartTarget(o, p))
			}
		}
	}
	return out
}

// hit reports whether target (an obligation or PartTarget of one of its
// parts) arose in s, and the obligation it belongs to.
func (st *Steerer) hit(s Sample, target string) (bool, string) {
	for o, parts := range st.Parts {
		for _, p := range parts {
			if PartTarget(o, p) == target {
				return s.Parts[o][p] > 0, o
			}
		}
	}
	return s.Exercised[target] > 0, target
}

// Plan returns the steering of the next n seeds (nil: unsteered) given
// every earlier seed's sample, in seed order. It depends on nothing else.
// The first batch (no samples yet) and any batch after which nothing is
// unmet are not steered; otherwise the seeds aim at
// the unmet obligations in turn, each forcing on the features that
// score best for its target: learned lift, (P(arose | on)+1)/(on+2) −
// (P(arose | off)+1)/(off+2), plus a bonus for a declared one. A feature
// never yet seen on scores as if it had a half chance (optimism: it gets
// tried). A later seed aiming at the same target in one batch keeps the
// best feature and tries the next ones in turn.
func (st *Steerer) Plan(samples []Sample, n int) []*Steering {
	out := make([]*Steering, n)
	if len(samples) == 0 {
		return out
	}
	unmet := st.Unmet(samples)
	if len(unmet) == 0 || len(st.Features) == 0 {
		return out
	}
	maxOn := st.MaxOn
	if maxOn <= 0 {
		maxOn = 3
	}
	maxOn = min(maxOn, len(st.Features))
	ranked := map[string][]string{}
	turns := map[string]int{}
	offset := len(samples) % len(unmet)
	for i := range n {
		target := unmet[(offset+i)%len(unmet)]
		r, ok := ranked[target]
		if !ok {
			r = st.rank(samples, target)
			ranked[target] = r
		}
		j := turns[target]
		turns[target]++
		on := []string{r[0]}
		rest := r[1:]
		for k := 0; len(on) < maxOn && k < len(rest); k++ {
			on = append(on, rest[(j*(maxOn-1)+k)%len(rest)])
		}
		// The world's order, so that a steering reads the same however
		// it was chosen.
		sort.SliceStable(on, func(a, b int) bool {
			return slices.Index(st.Features, on[a]) < slices.Index(st.Features, on[b])
		})
		out[i] = &Steering{Target: target, On: on}
	}
	return out
}

// priorBonus is what a declared feature adds to its learned lift.
const priorBonus = 0.5

// rank orders the features by their score for target, best first (ties
// in the world's order).
func (st *Steerer) rank(samples []Sample, target string) []string {
	type scored struct {
		f     string
		score float64
		i     int
	}
	all := make([]scored, len(st.Features))
	_, obligation := st.hit(Sample{}, target)
	for i, f := range st.Features {
		var on, onHit, off, offHit int
		for _, s := range samples {
			hit, _ := st.hit(s, target)
			if slices.Contains(s.Features, f) {
				on++
				if hit {
					onHit++
				}
			} else {
				off++
				if hit {
					offHit++
				}
			}
		}
		score := float64(onHit+1)/float64(on+2) - float64(offHit+1)/float64(off+2)
		if slices.Contains(st.Prior[target], f) || target != obligation && slices.Contains(st.Prior[obligation], f) {
			score += priorBonus
		}
		all[i] = scored{f, score, i}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.f
	}
	return out
}

// Campaign runs a range of seeds in batches, steering each batch toward
// the obligations the earlier ones left unmet, until the minimum has run
// and every required obligation is met, or the budget is spent.
type Campaign[R any] struct {
	// Seeds are every seed the budget allows, in order; the first Min
	// always run.
	Seeds []uint64
	Min   int
	// Batch is the batch size (0: DefaultBatch). Batches tile the first
	// Min seeds, then the rest: their bounds depend on Min and Batch
	// only.
	Batch int
	// Jobs is how many seeds run at once within a batch.
	Jobs int
	Now  func() time.Time
	// Steerer, when set, steers; nil runs the first Min seeds only,
	// unsteered.
	Steerer *Steerer
	// Run runs one seed with its steering (nil: unsteered).
	Run func(ctx context.Context, seed uint64, st *Steering) (R, error)
	// Sample is what steering learns from a seed's result.
	Sample func(seed uint64, st *Steering, r R) Sample
	// Emit gets each outcome in seed order with its steering; false stops
	// the campaign (no new seed starts).
	Emit func(o Outcome[R], st *Steering) bool
	// Settled, when set, is asked at each batch boundary past the first
	// Min seeds: true ends the campaign there (a run already failed needs
	// no more evidence).
	Settled func() bool
}

// CampaignEnd says why a campaign ended.
type CampaignEnd struct {
	// Ran is the number of seeds emitted.
	Ran int
	// Met: every required obligation was met (always false without a
	// Steerer).
	Met bool
	// Stopped: Emit returned false or the context ended.
	Stopped bool
	// Steered counts the seeds run with a steering.
	Steered int
}

// Go runs the campaign.
func (c *Campaign[R]) Go(ctx context.Context) CampaignEnd {
	batch := c.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	var end CampaignEnd
	var samples []Sample
	for from := 0; from < len(c.Seeds); {
		if from >= c.Min && (c.Steerer == nil || len(c.Steerer.Unmet(samples)) == 0 || (c.Settled != nil && c.Settled())) {
			break
		}
		to := min(from+batch, len(c.Seeds))
		if from < c.Min {
			to = min(to, c.Min)
		}
		seeds := c.Seeds[from:to]
		var steer []*Steering
		if c.Steerer != nil {
			steer = c.Steerer.Plan(samples, len(seeds))
		} else {
			steer = make([]*Steering, len(seeds))
		}
		bySeed := make(map[uint64]*Steering, len(seeds))
		for i, s := range seeds {
			bySeed[s] = steer[i]
		}
		emitted := 0
		RunSeeds(ctx, seeds, c.Jobs, c.Now, func(ctx context.Context, seed uint64) (R, error) {
			return c.Run(ctx, seed, bySeed[seed].Clone())
		}, func(o Outcome[R]) bool {
			emitted++
			st := bySeed[o.Seed]
			if st != nil {
				end.Steered++
			}
			if o.Err == nil && c.Sample != nil {
				samples = append(samples, c.Sample(o.Seed, st, o.R))
			}
			if !c.Emit(o, st) {
				end.Stopped = true
				return false
			}
			return true
		})
		end.Ran += emitted
		if end.Stopped || emitted < len(seeds) || ctx.Err() != nil {
			end.Stopped = true
			break
		}
		from = to
	}
	end.Met = c.Steerer != nil && len(c.Steerer.Unmet(samples)) == 0
	return end
}
