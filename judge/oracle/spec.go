package oracle

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// The judge's own copy of ORACLE-SPEC's numbers (§2.8, "Fixed constants")
// and of its arithmetic (the backoffs, the jitter, the fee and the gas
// adjustment), written from the table rather than taken from package
// oracle, where the reference daemon's own values live: a number bent
// there must not bend the checker meant to catch it. spec_test.go holds
// package oracle to the same values. The job rules are in spec_job.go,
// the extraction in spec_extract.go and the watcher's in spec_events.go.
const (
	// HTTP attempts per execution: 1 + 3 retries, waits 1, 2, 4 s (D1).
	specFetchAttempts = 4
	// Submission attempts per result: 1 + 5 retries (D2); retry k waits
	// min(2^(k−1) s, 30 s) × U[0.9, 1.1].
	specSubmitAttempts = 6
	specSubmitRetryCap = 30 * time.Second
	// The watchdog after a success (D13), and the re-runs after a give-up
	// and a parse failure.
	specCompleteWait          = 24 * time.Hour
	specSubmissionGaveUpRetry = time.Minute
	specParseFailureRetry     = 5 * time.Minute
	// The periodic sequence resync, the health check, and the R that
	// follows a dropped event (D9).
	specSequenceResync        = 5 * time.Minute
	specHealthCheckInterval   = 30 * time.Second
	specDroppedEventReconcile = 5 * time.Second
	// Doc query tries per event (D9) and the reference's RPC timeout.
	specDocQueryTries  = 3
	specRPCCallTimeout = 10 * time.Second
)

// The defaults of §2.7's table that the checkers' parameters fall back
// on: worker.pool_size, worker.timeout_sec, gas.limit, gas.adjustment,
// gas.prices, retry.max_delay_sec and retry.max_attempts.
const (
	specDefaultPoolSize      = 4
	specDefaultWorkerTimeout = 30 * time.Second
	specDefaultGasLimit      = 70000
	specDefaultGasAdjustment = 1.5
	specDefaultGasPrices     = "630000000000"
	specDefaultMaxDelay      = 10 * time.Second
	specDefaultMaxAttempts   = 4
)

// specShutdownBound is T_sd: worker.timeout_sec + 10 s.
func specShutdownBound(workerTimeout time.Duration) time.Duration {
	return workerTimeout + 10*time.Second
}

// specFetchRetryWait is the wait before HTTP attempt n (1-based): none
// before the first, then 1, 2, 4 s.
func specFetchRetryWait(n int) (time.Duration, bool) {
	waits := [specFetchAttempts]time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second}
	if n < 1 || n > specFetchAttempts {
		return 0, false
	}
	return waits[n-1], true
}

// specSubmitRetryBase is the base wait before submission retry k (1…5):
// min(2^(k−1) s, 30 s).
func specSubmitRetryBase(k int) (time.Duration, bool) {
	if k < 1 || k >= specSubmitAttempts {
		return 0, false
	}
	return min(time.Duration(1<<(k-1))*time.Second, specSubmitRetryCap), true
}

// specJitterBounds are the least and the most a wait drawn as base ×
// U[0.9, 1.1] may be, to the nanosecond.
func specJitterBounds(base time.Duration) (lo, hi time.Duration) {
	return time.Duration(math.Round(float64(base) * 0.9)), time.Duration(math.Round(float64(base) * 1.1))
}

// specFeeAmount is the fee of §2.8: ceil(gas price × gas limit), in
// whole agxn, for a decimal gas price.
func specFeeAmount(price string, gas uint64) (string, error) {
	whole, frac, ok := specPlainDecimal(price)
	if !ok {
		return "", fmt.Errorf("gas price %q is not a plain decimal (digits, then a dot and digits)", price)
	}
	if fee, ok := specFeeWords(whole, frac, gas); ok {
		return strconv.FormatUint(fee, 10), nil
	}
	p, _ := new(big.Rat).SetString(price)
	return specCeil(new(big.Rat).Mul(p, new(big.Rat).SetUint64(gas))).String(), nil
}

// specPlainDecimal splits a gas price of §2.7's form, digits with an
// optional dot and more digits ("630000000000", "0.25"), into its parts.
func specPlainDecimal(s string) (whole, frac string, ok bool) {
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(x string) bool {
		return x != "" && strings.Trim(x, "0123456789") == ""
	}
	return whole, frac, digits(whole) && (!dot || digits(frac))
}

// specFeeWords is the fee in machine words when the price has at most 19
// digits in all and the fee fits: ceil(WF × gas / 10^|F|). It judges every
// broadcast, so the big rationals are kept for the rest.
func specFeeWords(whole, frac string, gas uint64) (uint64, bool) {
	if len(whole)+len(frac) > 19 {
		return 0, false
	}
	var m uint64 // 19 digits fit
	for _, part := range [2]string{whole, frac} {
		for i := 0; i < len(part); i++ {
			m = m*10 + uint64(part[i]-'0')
		}
	}
	div := uint64(1)
	for range len(frac) {
		div *= 10
	}
	hi, lo := bits.Mul64(m, gas)
	if hi >= div {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, div)
	if rem > 0 {
		if q == math.MaxUint64 {
			return 0, false
		}
		q++
	}
	return q, true
}

// specAdjustGas is the gas after code 11: ceil(gas × adjustment); an
// adjustment that is not a positive number leaves it as it was.
func specAdjustGas(gas uint64, adjustment float64) uint64 {
	if math.IsNaN(adjustment) || math.IsInf(adjustment, 0) || adjustment <= 0 {
		return gas
	}
	a, ok := new(big.Rat).SetString(strconv.FormatFloat(adjustment, 'f', -1, 64))
	if !ok {
		return gas
	}
	out := specCeil(new(big.Rat).Mul(a, new(big.Rat).SetUint64(gas)))
	if !out.IsUint64() {
		return math.MaxUint64
	}
	return out.Uint64()
}

func specCeil(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
