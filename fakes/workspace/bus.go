package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
)

// ErrNotInteger: Incr or Decr of a key whose value is not an integer.
var ErrNotInteger = errors.New("value is not an integer")

// Bus is Redis (ports.Bus): pub/sub delivered at most once to the current
// subscribers, integer counters and keys expiring on the virtual clock.
type Bus struct {
	w        *World
	subs     []*subscription
	kv       map[string]kvEntry
	dropMsgs int
}

type kvEntry struct {
	val string
	exp time.Time // zero: no expiry
}

var _ ports.Bus = (*Bus)(nil)

// Publish sends payload to the channel's current subscribers (ports.Bus).
func (x *Bus) Publish(ctx context.Context, channel, payload string) error {
	return x.publish(ctx, "", channel, payload)
}

// Subscribe receives the messages published on channels from now on
// (ports.Bus).
func (x *Bus) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	return x.subscribe(ctx, "", channels)
}

// Incr adds one to a counter, a missing key counting as 0 (ports.Bus).
func (x *Bus) Incr(ctx context.Context, key string) (int64, error) {
	return x.add(ctx, "", mBusIncr, key, 1)
}

// Decr subtracts one from a counter, a missing key counting as 0
// (ports.Bus).
func (x *Bus) Decr(ctx context.Context, key string) (int64, error) {
	return x.add(ctx, "", mBusDecr, key, -1)
}

// Get returns a live key's value (ports.Bus).
func (x *Bus) Get(ctx context.Context, key string) (string, bool, error) {
	return x.get(ctx, "", key)
}

// Set stores value, expiring after ttl (0: never) (ports.Bus).
func (x *Bus) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	_, err := x.set(ctx, "", mBusSet, key, value, ttl)
	return err
}

// SetNX stores value only if key is absent (ports.Bus).
func (x *Bus) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	return x.set(ctx, "", mBusSetNX, key, value, ttl)
}

// Del removes keys (ports.Bus).
func (x *Bus) Del(ctx context.Context, keys ...string) error { return x.del(ctx, "", keys) }

// FlushAll drops every key, as a Redis restart without persistence would
// (world method). Subscriptions survive.
func (x *Bus) FlushAll() {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	clear(x.kv)
}

// DropMessages makes the next n published messages vanish (world method).
func (x *Bus) DropMessages(n int) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.dropMsgs += n
}

// Peek returns a live key's value without a call being made (world method).
func (x *Bus) Peek(key string) (string, bool) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	e, ok := x.liveLocked(key)
	return e.val, ok
}

