package contracttest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// DefaultWait bounds every wait for something a target delivers
// asynchronously (a message, a notification, a lost lock), unless the
// target names its own.
const DefaultWait = 10 * time.Second

// waitOr is d, or DefaultWait when d is zero.
func waitOr(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultWait
	}
	return d
}

// randomID returns a random UUIDv4 string: the data-plane suites name
// their workspaces with it, so that runs sharing a Docker engine never
// collide.
func randomID(t *testing.T) string {
	t.Helper()
	id, err := uuid.NewRandom()
	require.NoError(t, err)
	return id.String()
}

// requireCode asserts that err is a *contracts.ProviderError with code.
func requireCode(t *testing.T, err error, code contracts.ErrorCode, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	var pe *contracts.ProviderError
	require.Truef(t, errors.As(err, &pe), "want a *contracts.ProviderError with code %s, got %T: %v", code, err, err)
	require.Equal(t, code, pe.Code, msgAndArgs...)
}

// eventually calls cond until it reports true, every few milliseconds, and
// fails t with what when it has not within wait. cond may fail t itself.
func eventually(t *testing.T, wait time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitOr(wait))
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			require.FailNowf(t, "timed out", "%s: not within %s", what, waitOr(wait))
		}
		time.Sleep(delay)
	}
}

// awaitSignal collects items with poll until done says they suffice,
// waiting on ready between polls, for at most wait. Ready is a
// non-blocking, level-less signal (a channel of capacity one written
// without blocking): an item that arrives between a poll and the wait
// leaves the signal set, so no wake-up is lost.
func awaitSignal(t *testing.T, wait time.Duration, what string, ready <-chan struct{}, poll func() bool) {
	t.Helper()
	timer := time.NewTimer(waitOr(wait))
	defer timer.Stop()
	for !poll() {
		select {
		case <-ready:
		case <-timer.C:
			require.FailNowf(t, "timed out", "%s: not within %s", what, waitOr(wait))
		}
	}
}
