package invariant

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts/oracle"
)

// The judge keeps ORACLE-SPEC's numbers and arithmetic itself (spec.go);
// the reference daemon's package oracle must agree with it. A difference
// is a bug in one of them, never to be settled by one following the other
// unseen.
func TestSpecNumbersAreTheReferences(t *testing.T) {
	require.Equal(t, oracle.FetchAttempts, specFetchAttempts)
	require.Equal(t, oracle.SubmitAttempts, specSubmitAttempts)
	require.Equal(t, oracle.SubmitRetryCap, specSubmitRetryCap)
	require.Equal(t, oracle.CompleteWait, specCompleteWait)
	require.Equal(t, oracle.SubmissionGaveUpRetry, specSubmissionGaveUpRetry)
	require.Equal(t, oracle.ParseFailureRetry, specParseFailureRetry)
	require.Equal(t, oracle.SequenceResync, specSequenceResync)
	require.Equal(t, oracle.HealthCheckInterval, specHealthCheckInterval)
	require.Equal(t, oracle.DroppedEventReconcile, specDroppedEventReconcile)
	require.Equal(t, oracle.DocQueryTries, specDocQueryTries)
	require.Equal(t, oracle.RPCCallTimeout, specRPCCallTimeout)
	for _, wt := range []time.Duration{0, time.Second, 30 * time.Second} {
		require.Equal(t, oracle.ShutdownBound(wt), specShutdownBound(wt))
	}
	for n := -1; n <= specFetchAttempts+1; n++ {
		w, ok := oracle.FetchRetryWait(n)
		sw, sok := specFetchRetryWait(n)
		require.Equal(t, []any{w, ok}, []any{sw, sok}, "fetch attempt %d", n)
	}
	for k := -1; k <= specSubmitAttempts+1; k++ {
		b, ok := oracle.SubmitRetryBase(k)
		sb, sok := specSubmitRetryBase(k)
		require.Equal(t, []any{b, ok}, []any{sb, sok}, "submission retry %d", k)
	}
}

func TestSpecArithmeticIsTheReferences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "base"))
		lo, hi := oracle.JitterBounds(base)
		slo, shi := specJitterBounds(base)
		require.Equal(t, []time.Duration{lo, hi}, []time.Duration{slo, shi})

		whole := rapid.Uint64Range(0, 10_000_000_000_000).Draw(t, "whole")
		frac := rapid.StringMatching(`[0-9]{0,18}`).Draw(t, "frac")
		price := strconv.FormatUint(whole, 10)
		if frac != "" {
			price += "." + frac
		}
		gas := rapid.Uint64Range(0, 1<<40).Draw(t, "gas")
		fee, err := oracle.FeeAmount(price, gas)
		sfee, serr := specFeeAmount(price, gas)
		require.Equal(t, err == nil, serr == nil, "price %q", price)
		require.Equal(t, fee, sfee, "price %q × gas %d", price, gas)

		adj := rapid.Float64Range(-1, 5).Draw(t, "adjustment")
		require.Equal(t, oracle.AdjustGas(gas, adj), specAdjustGas(gas, adj), "gas %d × %v", gas, adj)
	})
	for _, price := range []string{"0.5", "1.", ".5", "630000000000", "00012.3400", "99999999999999999999", "18446744073709551615", "1e3", "-1", "+1", "abc", ""} {
		for _, gas := range []uint64{0, 1, 50000, math.MaxUint64} {
			fee, err := oracle.FeeAmount(price, gas)
			sfee, serr := specFeeAmount(price, gas)
			require.Equal(t, err == nil, serr == nil, "price %q", price)
			require.Equal(t, fee, sfee, "price %q × gas %d", price, gas)
		}
	}
	for _, adj := range []float64{math.NaN(), math.Inf(1), 0} {
		require.Equal(t, oracle.AdjustGas(7, adj), specAdjustGas(7, adj))
	}
}
