package judge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var toyObligations = []Obligation{
	{Checker: "non-negative", Contract: "T1", Situation: "a subtraction"},
	{Checker: "never-seen", Contract: "T2", Situation: "something that never happens"},
}

// toyTally adds one report per seed: seed i subtracts subs[i] times.
func toyTally(t *testing.T, first uint64, subs ...int) *Tally {
	t.Helper()
	tl := NewTally([]string{"non-negative", "never-seen"})
	for i, n := range subs {
		adds := []int{100}
		for range n {
			adds = append(adds, -1)
		}
		tl.AddSeed(first+uint64(i), Run[*counter, ev](toyWorld{}, &counter{}, events(adds...), []Checker[*counter, ev]{&nonNegative{}, neverSeen{}}))
	}
	return tl
}

// A run in which a required checker's situation never arose fails its
// claim, whatever else passed: "not exercised" is never a pass.
func TestClaimFailsOnAnUnexercisedRequiredChecker(t *testing.T) {
	c := toyTally(t, 1, 2, 0, 3).Claim(toyObligations, Rule{})
	require.Equal(t, DefaultMin, c.Min)
	require.False(t, c.Holds())
	require.Empty(t, c.Violated())
	require.Equal(t, []string{"never-seen"}, c.Unmet())
	st, ok := c.Standing("never-seen")
	require.True(t, ok)
	require.Equal(t, NotExercised, st.Verdict)
	require.False(t, st.Met)
	require.Equal(t, "something that never happens", st.Situation)
	require.Equal(t, "NOT EXERCISED", c.Describe(st))

	nn, _ := c.Standing("non-negative")
	require.Equal(t, Pass, nn.Verdict)
	require.True(t, nn.Met)
	require.Equal(t, 5, nn.Exercised)
	require.Equal(t, 2, nn.Seeds, "seeds 1 and 3 exercised it")
	require.Equal(t, uint64(1), nn.First)
}

// A checker on the allow-list may stay unexercised: the claim holds, and
// the claim names it (every report prints Allowed).
func TestClaimHoldsWithTheUnexercisedCheckerAllowed(t *testing.T) {
	c := toyTally(t, 1, 2, 0, 3).Claim(toyObligations, Rule{Allow: []string{"never-seen"}})
	require.True(t, c.Holds())
	require.Equal(t, []string{"never-seen"}, c.Allowed)
	st, _ := c.Standing("never-seen")
	require.True(t, st.Allowed)
	require.Equal(t, NotExercised, st.Verdict, "allowed is not a pass: the honest word stays")
	require.Equal(t, "not exercised (allowed)", c.Describe(st))
}

// Both worlds' reports print the allow-list with why, and each unmet
// obligation with the situation it needs and how to allow it.
func TestWriteAllowedAndUnmetNamesEveryUnmetSituation(t *testing.T) {
	var b strings.Builder
	toyTally(t, 1, 2).Claim(toyObligations, Rule{Min: 1}).WriteAllowedAndUnmet(&b, nil)
	require.Equal(t, "UNMET: the situation of never-seen never arose in this run: not a pass (exit 5). Allow by name with --allow-unexercised never-seen\n"+
		"  never-seen needs: something that never happens\n", b.String())

	b.Reset()
	toyTally(t, 1, 2).Claim(toyObligations, Rule{Min: 1, Allow: []string{"never-seen"}}).WriteAllowedAndUnmet(&b,
		func(n string) string { return map[string]string{"never-seen": "out of reach"}[n] })
	require.Equal(t, "allowed to stay unexercised (--allow-unexercised):\n  never-seen  out of reach\n", b.String())

	b.Reset()
	toyTally(t, 1, 2).Claim(toyObligations, Rule{Min: 1, Allow: []string{"never-seen", "non-negative"}}).WriteAllowedAndUnmet(&b, nil)
	require.Contains(t, b.String(), "  non-negative  named by the user\n")

	b.Reset()
	toyTally(t, 1, 2).Claim(toyObligations[:1], Rule{Min: 1}).WriteAllowedAndUnmet(&b, nil)
	require.Empty(t, b.String(), "nothing allowed, nothing unmet")

	b.Reset()
	toyTally(t, 1, 2).Claim(toyObligations[:1], Rule{Min: 3}).WriteAllowedAndUnmet(&b, nil)
	require.Contains(t, b.String(), "UNMET: the situation of non-negative arose fewer than 3 times in this run")
}

