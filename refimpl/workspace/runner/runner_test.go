package runner

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// stepper is a coordinator that asks to run every period and records when
// it was stepped.
type stepper struct {
	period  time.Duration
	steps   []time.Time
	failAt  int
	closed  bool
	leading bool
}

func (s *stepper) Step(context.Context) (time.Time, error) {
	now := time.Now()
	s.steps = append(s.steps, now)
	if s.failAt > 0 && len(s.steps) == s.failAt {
		return time.Time{}, errors.New("boom")
	}
	return now.Add(s.period), nil
}
func (s *stepper) IsLeader() bool              { return s.leading }
func (s *stepper) Close(context.Context) error { s.closed = true; return nil }

func TestRunStepsAtRequestedTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stepper{period: 300 * time.Millisecond}
		ctx, cancel := context.WithTimeout(t.Context(), 1*time.Second)
		defer cancel()
		start := time.Now()
		err := Run(ctx, s, Clock{}, Config{})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.True(t, s.closed, "Run must close the coordinator on shutdown")
		// Steps at 0, 300, 600, 900 ms of bubble time.
		require.Len(t, s.steps, 4)
		for i, at := range s.steps {
			require.Equal(t, time.Duration(i)*300*time.Millisecond, at.Sub(start))
		}
	})
}

func TestRunCapsSleepAtMaxSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stepper{period: time.Hour}
		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		_ = Run(ctx, s, Clock{}, Config{MaxSleep: time.Second})
		require.Len(t, s.steps, 3, "an idle coordinator is still stepped every MaxSleep")
	})
}

func TestRunWakesEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stepper{period: 10 * time.Second}
		wake := make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- Run(ctx, s, Clock{}, Config{Wake: wake, MaxSleep: time.Minute}) }()
		synctest.Wait()
		time.Sleep(2 * time.Second)
		wake <- struct{}{}
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Len(t, s.steps, 2)
		require.Equal(t, 2*time.Second, s.steps[1].Sub(s.steps[0]))
	})
}

func TestRunStopsOnCoordinatorError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &stepper{period: time.Second, failAt: 3}
		err := Run(t.Context(), s, Clock{}, Config{})
		require.ErrorContains(t, err, "boom")
		require.Len(t, s.steps, 3)
	})
}

func TestIDsAreUUIDv4(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := IDs{}.NewID()
		require.Regexp(t, re, id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestScaledClockAndSpeedup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		c := NewScaledClock(start, 10)
		time.Sleep(3 * time.Second)
		require.Equal(t, start.Add(30*time.Second), c.Now())
		c.Advance(time.Hour)
		require.Equal(t, start.Add(time.Hour+30*time.Second), c.Now())

		// A coordinator asking to run every 2 s of its clock is stepped
		// every 200 ms of real time.
		s := &scaledStepper{clock: c, period: 2 * time.Second}
		ctx, cancel := context.WithTimeout(t.Context(), 900*time.Millisecond)
		defer cancel()
		_ = Run(ctx, s, c, Config{Speedup: 10})
		require.Len(t, s.steps, 5, "steps at 0, 200, 400, 600 and 800 ms")
		for i := 1; i < len(s.steps); i++ {
			require.Equal(t, 200*time.Millisecond, s.steps[i].Sub(s.steps[i-1]))
		}
	})
}

type scaledStepper struct {
	clock  *ScaledClock
	period time.Duration
	steps  []time.Time
}

func (s *scaledStepper) Step(context.Context) (time.Time, error) {
	s.steps = append(s.steps, time.Now())
	return s.clock.Now().Add(s.period), nil
}
func (s *scaledStepper) IsLeader() bool              { return true }
func (s *scaledStepper) Close(context.Context) error { return nil }

// wakingStepper asks to be woken through its own channel (runner.Waker).
type wakingStepper struct {
	stepper
	wake chan struct{}
}

func (w *wakingStepper) Wake() <-chan struct{} { return w.wake }

func TestRunWakesOnTheCoordinatorsOwnChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &wakingStepper{stepper: stepper{period: time.Minute}, wake: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- Run(ctx, s, Clock{}, Config{MaxSleep: time.Hour}) }()
		synctest.Wait()
		time.Sleep(3 * time.Second)
		s.wake <- struct{}{}
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Len(t, s.steps, 2)
		require.Equal(t, 3*time.Second, s.steps[1].Sub(s.steps[0]), "woken by the coordinator, not by its period")
	})
}
