package core

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFetchRetryWait(t *testing.T) {
	cases := []struct {
		attempt int
		wait    time.Duration
		ok      bool
	}{
		{0, 0, false},
		{1, 0, true},
		{2, time.Second, true},
		{3, 2 * time.Second, true},
		{4, 4 * time.Second, true},
		{5, 0, false}, // D1: four attempts, then the execution has failed
	}
	for _, tc := range cases {
		w, ok := FetchRetryWait(tc.attempt)
		require.Equal(t, tc.ok, ok, "attempt %d", tc.attempt)
		require.Equal(t, tc.wait, w, "attempt %d", tc.attempt)
	}
}

func TestSubmitRetryWait(t *testing.T) {
	// D2: waits 1, 2, 4, 8, 16 s before retries 1–5 (the 30 s cap never
	// binds), ±10 % jitter from the injected draw.
	cases := []struct {
		k            int
		base, lo, hi time.Duration
		ok           bool
	}{
		{0, 0, 0, 0, false},
		{1, time.Second, 900 * time.Millisecond, 1100 * time.Millisecond, true},
		{2, 2 * time.Second, 1800 * time.Millisecond, 2200 * time.Millisecond, true},
		{3, 4 * time.Second, 3600 * time.Millisecond, 4400 * time.Millisecond, true},
		{4, 8 * time.Second, 7200 * time.Millisecond, 8800 * time.Millisecond, true},
		{5, 16 * time.Second, 14400 * time.Millisecond, 17600 * time.Millisecond, true},
		{6, 0, 0, 0, false},
	}
	for _, tc := range cases {
		base, ok := SubmitRetryBase(tc.k)
		require.Equal(t, tc.ok, ok, "k=%d", tc.k)
		require.Equal(t, tc.base, base, "k=%d", tc.k)
		lo, ok1 := SubmitRetryWait(tc.k, 0)
		mid, _ := SubmitRetryWait(tc.k, 0.5)
		hi, _ := SubmitRetryWait(tc.k, 1)
		require.Equal(t, tc.ok, ok1)
		require.Equal(t, tc.lo, lo, "k=%d u=0", tc.k)
		require.Equal(t, tc.base, mid, "k=%d u=0.5", tc.k)
		require.Equal(t, tc.hi, hi, "k=%d u=1", tc.k)
	}
}

func TestResubscribeWait(t *testing.T) {
	max := 10 * time.Second
	cases := []struct {
		k    int
		want time.Duration // at u = 0.5
	}{
		{-1, time.Second},
		{0, time.Second},
		{1, 2 * time.Second},
		{2, 4 * time.Second},
		{3, 8 * time.Second},
		{4, 10 * time.Second}, // capped by retry.max_delay_sec
		{60, 10 * time.Second},
		{math.MaxInt, 10 * time.Second},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, ResubscribeWait(tc.k, max, 0.5), "k=%d", tc.k)
	}
	require.Equal(t, 9*time.Second, ResubscribeWait(4, max, 0))
	require.Equal(t, 11*time.Second, ResubscribeWait(4, max, 1))
	require.False(t, ResubscribeExhausted(3, 4))
	require.True(t, ResubscribeExhausted(4, 4))
}

func TestJitter(t *testing.T) {
	base := 10 * time.Second
	cases := []struct {
		u    float64
		want time.Duration
	}{
		{0, 9 * time.Second},
		{0.25, 9500 * time.Millisecond},
		{0.5, 10 * time.Second},
		{1, 11 * time.Second},
		{-3, 9 * time.Second}, // clamped
		{7, 11 * time.Second}, // clamped
		{math.NaN(), 9 * time.Second},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, Jitter(base, tc.u), "u=%v", tc.u)
	}
	lo, hi := JitterBounds(base)
	require.Equal(t, 9*time.Second, lo)
	require.Equal(t, 11*time.Second, hi)
}
