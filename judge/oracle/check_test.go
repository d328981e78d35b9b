package oracle

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

func TestParamsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		p   Params
		err string
	}{
		{Params{}, "Params.Self"},
		{Params{Self: self, PoolSize: -1}, "PoolSize -1"},
		{Params{Self: self, BlockInterval: -time.Second}, "BlockInterval"},
		{Params{Self: self, WorkerTimeout: -time.Second}, "WorkerTimeout"},
		{Params{Self: self, GasAdjustment: -1}, "GasAdjustment"},
		{Params{Self: self, MaxDelay: -1}, "MaxDelay"},
		{Params{Self: self, Mode: Mode(7)}, "Mode(7)"},
	} {
		_, err := Check(tc.p, nil)
		require.ErrorContains(t, err, tc.err)
	}
	r, err := Check(Params{Self: self}, nil)
	require.NoError(t, err)
	require.False(t, r.Failed())
	for _, n := range Names() {
		require.Equal(t, judge.NotExercised, r.Verdict(n), "an empty history exercises nothing")
	}
}

func TestDefaultsAndTolerance(t *testing.T) {
	p := Params{Self: self}.withDefaults()
	require.Equal(t, 4, p.PoolSize)
	require.Equal(t, time.Second, p.BlockInterval)
	require.Equal(t, 30*time.Second, p.WorkerTimeout)
	require.Equal(t, uint64(70000), p.GasLimit)
	require.Equal(t, 1.5, p.GasAdjustment)
	require.Equal(t, 10*time.Second, p.MaxDelay)
	require.Equal(t, "630000000000", p.GasPrices)
	_, err := Check(Params{Self: self, GasPrices: "630000000000agxn"}, nil)
	require.ErrorContains(t, err, "GasPrices")
	require.Equal(t, time.Duration(0), Params{Mode: ModeSim}.Tol())
	require.Equal(t, 50*time.Millisecond, Params{Mode: ModeBlackBox}.Tol())
	require.Equal(t, "black-box", ModeBlackBox.String())
}

func TestNamesAndContracts(t *testing.T) {
	names := Names()
	require.Len(t, names, 31)
	seen := map[string]bool{}
	for _, n := range names {
		require.False(t, seen[n], "duplicate name %s", n)
		seen[n] = true
	}
	var contracts []string
	for _, n := range names {
		c := Contracts()[n]
		if len(contracts) == 0 || contracts[len(contracts)-1] != c {
			contracts = append(contracts, c)
		}
	}
	want := []string{"O1", "O2", "O3", "O3b", "O4", "O5", "O6", "O7", "O8", "O9", "O10", "O11", "O12", "O13", "O14", "O15", "O16",
		"O16b", "O17", "O18", "O19", "O20", "O21", "O22", "O23", "O24", "O25", "O26", "O27", "O28"}
	require.Equal(t, want, contracts, "one checker per contract (O14 has two), in report order")
}

func TestSeverityFollowsTheSUT(t *testing.T) {
	require.Equal(t, []string{nameClientCloses}, Params{}.Warnings())
	require.ElementsMatch(t, []string{nameClientCloses, nameRestartPeriod, nameRecovery, nameHealthProbe, nameResubscribeReconciles},
		Params{External: true}.Warnings())

	p, evs := probes(60 * time.Second)
	ref := judgeRun(t, p, evs)
	require.Equal(t, judge.Violated, ref.Verdict(nameHealthProbe), "O18 binds the reference")
	require.True(t, ref.Failed())
	p.External = true
	ext := judgeRun(t, p, evs)
	require.Equal(t, judge.Warned, ext.Verdict(nameHealthProbe), "O18 is a SHOULD for an external SUT")
	require.False(t, ext.Failed())
	for _, v := range ext.ByChecker(nameHealthProbe) {
		require.Equal(t, judge.Should, v.Severity)
	}
}

func TestExternalSUTsMayBroadcastInParallel(t *testing.T) {
	p, evs := twoBroadcastsAtOnce()
	require.Equal(t, judge.Violated, judgeRun(t, p, evs).Verdict(nameConcurrency))
	p.External = true
	require.Equal(t, judge.NotExercised, judgeRun(t, p, evs).Verdict(nameConcurrency), "pool_size broadcasts may overlap")
}

func TestBlackBoxToleranceForgivesJitter(t *testing.T) {
	// A retry 30 ms early: a violation on the virtual clock, within the
	// 50 ms of the wall clock.
	p, evs := retries(time.Second-ms(30), 2*time.Second)
	require.Equal(t, judge.Violated, judgeRun(t, p, evs).Verdict(nameFetchRetries))
	p.Mode = ModeBlackBox
	require.Equal(t, judge.Pass, judgeRun(t, p, evs).Verdict(nameFetchRetries))
}

func TestStreamMatchesCheckAndCoverageSumsToExercised(t *testing.T) {
	for _, tc := range cases() {
		p, evs := tc.build()
		whole := judgeRun(t, p, evs)
		st, err := NewStream(p)
		require.NoError(t, err)
		for i := range evs {
			st.Step(&evs[i])
		}
		r := st.Finish()
		require.Equal(t, whole.Violations, r.Violations, tc.name)
		require.Equal(t, whole.Exercised, r.Exercised, tc.name)
		cov := st.Coverage()
		for _, n := range Names() {
			sum := 0
			for _, c := range cov[n] {
				sum += c
			}
			require.Equal(t, r.Exercised[n], sum, "%s: %s", tc.name, n)
		}
	}
}

func TestReportsAreDeterministic(t *testing.T) {
	p, evs := codeDance(true, true, true)
	first := fmt.Sprint(judgeRun(t, p, evs).Violations)
	for i := 0; i < 20; i++ {
		require.Equal(t, first, fmt.Sprint(judgeRun(t, p, evs).Violations))
	}
}

func TestViolationsNameTheirRound(t *testing.T) {
	for _, tc := range []struct {
		build   func() (Params, []history.Event)
		checker string
		subject string
	}{
		{staleBroadcast, nameNonceBounds, "r=1 n=1"},
		{reuse, nameSequence, "r=1 n=2"},
		{func() (Params, []history.Event) { return fiveRequests(true) }, nameConcurrency, "r=5"},
		{func() (Params, []history.Event) { return intruded(true) }, nameResync, "r=1 n=1"},
		{doubleCommit, nameSingleCommit, "r=1 n=1"},
	} {
		p, evs := tc.build()
		vs := judgeRun(t, p, evs).ByChecker(tc.checker)
		require.NotEmpty(t, vs)
		require.Equal(t, tc.subject, vs[0].Subject, tc.checker)
	}
}
