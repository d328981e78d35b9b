package contracttest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/ports"
)

// BusTarget is a fresh, empty bus and the means to let its time pass.
type BusTarget struct {
	Bus ports.Bus
	// Advance lets d pass on the bus's clock: a virtual clock's Advance,
	// or a real sleep.
	Advance func(t *testing.T, d time.Duration)
	// TTL is the expiry the suite gives keys; it lets TTL+TTL/2 pass once.
	// Zero means one second (short enough to sleep through, long enough
	// for a key just set to be read back before it expires).
	TTL time.Duration
	// Wait bounds the wait for a published message (zero: DefaultWait).
	Wait time.Duration
}

// Bus runs the ports.Bus suite.
func Bus(t *testing.T, newBus func(t *testing.T) BusTarget) {
	t.Run("IncrDecrFromAbsent", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		for i, step := range []struct {
			incr bool
			want int64
		}{{true, 1}, {true, 2}, {false, 1}, {false, 0}, {false, -1}} {
			var n int64
			var err error
			if step.incr {
				n, err = b.Incr(ctx, "ws_conn:a")
			} else {
				n, err = b.Decr(ctx, "ws_conn:a")
			}
			require.NoError(t, err, "step %d", i)
			require.Equal(t, step.want, n, "step %d", i)
		}
		v, ok, err := b.Get(ctx, "ws_conn:a")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "-1", v, "a counter reads back as its decimal value")

		n, err := b.Decr(ctx, "ws_conn:b")
		require.NoError(t, err)
		require.Equal(t, int64(-1), n, "Decr of an absent key counts from 0")

		require.NoError(t, b.Set(ctx, "ws_conn:c", "41", 0))
		n, err = b.Incr(ctx, "ws_conn:c")
		require.NoError(t, err)
		require.Equal(t, int64(42), n, "Incr of a value Set as a decimal string")
	})

	t.Run("ConcurrentIncrIsAtomic", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		const workers, each = 8, 25
		errs := make(chan error, workers*each)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					if _, err := b.Incr(ctx, "ws_conn:busy"); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		v, ok, err := b.Get(ctx, "ws_conn:busy")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, strconv.Itoa(workers*each), v, "no increment lost")
	})

	t.Run("IncrOfNonIntegerFails", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		require.NoError(t, b.Set(ctx, "k", "abc", 0))
		_, err := b.Incr(ctx, "k")
		require.Error(t, err)
		_, err = b.Decr(ctx, "k")
		require.Error(t, err)
		v, ok, err := b.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "abc", v, "a failed Incr leaves the value alone")
	})

	t.Run("GetAbsent", func(t *testing.T) {
		b := newBus(t).Bus
		v, ok, err := b.Get(t.Context(), "idle_timer:none")
		require.NoError(t, err)
		require.False(t, ok)
		require.Empty(t, v)
	})

	t.Run("SetGetOverwrite", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		require.NoError(t, b.Set(ctx, "k", "v1", 0))
		v, ok, err := b.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "v1", v)
		require.NoError(t, b.Set(ctx, "k", "", 0))
		v, ok, err = b.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok, "an empty value is present")
		require.Empty(t, v)
		require.NoError(t, b.Set(ctx, "k", "v2 with spaces\nand a newline", 0))
		v, _, err = b.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v2 with spaces\nand a newline", v)
	})

	t.Run("SetNXOnlyOnce", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		ok, err := b.SetNX(ctx, "gc_orphan:x", "first", 0)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.SetNX(ctx, "gc_orphan:x", "second", 0)
		require.NoError(t, err)
		require.False(t, ok)
		v, _, err := b.Get(ctx, "gc_orphan:x")
		require.NoError(t, err)
		require.Equal(t, "first", v, "a refused SetNX leaves the value alone")
		require.NoError(t, b.Del(ctx, "gc_orphan:x"))
		ok, err = b.SetNX(ctx, "gc_orphan:x", "third", 0)
		require.NoError(t, err)
		require.True(t, ok, "SetNX after Del")
		v, _, err = b.Get(ctx, "gc_orphan:x")
		require.NoError(t, err)
		require.Equal(t, "third", v)
	})

	t.Run("Del", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		require.NoError(t, b.Set(ctx, "a", "1", 0))
		require.NoError(t, b.Set(ctx, "b", "2", 0))
		require.NoError(t, b.Set(ctx, "c", "3", 0))
		require.NoError(t, b.Del(ctx, "a", "b", "absent"), "absent keys are fine")
		for _, k := range []string{"a", "b", "absent"} {
			_, ok, err := b.Get(ctx, k)
			require.NoError(t, err)
			require.False(t, ok, k)
		}
		v, ok, err := b.Get(ctx, "c")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "3", v)
		require.NoError(t, b.Del(ctx), "Del of no keys")
		require.NoError(t, b.Del(ctx, "absent"))
	})

	t.Run("Expiry", func(t *testing.T) {
		target := newBus(t)
		b := target.Bus
		ctx := t.Context()
		ttl := target.TTL
		if ttl == 0 {
			ttl = time.Second
		}
		require.NoError(t, b.Set(ctx, "idle_timer:a", "300", ttl))
		require.NoError(t, b.Set(ctx, "forever", "v", 0))
		require.NoError(t, b.Set(ctx, "cleared", "v", ttl))
		require.NoError(t, b.Set(ctx, "cleared", "v2", 0)) // Set without TTL drops the old one
		ok, err := b.SetNX(ctx, "gc_orphan:a", "1700000000", ttl)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, b.Set(ctx, "counter", "5", ttl))
		n, err := b.Incr(ctx, "counter")
		require.NoError(t, err)
		require.Equal(t, int64(6), n)
		for _, k := range []string{"idle_timer:a", "forever", "cleared", "gc_orphan:a", "counter"} {
			_, ok, err := b.Get(ctx, k)
			require.NoError(t, err)
			require.True(t, ok, "%s is there before its TTL ran out", k)
		}

		target.Advance(t, ttl+ttl/2)

		for _, k := range []string{"idle_timer:a", "gc_orphan:a", "counter"} {
			v, ok, err := b.Get(ctx, k)
			require.NoError(t, err)
			require.False(t, ok, "%s expired (Incr keeps the TTL of counter)", k)
			require.Empty(t, v)
		}
		for _, k := range []string{"forever", "cleared"} {
			_, ok, err := b.Get(ctx, k)
			require.NoError(t, err)
			require.True(t, ok, "%s has no TTL", k)
		}
		ok, err = b.SetNX(ctx, "gc_orphan:a", "again", 0)
		require.NoError(t, err)
		require.True(t, ok, "SetNX of an expired key")
		n, err = b.Incr(ctx, "counter")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "Incr of an expired counter counts from 0")
	})

	t.Run("NegativeTTLFails", func(t *testing.T) {
		b := newBus(t).Bus
		ctx := t.Context()
		require.Error(t, b.Set(ctx, "k", "v", -time.Second))
		_, ok, err := b.Get(ctx, "k")
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("PublishReachesEarlierSubscribersOnly", func(t *testing.T) {
		target := newBus(t)
		b := target.Bus
		ctx := t.Context()
		require.NoError(t, b.Publish(ctx, "workspace:a", "before anyone listened"))

		early, err := b.Subscribe(ctx, "workspace:a", "workspace:b")
		require.NoError(t, err)
		t.Cleanup(func() { _ = early.Close() })
		require.Empty(t, early.Poll(), "nothing received yet")

		require.NoError(t, b.Publish(ctx, "workspace:a", "m1"))
		require.NoError(t, b.Publish(ctx, "workspace:other", "not subscribed"))
		require.NoError(t, b.Publish(ctx, "workspace:b", "m2"))
		require.NoError(t, b.Publish(ctx, "workspace:a", `{"m":3}`))
		require.Equal(t, []ports.Message{
			{Channel: "workspace:a", Payload: "m1"},
			{Channel: "workspace:b", Payload: "m2"},
			{Channel: "workspace:a", Payload: `{"m":3}`},
		}, receive(t, early, 3, target.Wait), "in publish order, only the subscribed channels")

		late, err := b.Subscribe(ctx, "workspace:a")
		require.NoError(t, err)
		t.Cleanup(func() { _ = late.Close() })
		require.NoError(t, b.Publish(ctx, "workspace:a", "m4"))
		require.Equal(t, []ports.Message{{Channel: "workspace:a", Payload: "m4"}},
			receive(t, late, 1, target.Wait), "a later subscriber sees only what was published after it subscribed")
		require.Equal(t, []ports.Message{{Channel: "workspace:a", Payload: "m4"}},
			receive(t, early, 1, target.Wait))
		require.Empty(t, early.Poll(), "each message is delivered once")
		require.Empty(t, late.Poll())
	})

	t.Run("CloseStopsDelivery", func(t *testing.T) {
		target := newBus(t)
		b := target.Bus
		ctx := t.Context()
		closing, err := b.Subscribe(ctx, "monitor:trigger")
		require.NoError(t, err)
		staying, err := b.Subscribe(ctx, "monitor:trigger")
		require.NoError(t, err)
		t.Cleanup(func() { _ = staying.Close() })

		require.NoError(t, b.Publish(ctx, "monitor:trigger", "one"))
		want := []ports.Message{{Channel: "monitor:trigger", Payload: "one"}}
		require.Equal(t, want, receive(t, closing, 1, target.Wait))
		require.Equal(t, want, receive(t, staying, 1, target.Wait))

		require.NoError(t, closing.Close())
		require.NoError(t, b.Publish(ctx, "monitor:trigger", "two"))
		require.Equal(t, []ports.Message{{Channel: "monitor:trigger", Payload: "two"}}, receive(t, staying, 1, target.Wait))
		require.Empty(t, closing.Poll(), "a closed subscription receives nothing")
		require.NoError(t, closing.Close(), "closing twice")
		require.NoError(t, b.Publish(ctx, "monitor:trigger", "to nobody but staying"))
		require.NoError(t, staying.Close())
		require.NoError(t, b.Publish(ctx, "monitor:trigger", "to nobody"), "publishing without subscribers")
	})
}

// receive polls sub until it has at least n messages, waiting on Ready for
// at most wait, and returns them.
func receive(t *testing.T, sub ports.Subscription, n int, wait time.Duration) []ports.Message {
	t.Helper()
	var got []ports.Message
	awaitSignal(t, wait, "subscription message", sub.Ready(), func() bool {
		got = append(got, sub.Poll()...)
		return len(got) >= n
	})
	return got
}
