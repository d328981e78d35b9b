package redisbus_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/redisbus"
)

// TestRedis runs everything against one Redis container.
func TestRedis(t *testing.T) {
	url := testenv.Redis(t)
	admin := adminClient(t, url)

	// fresh empties the server and connects a bus to it.
	fresh := func(t *testing.T, opts ...redisbus.Option) *redisbus.Bus {
		t.Helper()
		require.NoError(t, admin.FlushAll(t.Context()).Err())
		opts = append([]redisbus.Option{redisbus.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))}, opts...)
		b, err := redisbus.New(t.Context(), url, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b.Close()) })
		return b
	}

	t.Run("Contract", func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return contracttest.BusTarget{
				Bus:     fresh(t),
				Advance: func(_ *testing.T, d time.Duration) { time.Sleep(d) },
				TTL:     time.Second,
			}
		})
	})

	t.Run("FullBufferDropsAndCounts", func(t *testing.T) {
		b := fresh(t, redisbus.WithBufferCap(3))
		ctx := t.Context()
		sub := subscribe(t, b, "c")
		for i := range 5 {
			require.NoError(t, b.Publish(ctx, "c", fmt.Sprint(i)))
		}
		// The fifth message is the last one the pump handles.
		require.Eventually(t, func() bool { return b.Dropped() == 2 }, 5*time.Second, 5*time.Millisecond)
		require.Equal(t, int64(2), sub.Dropped())
		require.Equal(t, []ports.Message{{Channel: "c", Payload: "0"}, {Channel: "c", Payload: "1"}, {Channel: "c", Payload: "2"}},
			sub.Poll(), "the oldest messages are kept")
		require.NoError(t, b.Publish(ctx, "c", "after polling"))
		require.Eventually(t, func() bool { return len(sub.Poll()) == 1 }, 5*time.Second, 5*time.Millisecond,
			"room again after Poll")
	})

	t.Run("SubscriptionSurvivesAKilledConnection", func(t *testing.T) {
		b := fresh(t, redisbus.WithHealthCheck(200*time.Millisecond))
		ctx := t.Context()
		sub := subscribe(t, b, "c")
		require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
		require.Eventually(t, func() bool { return sub.Resubscribed() >= 1 }, 10*time.Second, 10*time.Millisecond,
			"go-redis subscribes again after the connection is lost")
		require.NoError(t, b.Publish(ctx, "c", "after the reconnect"))
		var got []ports.Message
		require.Eventually(t, func() bool {
			got = append(got, sub.Poll()...)
			return len(got) > 0
		}, 5*time.Second, 5*time.Millisecond)
		require.Equal(t, []ports.Message{{Channel: "c", Payload: "after the reconnect"}}, got)
	})

	t.Run("SubscribeNeedsChannels", func(t *testing.T) {
		b := fresh(t)
		_, err := b.Subscribe(t.Context())
		require.Error(t, err)
	})

	t.Run("ServerErrorIsNotUnavailable", func(t *testing.T) {
		b := fresh(t)
		ctx := t.Context()
		require.NoError(t, b.Set(ctx, "k", "not a number", 0))
		_, err := b.Incr(ctx, "k")
		require.Error(t, err)
		require.NotErrorIs(t, err, contracts.ErrUnavailable, "a reply of the server is not an outage")
		require.Contains(t, err.Error(), "incr k")
	})
}

func TestUnreachableServerIsUnavailable(t *testing.T) {
	// A port nobody listens on: bind one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = redisbus.New(ctx, "redis://"+addr)
	require.ErrorIs(t, err, contracts.ErrUnavailable)
}

func TestBadURL(t *testing.T) {
	_, err := redisbus.New(t.Context(), "http://not-redis")
	require.Error(t, err)
}

func adminClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func subscribe(t *testing.T, b *redisbus.Bus, channels ...string) *redisbus.Subscription {
	t.Helper()
	s, err := b.Subscribe(t.Context(), channels...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	sub, ok := s.(*redisbus.Subscription)
	require.True(t, ok)
	return sub
}
