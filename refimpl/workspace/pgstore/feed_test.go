package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// collect polls l until it has n changes (or fails after a few seconds).
func collect(t *testing.T, l ports.Listener, n int) []ports.Change {
	t.Helper()
	var got []ports.Change
	deadline := time.After(5 * time.Second)
	for len(got) < n {
		select {
		case <-l.Ready():
		case <-deadline:
			t.Fatalf("got %d of %d changes: %+v", len(got), n, got)
		}
		cs, err := l.Poll(context.Background())
		require.NoError(t, err)
		got = append(got, cs...)
	}
	return got
}

func TestNotifications(t *testing.T) {
	e := newEnv(t, pgstore.WithListenerPing(200*time.Millisecond))
	ctx := context.Background()
	l, err := e.s.Listen(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })

	row := e.insert(t, 1)[0]
	at := func() time.Time { return us(e.clock.Now()) }
	update := func(p contracts.Patch) {
		t.Helper()
		e.clock.Advance(time.Second)
		applied, err := e.s.Update(ctx, apiWriter, row.ID, contracts.Cond{}, p)
		require.NoError(t, err)
		require.True(t, applied)
		p.Apply(&row, at())
	}
	var want []ports.Change
	want = append(want, ports.ChangeOf(&row, us(row.UpdatedAt)))

	// No notification: a name change, observed_at, and a notify column
	// set to the value it has.
	update(contracts.Patch{Name: contracts.Some("renamed")})
	update(contracts.Patch{ObservedAt: contracts.Some(at())})
	update(contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)})
	// Outlive a listener ping: the session stays usable.
	time.Sleep(500 * time.Millisecond)

	// One notification each.
	for _, p := range []contracts.Patch{
		{ObservedStatus: contracts.Some(contracts.ObservedStandby)},
		{HealthStatus: contracts.Some(contracts.HealthError)},
		{Operation: contracts.Some(contracts.OpStarting), ArchiveKey: contracts.Some("archives/a")},
		{DesiredState: contracts.Some(contracts.DesiredStandby)},
		{ErrorInfo: contracts.Some(terminalError), ErrorMessage: contracts.Some("gone"), ErrorCount: contracts.Some(3)},
		{DeletedAt: contracts.Some(at())},
		{ObservedStatus: contracts.Some(contracts.ObservedDeleted)},
	} {
		update(p)
		want = append(want, ports.ChangeOf(&row, at()))
	}
	got := collect(t, l, len(want))
	require.Equal(t, want, got)
	require.Equal(t, contracts.DisplayDeleted, got[len(got)-1].Display)
	require.Equal(t, contracts.DisplayError, got[2].Display)

	// Nothing else arrived.
	time.Sleep(200 * time.Millisecond)
	rest, err := l.Poll(ctx)
	require.NoError(t, err)
	require.Empty(t, rest)
}

func TestListenerSessionLost(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l, err := e.s.Listen(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })

	ok, err := e.s.TerminateBackend(ctx, l.(*pgstore.Listener).BackendPID())
	require.NoError(t, err)
	require.True(t, ok)
	select {
	case <-l.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("the listener did not signal its lost session")
	}
	_, err = l.Poll(ctx)
	require.ErrorIs(t, err, contracts.ErrUnavailable)
	_, err = l.Poll(ctx)
	require.ErrorIs(t, err, contracts.ErrUnavailable, "a lost listener stays lost")

	// A new listener works.
	l2, err := e.s.Listen(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l2.Close() })
	row := e.insert(t, 1)[0]
	got := collect(t, l2, 1)
	require.Equal(t, row.ID, got[0].WorkspaceID)

	require.NoError(t, l2.Close())
	_, err = l2.Poll(ctx)
	require.Error(t, err)
}
