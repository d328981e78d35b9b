package redisbus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/wsconverge/converge/contracts/ports"
)

// Subscription receives the messages published on its channels after
// Subscribe returned (ports.Subscription).
type Subscription struct {
	ps       *redis.PubSub
	bus      *Bus
	channels []string

	mu     sync.Mutex
	queue  []ports.Message
	closed bool

	ready   chan struct{}
	done    chan struct{} // closed when the pump has stopped
	dropped atomic.Int64
	resubs  atomic.Int64
}

var _ ports.Subscription = (*Subscription)(nil)

// Subscribe subscribes to channels and returns once Redis has confirmed
// every one of them (ports.Bus).
func (b *Bus) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	return b.subscribe(ctx, channels)
}

func (b *Bus) subscribe(ctx context.Context, channels []string) (*Subscription, error) {
	joined := strings.Join(channels, ",")
	if len(channels) == 0 {
		return nil, fmt.Errorf("redis subscribe: no channels")
	}
	s := &Subscription{
		ps:       b.rdb.Subscribe(ctx), // connects lazily, subscribes below
		bus:      b,
		channels: append([]string(nil), channels...),
		ready:    make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	fail := func(err error) (*Subscription, error) {
		_ = s.ps.Close()
		return nil, wrap("subscribe", joined, err)
	}
	if err := s.ps.Subscribe(ctx, channels...); err != nil {
		return fail(err)
	}
	// One confirmation per channel; Redis sends them together, before
	// any message of the channels, but keep a message that came first.
	for confirmed := 0; confirmed < len(channels); {
		msg, err := s.ps.Receive(ctx)
		if err != nil {
			return fail(err)
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				confirmed++
			}
		case *redis.Message:
			s.push(m)
		}
	}
	var opts []redis.ChannelOption
	if b.opts.healthCheck > 0 {
		opts = append(opts, redis.WithChannelHealthCheckInterval(b.opts.healthCheck))
	}
	go s.pump(s.ps.ChannelWithSubscriptions(opts...))
	return s, nil
}

// pump moves what go-redis receives into the buffer until the PubSub is
// closed.
func (s *Subscription) pump(in <-chan any) {
	defer close(s.done)
	for msg := range in {
		switch m := msg.(type) {
		case *redis.Message:
			s.push(m)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				// go-redis reconnected and subscribed again: what was
				// published in between is lost.
				s.resubs.Add(1)
				s.bus.opts.log.Warn("redis subscription restored; messages published while disconnected are lost",
					"channel", m.Channel)
			}
		}
	}
}

func (s *Subscription) push(m *redis.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if len(s.queue) >= s.bus.opts.bufferCap {
		if s.dropped.Add(1) == 1 {
			s.bus.opts.log.Warn("redis subscription buffer full: dropping messages",
				"channels", strings.Join(s.channels, ","), "cap", s.bus.opts.bufferCap)
		}
		s.bus.dropped.Add(1)
		return
	}
	s.queue = append(s.queue, ports.Message{Channel: m.Channel, Payload: m.Payload})
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Poll returns the messages received since the last Poll, oldest first,
// without waiting.
func (s *Subscription) Poll() []ports.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.queue
	s.queue = nil
	return out
}

// Ready is signalled when messages arrive.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Dropped counts the messages this subscription dropped because its
// buffer was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Resubscribed counts the times go-redis restored the subscription after
// losing its connection (each may have lost messages).
func (s *Subscription) Resubscribed() int64 { return s.resubs.Load() }

// Close unsubscribes and stops delivery; buffered messages are dropped.
// Closing twice is fine.
func (s *Subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	err := s.ps.Close()
	<-s.done
	if err != nil {
		return fmt.Errorf("close redis subscription %s: %w", strings.Join(s.channels, ","), err)
	}
	return nil
}
