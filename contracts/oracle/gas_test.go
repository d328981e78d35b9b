package oracle

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestFeeAmount(t *testing.T) {
	cases := []struct {
		price string
		gas   uint64
		want  string
	}{
		{"630000000000", 70000, "44100000000000000"}, // D29's example
		{"630000000000", 105000, "66150000000000000"},
		{"0.25", 70000, "17500"},
		{"0.3", 7, "3"},      // 2.1 → 3
		{"0.000001", 1, "1"}, // ceil of a tiny fee
		{"0", 70000, "0"},
		{"18446744073709551615", 18446744073709551615, "340282366920938463426481119284349108225"},
	}
	for _, tc := range cases {
		got, err := FeeAmount(tc.price, tc.gas)
		require.NoError(t, err, tc.price)
		require.Equal(t, tc.want, got, "%s × %d", tc.price, tc.gas)
	}
	_, err := FeeAmount("630000000000agxn", 1)
	require.Error(t, err)
}

func TestParseGasPrice(t *testing.T) {
	for _, ok := range []string{"0", "7", "630000000000", "0.5", "12.000"} {
		_, err := ParseGasPrice(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"", ".", "1.", ".5", "+1", "-1", "1e3", "1/3", "1,5", " 1", "1 ", "0x10", "5agxn", "1.2.3"} {
		_, err := ParseGasPrice(bad)
		require.Error(t, err, bad)
	}
}

func TestAdjustGas(t *testing.T) {
	cases := []struct {
		gas  uint64
		adj  float64
		want uint64
	}{
		{70000, 1.5, 105000},  // D5 with the default adjustment
		{105000, 1.5, 157500}, // applied again on a second code 11
		{70001, 1.5, 105002},  // 105001.5 → ceil
		{70000, 1.1, 77000},   // decimal 1.1, not the double 1.1000000000000000888
		{70000, 1.3, 91000},
		{3, 1.0000001, 4},
		{70000, 1, 70000},
		{1, 0.5, 1},                         // ceil(0.5)
		{math.MaxUint64, 2, math.MaxUint64}, // saturates
		{70000, 0, 70000},                   // invalid adjustments leave gas alone
		{70000, -1, 70000},
		{70000, math.NaN(), 70000},
		{70000, math.Inf(1), 70000},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, AdjustGas(tc.gas, tc.adj), "%d × %v", tc.gas, tc.adj)
	}
}

// TestFeeAmountQuickMatchesRationals: the machine-word path gives the
// rationals' string for every price and gas it takes.
func TestFeeAmountQuickMatchesRationals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		whole := rapid.StringMatching(`[0-9]{1,21}`).Draw(t, "whole")
		price := whole
		if rapid.Bool().Draw(t, "frac") {
			price += "." + rapid.StringMatching(`[0-9]{1,21}`).Draw(t, "fracDigits")
		}
		gas := rapid.OneOf(rapid.Uint64Range(0, 1_000_000), rapid.Uint64()).Draw(t, "gas")
		got, ok := feeSmall(price, gas)
		if !ok {
			return
		}
		p, err := ParseGasPrice(price)
		require.NoError(t, err)
		want := ceilRat(new(big.Rat).Mul(p, new(big.Rat).SetUint64(gas))).String()
		require.Equal(t, want, got, "%s × %d", price, gas)
	})
	for _, bad := range []string{"", ".", "1.", ".5", "+1", "-1", "1e3", "1.2.3", "5agxn"} {
		_, ok := feeSmall(bad, 1)
		require.False(t, ok, bad)
	}
}