// Exercised, but fewer than Min times: unmet, not a pass.
func TestClaimCountsTooRareAsUnmet(t *testing.T) {
	c := toyTally(t, 5, 0, 1, 0, 1).Claim(toyObligations, Rule{Min: 3, Allow: []string{"never-seen"}})
	st, _ := c.Standing("non-negative")
	require.Equal(t, Unmet, st.Verdict)
	require.Equal(t, uint64(6), st.First, "the first seed that exercised it")
	require.Equal(t, "UNMET: 2 of 3", c.Describe(st))
	require.Equal(t, []string{"non-negative"}, c.Unmet())
	require.False(t, c.Holds())

	c = toyTally(t, 5, 0, 1, 0, 1).Claim(toyObligations, Rule{Min: 2, Allow: []string{"never-seen"}})
	require.True(t, c.Holds(), "met at Min")
}

// A violation is a violation whatever the evidence.
func TestClaimViolatedOutranksCounts(t *testing.T) {
	tl := NewTally([]string{"non-negative", "never-seen"})
	tl.AddSeed(9, Run[*counter, ev](toyWorld{}, &counter{}, events(1, -2), []Checker[*counter, ev]{&nonNegative{}, neverSeen{}}))
	c := tl.Claim(toyObligations, Rule{Min: 1, Allow: []string{"never-seen"}})
	require.Equal(t, []string{"non-negative"}, c.Violated())
	require.False(t, c.Holds())
	st, _ := c.Standing("non-negative")
	require.Equal(t, Violated, st.Verdict)
	require.Equal(t, 1, st.Violations)
}

func TestRuleChecksTheAllowListAndListsTheRequired(t *testing.T) {
	names := []string{"non-negative", "never-seen"}
	require.NoError(t, Rule{Allow: []string{"never-seen"}}.Check(names))
	require.ErrorContains(t, Rule{Allow: []string{"never-sen"}}.Check(names), `unknown checker "never-sen"`)
	require.Equal(t, []string{"non-negative"}, Rule{Allow: []string{"never-seen"}}.Required(toyObligations))
	require.Equal(t, 7, Rule{Min: 7}.MinOrDefault())
	require.Equal(t, DefaultMin, Rule{}.MinOrDefault())
}

// Merging tallies keeps the earliest first seed and sums the seeds.
func TestTallyMergeKeepsFirstSeeds(t *testing.T) {
	a, b := toyTally(t, 10, 1), toyTally(t, 3, 0, 1)
	a.Merge(b)
	require.Equal(t, uint64(4), a.First["non-negative"])
	require.Equal(t, 2, a.SeedsExercised["non-negative"])
	_, ok := a.First["never-seen"]
	require.False(t, ok)
}

// partsObligation is an obligation of several parts, each of which must
// arise (ORACLE-SPEC 5.3's "codes 32, 11, 13 and 19, each seen").
var partsObligation = Obligation{Checker: "non-negative", Contract: "T1", Situation: "a subtraction of 1, one of 2 and one of 3",
	Parts: []string{"minus 1", "minus 2", "minus 3"}}

// partsReport is one seed's report in which the checker met each of
// parts once.
func partsReport(parts ...string) *Report {
	r := NewReport([]Named{&nonNegative{}})
	r.As(&nonNegative{})
	for _, p := range parts {
		r.ExercisePart(p)
	}
	return r
}

