package oracle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/judge"
)

// Every checker states its obligation (ORACLE-SPEC 5.3's situation): a
// pass is evidence only with it (judge.Claim).
func TestEveryCheckerStatesItsObligation(t *testing.T) {
	obs := Obligations()
	require.Len(t, obs, len(All()))
	seen := map[string]bool{}
	for i, c := range All() {
		o := obs[i]
		require.Equal(t, c.Name(), o.Checker, "report order")
		require.Equal(t, c.Contract(), o.Contract)
		require.NotContains(t, o.Situation, "no obligation stated", "%s needs a sentence in obligations.go", c.Name())
		require.False(t, strings.HasSuffix(o.Situation, "."), "%s: a sentence the reports quote, without a full stop", c.Name())
		seen[c.Name()] = true
	}
	for name := range situations {
		require.True(t, seen[name], "obligations.go states one for %s, which is no checker", name)
	}
}

// §5.3's situations of several parts state them (DR613), each part a
// variant its checker counts; the parts §5.3 requires "in sim mode" only
// are not required of a black-box run (DR616).
func TestObligationPartsByMode(t *testing.T) {
	sim, bb := ObligationsIn(ModeSim), ObligationsIn(ModeBlackBox)
	require.Equal(t, Obligations(), sim)
	withParts := map[string][]string{}
	for i, o := range sim {
		require.Equal(t, o.Checker, bb[i].Checker)
		seen := map[string]bool{}
		for _, p := range o.Parts {
			require.False(t, seen[p], "%s: part %q twice", o.Checker, p)
			seen[p] = true
		}
		if len(o.Parts) > 0 {
			withParts[o.Contract] = o.Parts
		}
	}
	require.Equal(t, []string{partCode32, partCode11, partCode13, partCode19}, withParts["O5"])
	require.Equal(t, []string{partRecoveryF1, partRecoveryF14, partRecoveryF3, partRecoveryF13}, withParts["O16b"])
	require.Equal(t, recoveryPart("F13"), partRecoveryF13, "the checker's variant is the part")
	for _, c := range []string{"O1", "O3", "O6", "O7", "O19"} {
		require.Len(t, withParts[c], 2+map[string]int{"O3": 1}[c], c)
	}
	require.Len(t, withParts, 7)
	o16b, _ := judgeClaim(bb, nil).Standing(nameRecovery)
	require.Equal(t, []string{partRecoveryF1, partRecoveryF14}, o16b.Parts, "F3 and F13 are sim-mode parts")
}

// judgeClaim tallies reports and judges them against obs, each met once.
func judgeClaim(obs []judge.Obligation, reps []*judge.Report) *judge.Claim {
	t := judge.NewTally(Names())
	for i, r := range reps {
		t.AddSeed(uint64(i+1), r)
	}
	return t.Claim(obs, judge.Rule{Min: 1})
}

// A run that sees codes 32, 11 and 13 but never 19 does not meet O5's
// obligation ("each seen"): a daemon could mishandle code 19 and pass.
// The claim fails naming the missing code; a seed that meets code 19
// completes it.
func TestO5IsUnmetWithoutEveryCode(t *testing.T) {
	p, evs := codeDance(false, false, false)
	rep := judgeRun(t, p, evs)
	require.Equal(t, judge.Pass, rep.Verdict(nameSubmitRetries))
	require.Equal(t, map[string]int{partCode32: 1, partCode11: 1, partCode13: 1}, rep.Parts[nameSubmitRetries])

	c := judgeClaim(Obligations(), []*judge.Report{rep})
	st, _ := c.Standing(nameSubmitRetries)
	require.False(t, st.Met)
	require.Equal(t, judge.Unmet, st.Verdict)
	require.Equal(t, []string{partCode19}, st.Missing)
	require.Contains(t, c.Unmet(), nameSubmitRetries)
	var b strings.Builder
	c.WriteAllowedAndUnmet(&b, nil)
	require.Contains(t, b.String(), "  o5-submit-retries needs: broadcasts answered with codes 32, 11, 13 and 19, each seen\n"+
		"    parts: code 32 ×1; code 11 ×1; code 13 ×1; code 19 ×0; never arose: code 19\n")

	other := judge.NewReport(nil)
	other.As(&submitRetries{})
	other.ExercisePart(partCode19)
	st, _ = judgeClaim(Obligations(), []*judge.Report{rep, other}).Standing(nameSubmitRetries)
	require.True(t, st.Met)
	require.Equal(t, judge.Pass, st.Verdict)
	require.Empty(t, st.Missing)
}
