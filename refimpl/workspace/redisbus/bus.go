package redisbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// DefaultBufferCap is how many unpolled messages a subscription keeps
// before it drops new ones.
const DefaultBufferCap = 10_000

// Bus is ports.Bus on one Redis server. It is safe for concurrent use.
type Bus struct {
	rdb     *redis.Client
	opts    options
	dropped atomic.Int64
}

var _ ports.Bus = (*Bus)(nil)

type options struct {
	log         *slog.Logger
	bufferCap   int
	healthCheck time.Duration
}

// Option configures New.
type Option func(*options)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithBufferCap sets how many unpolled messages a subscription keeps
// (default DefaultBufferCap; at least 1).
func WithBufferCap(n int) Option { return func(o *options) { o.bufferCap = max(n, 1) } }

// WithHealthCheck sets how often a quiet subscription connection is
// pinged; a failed ping makes go-redis reconnect and subscribe again
// (default go-redis's, 3 s).
func WithHealthCheck(d time.Duration) Option { return func(o *options) { o.healthCheck = d } }

// New connects to the Redis server at url (redis://[user:password@]host:port[/db])
// and checks that it answers.
func New(ctx context.Context, url string, opts ...Option) (*Bus, error) {
	o := options{log: slog.Default(), bufferCap: DefaultBufferCap}
	for _, opt := range opts {
		opt(&o)
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	rdb := redis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, wrap("ping", ro.Addr, err)
	}
	return &Bus{rdb: rdb, opts: o}, nil
}

// Close closes the client's connections; subscriptions made through it
// should be closed first.
func (b *Bus) Close() error {
	if err := b.rdb.Close(); err != nil {
		return fmt.Errorf("close redis client: %w", err)
	}
	return nil
}

// Dropped counts the messages dropped by every subscription of b because
// their buffer was full.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// Publish sends payload to the channel's current subscribers (ports.Bus).
func (b *Bus) Publish(ctx context.Context, channel, payload string) error {
	if err := b.rdb.Publish(ctx, channel, payload).Err(); err != nil {
		return wrap("publish", channel, err)
	}
	return nil
}

// Incr adds one to a counter, a missing key counting as 0 (ports.Bus).
func (b *Bus) Incr(ctx context.Context, key string) (int64, error) {
	n, err := b.rdb.Incr(ctx, key).Result()
	if err != nil {
		return 0, wrap("incr", key, err)
	}
	return n, nil
}

// Decr subtracts one from a counter, a missing key counting as 0
// (ports.Bus).
func (b *Bus) Decr(ctx context.Context, key string) (int64, error) {
	n, err := b.rdb.Decr(ctx, key).Result()
	if err != nil {
		return 0, wrap("decr", key, err)
	}
	return n, nil
}

// Get returns a key's value; ok is false when it is absent or expired
// (ports.Bus).
func (b *Bus) Get(ctx context.Context, key string) (string, bool, error) {
	v, err := b.rdb.Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, wrap("get", key, err)
	}
	return v, true, nil
}

// Set stores value, expiring after ttl (0: never) (ports.Bus).
func (b *Bus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	if ttl < 0 {
		return fmt.Errorf("redis set %s: negative ttl %s", key, ttl)
	}
	if err := b.rdb.Set(ctx, key, value, ttl).Err(); err != nil {
		return wrap("set", key, err)
	}
	return nil
}

// SetNX stores value only if key is absent and reports whether it did
// (ports.Bus).
func (b *Bus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if ttl < 0 {
		return false, fmt.Errorf("redis setnx %s: negative ttl %s", key, ttl)
	}
	ok, err := b.rdb.SetNX(ctx, key, value, ttl).Result()
	if err != nil {
		return false, wrap("setnx", key, err)
	}
	return ok, nil
}

// Del removes keys; absent keys are fine (ports.Bus).
func (b *Bus) Del(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := b.rdb.Del(ctx, keys...).Err(); err != nil {
		return wrap("del", strings.Join(keys, ","), err)
	}
	return nil
}

// wrap names the command and key of a failed call; a failure that is not
// a reply of the server also wraps contracts.ErrUnavailable.
func wrap(cmd, key string, err error) error {
	var reply redis.Error
	if errors.As(err, &reply) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("redis %s %s: %w", cmd, key, err)
	}
	return fmt.Errorf("redis %s %s: %w: %w", cmd, key, contracts.ErrUnavailable, err)
}