// A situation of several parts is not met by any one of them: the claim
// fails, however often the others arose, and names the part that never
// did in every report form.
func TestClaimWithAMissingPartIsUnmet(t *testing.T) {
	tl := NewTally([]string{"non-negative"})
	tl.AddSeed(1, partsReport("minus 1", "minus 1", "minus 3"))
	tl.AddSeed(2, partsReport("minus 1", "minus 3"))
	c := tl.Claim([]Obligation{partsObligation}, Rule{Min: 3})
	require.False(t, c.Holds())
	require.Equal(t, []string{"non-negative"}, c.Unmet())
	st, _ := c.Standing("non-negative")
	require.Equal(t, 5, st.Exercised, "over Min: only the part is missing")
	require.Equal(t, Unmet, st.Verdict)
	require.Equal(t, []string{"minus 2"}, st.Missing)
	require.Equal(t, []PartCount{{Part: "minus 1", Count: 3}, {Part: "minus 2", Count: 0}, {Part: "minus 3", Count: 2}}, st.PartCounts)
	require.Equal(t, "UNMET: 2 of 3 parts", c.Describe(st))
	require.Equal(t, "1 of its 3 parts never arose: minus 2", c.Shortfall(st))

	var b strings.Builder
	c.WriteAllowedAndUnmet(&b, nil)
	require.Contains(t, b.String(), "UNMET: the situation of non-negative arose fewer than 3 times, or a part of it never arose, in this run")
	require.Contains(t, b.String(), "    parts: minus 1 ×3; minus 2 ×0; minus 3 ×2; never arose: minus 2\n")

	// The allow-list may name the part alone: the rest stays required.
	c = tl.Claim([]Obligation{partsObligation}, Rule{Min: 3, Allow: []string{PartName("non-negative", "minus 2")}})
	require.True(t, c.Holds())
	st, _ = c.Standing("non-negative")
	require.False(t, st.Allowed)
	require.Equal(t, "minus 1 ×3; minus 2 ×0 (allowed); minus 3 ×2", st.PartsLine())
	tl.AddSeed(4, partsReport("minus 1"))
	c = NewTally([]string{"non-negative"}).Claim([]Obligation{partsObligation}, Rule{Allow: []string{PartName("non-negative", "minus 2")}})
	st, _ = c.Standing("non-negative")
	require.Equal(t, "NOT EXERCISED", c.Describe(st))
	c = tl.Claim([]Obligation{partsObligation}, Rule{Min: 1, Allow: []string{PartName("non-negative", "minus 3")}})
	st, _ = c.Standing("non-negative")
	require.Equal(t, "UNMET: 1 of 2 parts", c.Describe(st), "the allowed part is not counted")
	require.NoError(t, Rule{Allow: []string{PartName("non-negative", "minus 2")}}.Check([]string{"non-negative"}))
	require.Error(t, Rule{Allow: []string{PartName("other", "minus 2")}}.Check([]string{"non-negative"}))
	require.NoError(t, Rule{Allow: []string{PartName("non-negative", "minus 2"), "never-seen"}}.CheckParts([]Obligation{partsObligation}))
	require.ErrorContains(t, Rule{Allow: []string{PartName("non-negative", "minus 9")}}.CheckParts([]Obligation{partsObligation}),
		"is no part of non-negative's obligation (its parts: minus 1; minus 2; minus 3)")

	// A part counted that is not one of the obligation's is a variant:
	// it adds to the count, never to the parts.
	tl.AddSeed(3, partsReport("minus 7"))
	st, _ = tl.Claim([]Obligation{partsObligation}, Rule{Min: 3}).Standing("non-negative")
	require.Equal(t, []string{"minus 2"}, st.Missing)
}

// Every part arose at least once and the whole at least Min times: the
// obligation is met, even if one part arose only once (DR615), across
// seeds as in one (Tally.Merge keeps the parts).
func TestClaimWithEveryPartMetHolds(t *testing.T) {
	a, b := NewTally([]string{"non-negative"}), NewTally([]string{"non-negative"})
	a.AddSeed(1, partsReport("minus 1", "minus 3"))
	b.AddSeed(2, partsReport("minus 2", "minus 3"))
	a.Merge(b)
	c := a.Claim([]Obligation{partsObligation}, Rule{Min: 3})
	require.True(t, c.Holds(), "%+v", c.Standings)
	st, _ := c.Standing("non-negative")
	require.Equal(t, Pass, st.Verdict)
	require.Empty(t, st.Missing)
	require.Equal(t, []PartCount{{Part: "minus 1", Count: 1}, {Part: "minus 2", Count: 1}, {Part: "minus 3", Count: 2}}, st.PartCounts)
	require.Empty(t, c.Shortfall(st))

	// Every part, but fewer than Min in all: unmet on the count.
	c = a.Claim([]Obligation{partsObligation}, Rule{Min: 5})
	st, _ = c.Standing("non-negative")
	require.Equal(t, "UNMET: 4 of 5", c.Describe(st))
	require.Equal(t, "its situation arose 4 time(s), fewer than 5", c.Shortfall(st))
}
