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
	require.Len(t, res.Unexercised(), len(oraclejudge.Names())-len(sc.Unreached))
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
		}
	}
}
