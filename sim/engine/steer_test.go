package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/internal/streams"
)

// A toy world for steering: each of four features is on in a seed with
// probability 1/2 (or forced on); "common" arises in every seed, "rare"
// only with feature d on and a 1-in-4 draw, "never" never.
var toyFeatures = []string{"a", "b", "c", "d"}

type toyRun struct {
	features []string
	ex       map[string]int
}

func toySeed(seed uint64, st *Steering) toyRun {
	r := streams.NewRand(seed)
	var on []string
	for _, f := range toyFeatures {
		if r.IntN(2) == 0 || (st != nil && slices.Contains(st.On, f)) {
			on = append(on, f)
		}
	}
	ex := map[string]int{"common": 1}
	if slices.Contains(on, "d") && r.IntN(4) == 0 {
		ex["rare"] = 1
	}
	return toyRun{on, ex}
}

func toySteerer(required ...string) *Steerer {
	return &Steerer{Required: required, Min: 3, Features: toyFeatures, MaxOn: 2}
}

func toyCampaign(seeds []uint64, min, batch, jobs int, st *Steerer, emitted *[]string) *Campaign[toyRun] {
	return &Campaign[toyRun]{
		Seeds: seeds, Min: min, Batch: batch, Jobs: jobs, Now: time.Now, Steerer: st,
		Run: func(_ context.Context, seed uint64, s *Steering) (toyRun, error) { return toySeed(seed, s), nil },
		Sample: func(seed uint64, _ *Steering, r toyRun) Sample {
			return Sample{Seed: seed, Features: r.features, Exercised: r.ex}
		},
		Emit: func(o Outcome[toyRun], s *Steering) bool {
			target := ""
			if s != nil {
				target = s.Target
			}
			*emitted = append(*emitted, target+":"+s.String())
			return true
		},
	}
}

func seedRange(first uint64, n int) []uint64 { return Shard{}.Seeds(first, n) }

func TestPlanSteersNothingFirstOrOnceMet(t *testing.T) {
	st := toySteerer("common")
	require.Equal(t, []*Steering{nil, nil}, st.Plan(nil, 2), "no samples: the first batch is the default run")
	met := []Sample{{Exercised: map[string]int{"common": 3}}}
	require.Equal(t, []*Steering{nil}, st.Plan(met, 1), "nothing unmet: nothing steered")
}

// The learned lift puts first the feature the obligation arose with; a
// declared one follows; seeds aim at the unmet obligations in turn.
func TestPlanAimsAtUnmetObligationsWithWhatProducesThem(t *testing.T) {
	var samples []Sample
	for i := range 40 {
		f := []string{}
		ex := map[string]int{"common": 1}
		if i%2 == 0 {
			f = append(f, "d")
			if i%4 == 0 {
				ex["rare"] = 1 // only ever with d
			}
		}
		if i%3 == 0 {
			f = append(f, "a")
		}
		samples = append(samples, Sample{Seed: uint64(i + 1), Features: f, Exercised: ex})
	}
	st := toySteerer("common", "rare", "never")
	st.Min = 100 // rare is unmet
	st.Prior = map[string][]string{"never": {"b"}}
	require.Equal(t, []string{"d"}, st.rank(samples, "rare")[:1])
	require.Equal(t, "b", st.rank(samples, "never")[0], "declared, and nothing learned against it")
	plan := st.Plan(samples, 6)
	var targets []string
	for _, p := range plan {
		require.NotNil(t, p)
		require.LessOrEqual(t, len(p.On), 2)
		targets = append(targets, p.Target)
		if p.Target == "rare" {
			require.Contains(t, p.On, "d")
		}
		require.True(t, slices.IsSortedFunc(p.On, func(x, y string) int {
			return slices.Index(toyFeatures, x) - slices.Index(toyFeatures, y)
		}), "features in the world's order")
	}
	require.ElementsMatch(t, []string{"common", "rare", "never", "common", "rare", "never"}, targets)
	require.Equal(t, plan, st.Plan(samples, 6), "a function of the samples")
}

