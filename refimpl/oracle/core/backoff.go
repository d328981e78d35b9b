package core

import (
	"math"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// FetchRetryWait is the wait before HTTP attempt `attempt` of one execution
// (D1): none before the first, then 1 s, 2 s and 4 s before attempts 2, 3 and
// 4, with no jitter. ok is false for attempts beyond FetchAttempts: the
// execution has failed.
func FetchRetryWait(attempt int) (wait time.Duration, ok bool) {
	if attempt < 1 || attempt > oracle.FetchAttempts {
		return 0, false
	}
	if attempt == 1 {
		return 0, true
	}
	return time.Second << (attempt - 2), true
}

// SubmitRetryBase is the submission backoff before retry k (k = 1…5) without
// jitter: min(2^(k−1) s, 30 s) (ORACLE-SPEC 3.5, D2). ok is false outside
// 1…SubmitAttempts−1: there is no such retry.
func SubmitRetryBase(k int) (base time.Duration, ok bool) {
	if k < 1 || k >= oracle.SubmitAttempts {
		return 0, false
	}
	return min(pow2Seconds(k-1), oracle.SubmitRetryCap), true
}

// SubmitRetryWait is the wait before submission retry k: SubmitRetryBase(k) ×
// U[0.9, 1.1], with u the injected uniform draw in [0, 1] (Jitter).
func SubmitRetryWait(k int, u float64) (wait time.Duration, ok bool) {
	base, ok := SubmitRetryBase(k)
	if !ok {
		return 0, false
	}
	return Jitter(base, u), true
}

// ResubscribeWait is the wait before WebSocket re-subscription attempt k (k =
// 0, 1, …): min(2^k s, maxDelay) × U[0.9, 1.1] (ORACLE-SPEC 3.2, D18), with u
// the injected uniform draw in [0, 1]. The caller stops after
// retry.max_attempts consecutive failures (ResubscribeExhausted).
func ResubscribeWait(k int, maxDelay time.Duration, u float64) time.Duration {
	if k < 0 {
		k = 0
	}
	return Jitter(min(pow2Seconds(k), maxDelay), u)
}

// ResubscribeExhausted reports whether `failures` consecutive failed
// re-subscription attempts make the condition fatal (ORACLE-SPEC 3.7).
func ResubscribeExhausted(failures, maxAttempts int) bool {
	return failures >= maxAttempts
}

// Jitter scales base by a factor uniform in [0.9, 1.1]: factor = 0.9 + 0.2·u
// for a draw u in [0, 1] (a draw outside that range, or NaN, is clamped to
// it), rounded to the nanosecond. Every draw comes from the caller, so a seed
// fixes every wait.
func Jitter(base time.Duration, u float64) time.Duration {
	switch {
	case math.IsNaN(u) || u < 0:
		u = 0
	case u > 1:
		u = 1
	}
	return time.Duration(math.Round(float64(base) * (0.9 + 0.2*u)))
}

// JitterBounds are the least and greatest waits Jitter can give for base:
// what a checker allows.
func JitterBounds(base time.Duration) (lo, hi time.Duration) {
	return Jitter(base, 0), Jitter(base, 1)
}

// pow2Seconds is 2^k seconds, saturating far beyond any cap in use.
func pow2Seconds(k int) time.Duration {
	if k > 32 {
		k = 32
	}
	return time.Second << k
}