// Keys lists every live key, sorted (world method).
func (x *Bus) Keys() []string {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	out := make([]string, 0, len(x.kv))
	for k := range x.kv {
		if _, ok := x.liveLocked(k); ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// liveLocked returns key's entry unless it is absent or expired (an expired
// key is removed).
func (x *Bus) liveLocked(key string) (kvEntry, bool) {
	e, ok := x.kv[key]
	if !ok {
		return kvEntry{}, false
	}
	if !e.exp.IsZero() && !x.w.Clock.Now().Before(e.exp) {
		delete(x.kv, key)
		return kvEntry{}, false
	}
	return e, true
}

const maxRecordedPayload = 96

func shorten(s string) string {
	if len(s) <= maxRecordedPayload {
		return s
	}
	return s[:maxRecordedPayload] + "…"
}

func (x *Bus) publish(ctx context.Context, inst, channel, payload string) error {
	if err := x.w.gate(ctx, mBusPublish, inst, "", channel); err != nil {
		x.w.recordCall(inst, mBusPublish, "", channel, shorten(payload), err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.w.recordCall(inst, mBusPublish, "", channel, shorten(payload), nil)
	if x.dropMsgs > 0 {
		x.dropMsgs--
		x.w.droppedMessages.Add(1)
		return nil
	}
	for _, s := range x.subs {
		if slices.Contains(s.channels, channel) {
			s.queue = append(s.queue, ports.Message{Channel: channel, Payload: payload})
			s.signal()
		}
	}
	return nil
}

func (x *Bus) subscribe(ctx context.Context, inst string, channels []string) (ports.Subscription, error) {
	joined := strings.Join(channels, ",")
	if err := x.w.gate(ctx, mBusSubscribe, inst, "", joined); err != nil {
		x.w.recordCall(inst, mBusSubscribe, "", joined, "", err)
		return nil, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	s := &subscription{bus: x, channels: slices.Clone(channels), ready: make(chan struct{}, 1)}
	x.subs = append(x.subs, s)
	x.w.recordCall(inst, mBusSubscribe, "", joined, "", nil)
	return s, nil
}

func (x *Bus) add(ctx context.Context, inst string, m method, key string, delta int64) (int64, error) {
	if err := x.w.gate(ctx, m, inst, "", key); err != nil {
		x.w.recordCall(inst, m, "", key, "", err)
		return 0, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	e, ok := x.liveLocked(key)
	var n int64
	if ok {
		var err error
		if n, err = strconv.ParseInt(e.val, 10, 64); err != nil {
			err = fmt.Errorf("%s %s: %w", methods[m].name, key, ErrNotInteger)
			x.w.recordCall(inst, m, "", key, "", err)
			return 0, err
		}
	}
	n += delta
	e.val = strconv.FormatInt(n, 10)
	x.kv[key] = e // INCR keeps the key's expiry
	x.w.recordCall(inst, m, "", key, e.val, nil)
	return n, nil
}

func (x *Bus) get(ctx context.Context, inst, key string) (string, bool, error) {
	if err := x.w.gate(ctx, mBusGet, inst, "", key); err != nil {
		x.w.recordCall(inst, mBusGet, "", key, "", err)
		return "", false, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	e, ok := x.liveLocked(key)
	return e.val, ok, nil
}

func (x *Bus) set(ctx context.Context, inst string, m method, key, value string, ttl time.Duration) (bool, error) {
	args := key + "=" + value
	if ttl != 0 {
		args += " ttl=" + ttl.String()
	}
	if err := x.w.gate(ctx, m, inst, "", key); err != nil {
		x.w.recordCall(inst, m, "", args, "", err)
		return false, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	if ttl < 0 {
		err := fmt.Errorf("%s %s: negative ttl %s", methods[m].name, key, ttl)
		x.w.recordCall(inst, m, "", args, "", err)
		return false, err
	}
	if m == mBusSetNX {
		if _, ok := x.liveLocked(key); ok {
			x.w.recordCall(inst, m, "", args, "false", nil)
			return false, nil
		}
	}
	e := kvEntry{val: value}
	if ttl > 0 {
		e.exp = x.w.Clock.Now().Add(ttl)
	}
	x.kv[key] = e
	x.w.recordCall(inst, m, "", args, "true", nil)
	return true, nil
}

func (x *Bus) del(ctx context.Context, inst string, keys []string) error {
	joined := strings.Join(keys, ",")
	if err := x.w.gate(ctx, mBusDel, inst, "", joined); err != nil {
		x.w.recordCall(inst, mBusDel, "", joined, "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	n := 0
	for _, k := range keys {
		if _, ok := x.liveLocked(k); ok {
			delete(x.kv, k)
			n++
		}
	}
	x.w.recordCall(inst, mBusDel, "", joined, strconv.Itoa(n), nil)
	return nil
}

// subscription receives messages (ports.Subscription).
type subscription struct {
	bus      *Bus
	channels []string
	queue    []ports.Message
	ready    chan struct{}
	closed   bool
}

func (s *subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Poll returns the messages received since the last Poll, oldest first.
func (s *subscription) Poll() []ports.Message {
	w := s.bus.w
	w.calls[mBusPoll].Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	out := s.queue
	s.queue = nil
	return out
}

// Ready is signalled when messages arrive.
func (s *subscription) Ready() <-chan struct{} { return s.ready }

// Close stops the subscription.
func (s *subscription) Close() error {
	w := s.bus.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.queue = nil
	if i := slices.Index(s.bus.subs, s); i >= 0 {
		s.bus.subs = slices.Delete(s.bus.subs, i, i+1)
	}
	return nil
}