// An obligation met often enough but missing a part stays a target: the
// missing part, steered by what produced that part (learned from the
// part's own count) and by the obligation's declared features.
func TestPlanAimsAtAMissingPart(t *testing.T) {
	var samples []Sample
	for i := range 40 {
		f := []string{}
		parts := map[string]int{"x": 1}
		if i%2 == 0 {
			f = append(f, "c")
			if i%4 == 0 {
				parts["y"] = 1 // y only ever with c
			}
		}
		samples = append(samples, Sample{Seed: uint64(i + 1), Features: f, Exercised: map[string]int{"both": len(parts)},
			Parts: map[string]map[string]int{"both": parts}})
	}
	st := toySteerer("both")
	st.Parts = map[string][]string{"both": {"x", "y", "z"}}
	st.Prior = map[string][]string{"both": {"b"}}
	require.Equal(t, []string{PartTarget("both", "z")}, st.Unmet(samples), "x and y arose; z never did")
	require.Equal(t, "b", st.rank(samples, PartTarget("both", "z"))[0], "the obligation's prior, nothing learned for z")
	require.Equal(t, []string{"b", "c"}, st.rank(samples, PartTarget("both", "y"))[:2], "declared first, then y's own lift")
	plan := st.Plan(samples, 2)
	require.Equal(t, "both: z", plan[0].Target)
	require.Contains(t, plan[0].On, "b")

	samples = append(samples, Sample{Seed: 41, Exercised: map[string]int{"both": 1}, Parts: map[string]map[string]int{"both": {"z": 1}}})
	require.Empty(t, st.Unmet(samples), "every part once, the whole over Min")
	require.Equal(t, []*Steering{nil}, st.Plan(samples, 1))
}

// The campaign's seeds, steering and end are the same whatever --jobs.
func TestCampaignIsTheSameWhateverTheJobs(t *testing.T) {
	var one, three []string
	e1 := toyCampaign(seedRange(1, 60), 8, 4, 1, toySteerer("common", "rare"), &one).Go(context.Background())
	e3 := toyCampaign(seedRange(1, 60), 8, 4, 3, toySteerer("common", "rare"), &three).Go(context.Background())
	require.Equal(t, one, three)
	require.Equal(t, e1, e3)
	require.Positive(t, e1.Steered)
}

// Met within the minimum: exactly the minimum runs, unsteered. Unmet:
// more seeds, steered, until met or the budget is spent.
func TestCampaignRunsTheMinimumThenSteersUntilMet(t *testing.T) {
	var got []string
	end := toyCampaign(seedRange(1, 40), 5, 4, 2, toySteerer("common"), &got).Go(context.Background())
	require.Equal(t, CampaignEnd{Ran: 5, Met: true}, end)
	require.Equal(t, []string{":", ":", ":", ":", ":"}, got, "never steered")

	got = nil
	end = toyCampaign(seedRange(1, 40), 5, 4, 2, toySteerer("never"), &got).Go(context.Background())
	require.Equal(t, 40, end.Ran, "the whole budget")
	require.False(t, end.Met)
	require.Equal(t, 40-4, end.Steered, "all but the first batch (4 of the minimum of 5)")

	got = nil
	c := toyCampaign(seedRange(1, 40), 5, 4, 2, toySteerer("never"), &got)
	c.Settled = func() bool { return true }
	end = c.Go(context.Background())
	require.Equal(t, 5, end.Ran, "settled: the minimum only")
}

// An obligation the unsteered first batch misses is met by steering: rare
// needs feature d, which steering learns and forces on.
func TestSteeringMeetsWhatTheFirstBatchMissed(t *testing.T) {
	first := uint64(0)
	for s := uint64(1); first == 0; s += 8 {
		hit := false
		for seed := s; seed < s+8; seed++ {
			hit = hit || toySeed(seed, nil).ex["rare"] > 0
		}
		if !hit {
			first = s
		}
	}
	var got []string
	end := toyCampaign(seedRange(first, 64), 8, 8, 2, toySteerer("common", "rare"), &got).Go(context.Background())
	require.True(t, end.Met, "rare met within the budget")
	require.Positive(t, end.Steered)
	require.Less(t, end.Ran, 64)
}

func TestParseSteering(t *testing.T) {
	st, err := ParseSteering("b, d,b", toyFeatures)
	require.NoError(t, err)
	require.Equal(t, &Steering{On: []string{"b", "d"}}, st)
	require.Equal(t, "b,d", st.String())
	none, err := ParseSteering(" ", toyFeatures)
	require.NoError(t, err)
	require.Nil(t, none)
	require.Empty(t, none.String())
	_, err = ParseSteering("b,z", toyFeatures)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, `"z"`)
}
