package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/wsconverge/converge/contracts/ports"
)

func TestBusCounters(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	n, err := w.Bus.Decr(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, int64(-1), n, "a missing key starts from 0")
	for want := int64(0); want < 3; want++ {
		n, err = w.Bus.Incr(ctx, "c")
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	v, ok, err := w.Bus.Get(ctx, "c")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "2", v)
	require.NoError(t, w.Bus.Set(ctx, "s", "text", 0))
	_, err = w.Bus.Incr(ctx, "s")
	require.ErrorIs(t, err, ErrNotInteger)
}

func TestBusKeysExpireOnTheVirtualClock(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Bus.Set(ctx, "idle", "1", 5*time.Minute))
	require.NoError(t, w.Bus.Set(ctx, "forever", "1", 0))
	ok, err := w.Bus.SetNX(ctx, "idle", "2", time.Minute)
	require.NoError(t, err)
	require.False(t, ok, "present: SetNX does nothing")

	w.Clock.Advance(5*time.Minute - time.Nanosecond)
	v, ok, err := w.Bus.Get(ctx, "idle")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "1", v)

	w.Clock.Advance(time.Nanosecond)
	_, ok, err = w.Bus.Get(ctx, "idle")
	require.NoError(t, err)
	require.False(t, ok, "expired at its deadline")
	require.Equal(t, []string{"forever"}, w.Bus.Keys())

	ok, err = w.Bus.SetNX(ctx, "idle", "2", time.Minute)
	require.NoError(t, err)
	require.True(t, ok, "an expired key is absent")
	n, err := w.Bus.Incr(ctx, "idle")
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	w.Clock.Advance(time.Minute)
	_, ok = w.Bus.Peek("idle")
	require.False(t, ok, "Incr kept the expiry")

	require.Error(t, w.Bus.Set(ctx, "neg", "1", -time.Second))
	require.NoError(t, w.Bus.Del(ctx, "forever", "missing"))
	_, ok = w.Bus.Peek("forever")
	require.False(t, ok)

	require.NoError(t, w.Bus.Set(ctx, "k", "v", 0))
	w.Bus.FlushAll()
	require.Empty(t, w.Bus.Keys())
}

func TestBusPubSub(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Bus.Publish(ctx, "workspace:a", "before")) // nobody listens: lost
	sub, err := w.Bus.Subscribe(ctx, "workspace:a", "monitor:trigger")
	require.NoError(t, err)
	other, err := w.Bus.Subscribe(ctx, "workspace:b")
	require.NoError(t, err)

	require.NoError(t, w.Bus.Publish(ctx, "workspace:a", "1"))
	require.NoError(t, w.Bus.Publish(ctx, "monitor:trigger", "a"))
	require.NoError(t, w.Bus.Publish(ctx, "workspace:c", "elsewhere"))
	select {
	case <-sub.Ready():
	default:
		t.Fatal("Ready not signalled")
	}
	require.Equal(t, []ports.Message{{Channel: "workspace:a", Payload: "1"}, {Channel: "monitor:trigger", Payload: "a"}}, sub.Poll())
	require.Empty(t, sub.Poll(), "Poll drains")
	require.Empty(t, other.Poll())

	w.Bus.DropMessages(1)
	require.NoError(t, w.Bus.Publish(ctx, "workspace:a", "dropped"))
	require.NoError(t, w.Bus.Publish(ctx, "workspace:a", "kept"))
	require.Equal(t, []ports.Message{{Channel: "workspace:a", Payload: "kept"}}, sub.Poll())
	require.Equal(t, int64(1), w.Stats().DroppedMessages)

	require.NoError(t, sub.Close())
	require.NoError(t, w.Bus.Publish(ctx, "workspace:a", "after close"))
	require.Empty(t, sub.Poll())
}
