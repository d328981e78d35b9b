package conform

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
)

// A black-box run whose checkers never met their situation is not a pass:
// each one not on the allow-list is unexercised, a failure in JUnit (not
// a skip), and the table says UNMET and how to allow it. The allow-list is
// the script's own declaration unless Options.Allow replaces it.
func TestAnUnexercisedCheckerFailsTheBlackBoxClaim(t *testing.T) {
	rep, err := oraclejudge.Check(oraclejudge.Params{Self: "guru1self", Mode: oraclejudge.ModeBlackBox, External: true}, nil)
	require.NoError(t, err)
	sc := DefaultScript()
	res := &Result{Report: rep, Claim: claim(rep, allowList(Options{}, sc)), Why: sc.Unreached}
	require.False(t, res.Failed(), "nothing violated")
	checkers := 0
	for n := range sc.Unreached {
		if !strings.Contains(n, ": ") {
			checkers++
		}
	}
	require.Len(t, res.Unexercised(), len(oraclejudge.Names())-checkers, "an allowed part leaves its checker required")
	require.NotContains(t, res.Unexercised(), "o15-shutdown-order", "declared out of reach, with why")
	require.Equal(t, judge.NotExercised, res.Report.Verdict("o1-single-commit"))

	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	require.Regexp(t, `\n  o15-shutdown-order +white-box only`, b.String())
	require.Contains(t, b.String(), "UNMET: the situation of o1-single-commit")
	require.Contains(t, b.String(), "o1-single-commit needs: a broadcast of (r, n)")
	require.Contains(t, b.String(), "\nUNMET: ")

	j := res.JUnit("conform").Suites[0]
	var o1, o15 bool
	for _, c := range j.Cases {
		switch c.Name {
		case "o1-single-commit":
			o1 = true
			require.NotNil(t, c.Failure, "a failure, not a skip")
			require.Equal(t, "unmet", c.Failure.Type)
		case "o15-shutdown-order":
			o15 = true
			require.NotNil(t, c.Skipped)
			require.Contains(t, c.Skipped.Message, "white-box")
		}
	}
	require.True(t, o1 && o15)

	// An empty allow-list demands every checker; one the user names is
	// allowed as theirs.
	demand := claim(rep, allowList(Options{Allow: []string{}}, sc))
	require.Len(t, demand.Unmet(), len(oraclejudge.Names()))
	mine := claim(rep, allowList(Options{Allow: []string{"o1-single-commit"}}, sc))
	require.Equal(t, []string{"o1-single-commit"}, mine.Allowed)
	require.Equal(t, judge.DefaultMin, judge.Rule{}.MinOrDefault())
	require.Equal(t, MinExercised, demand.Min)
}

// Every checker the scripts declare out of reach is a checker, with a
// reason.
func TestScriptsDeclareRealCheckers(t *testing.T) {
	for _, sc := range []Script{DefaultScript(), ShortScript()} {
		require.NoError(t, judge.Rule{Allow: allowList(Options{}, sc)}.Check(oraclejudge.Names()))
		for n, why := range sc.Unreached {
			require.NotEmpty(t, why, n)
			if checker, part, ok := strings.Cut(n, ": "); ok {
				require.Contains(t, partsOf(checker), part, "%s: a part of the black-box obligation", n)
			}
		}
	}
}

// partsOf is the parts of checker's black-box obligation.
func partsOf(checker string) []string {
	for _, o := range oraclejudge.ObligationsIn(oraclejudge.ModeBlackBox) {
		if o.Checker == checker {
			return o.Parts
		}
	}
	return nil
}

// A black-box run that met codes 32, 11 and 13 but never 19 leaves O5
// unmet (§5.3: "each seen"): the table, the unmet list and the JUnit case
// name code 19, though the report alone says O5 passed.
func TestAMissingPartFailsTheBlackBoxClaim(t *testing.T) {
	rep, err := oraclejudge.Check(oraclejudge.Params{Self: "guru1self", Mode: oraclejudge.ModeBlackBox, External: true}, nil)
	require.NoError(t, err)
	for _, c := range oraclejudge.All() {
		if c.Name() == "o5-submit-retries" {
			rep.As(c)
		}
	}
	for _, code := range []string{"code 32", "code 11", "code 13"} {
		rep.ExercisePart(code)
	}
	require.Equal(t, judge.Pass, rep.Verdict("o5-submit-retries"))
	sc := DefaultScript()
	res := &Result{Report: rep, Claim: claim(rep, allowList(Options{}, sc)), Why: sc.Unreached,
		Coverage: map[string]map[string]int{"o5-submit-retries": rep.Parts["o5-submit-retries"]}}
	require.Contains(t, res.Unexercised(), "o5-submit-retries")
	st, _ := res.Claim.Standing("o5-submit-retries")
	require.Equal(t, []string{"code 19"}, st.Missing)

	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	require.Regexp(t, `\no5-submit-retries +UNMET: 3 of 4 parts +code 11 ×1; code 13 ×1; code 32 ×1; NEVER: code 19\n`, b.String())
	require.Contains(t, b.String(), "    parts: code 32 ×1; code 11 ×1; code 13 ×1; code 19 ×0; never arose: code 19\n")

	// The parts the script declares out of reach are allowed, and said so.
	o16b, _ := res.Claim.Standing("o16b-recovery")
	require.Equal(t, []string{"recovery after F1"}, o16b.Missing, "F14 allowed, F3 and F13 sim mode only")
	require.Regexp(t, `\n  o16b-recovery: recovery after F14 +as O26`, b.String())

	found := false
	for _, c := range res.JUnit("conform").Suites[0].Cases {
		if c.Name == "o5-submit-retries" {
			found = true
			require.NotNil(t, c.Failure)
			require.Equal(t, "unmet", c.Failure.Type)
			require.Contains(t, c.Failure.Message, "code 19")
		}
	}
	require.True(t, found)
}
