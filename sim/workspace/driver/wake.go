package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// wake is a coordinator's declared wake-up (protocol version 2): the calls
// each of its steps begins with, and the steps it takes while nothing
// happens. Every step makes calls in order, until one answers otherwise
// than quietly; before until, a step whose calls all answered quietly
// changes nothing and asks to run again at min(t+every, until). The
// harness makes those calls itself, through the instance's ports, where
// the simulator records, counts and faults them as the child's own; it
// ends a quiet step there, and otherwise sends the step with the answers
// it got, which answer the child's first calls. A child is thus stepped
// when something happened (a change on its listener, a message on its
// subscription, its lease lost, the lock acquired, an error) or its own
// work is due, and never only to poll; the history is the one its own
// steps would record.
type wake struct {
	calls []quietCall
	every time.Duration
	until time.Time // zero: no limit
	// values holds a quiet step's answers until it is over.
	values []any
}

// quietCall is one call of a wake-up, bound to the port it calls (its
// arguments were read once, when it was declared).
type quietCall struct {
	method string
	do     func(ctx context.Context) (any, error)
}

// declareWake checks a wake-up a child declared: version 2, a positive
// interval, and calls of the wake-up methods, with arguments that decode
// and handles this child was given.
func (s *session) declareWake(w *wire.Wake) (*wake, error) {
	if s.version < 2 {
		return nil, fmt.Errorf("a wake-up is protocol version 2; this child answered hello with version %d", s.version)
	}
	if w.EveryNs <= 0 {
		return nil, fmt.Errorf("wake.every_ns %d: want a positive interval in nanoseconds", w.EveryNs)
	}
	if len(w.Calls) == 0 {
		return nil, errors.New("a wake-up without calls (to be stepped only at next, leave wake out)")
	}
	out := &wake{calls: make([]quietCall, len(w.Calls)), every: time.Duration(w.EveryNs)}
	if w.Until != nil {
		out.until = w.Until.Time
	}
	for i, c := range w.Calls {
		q, err := s.bindWakeCall(c)
		if err != nil {
			return nil, fmt.Errorf("wake.calls[%d]: %w", i, err)
		}
		out.calls[i] = q
	}
	return out, nil
}

// bindWakeCall reads a wake-up call's arguments and binds it to the port
// it calls.
func (s *session) bindWakeCall(c wire.Call) (quietCall, error) {
	q := quietCall{method: c.Method}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var err error
	switch c.Method {
	case wire.MLeaseCheck:
		var a wire.Lease
		var l ports.Lease
		if err = decodeArgs(args, &a); err == nil {
			if l, err = s.lease(a.Lease); err == nil {
				q.do = func(ctx context.Context) (any, error) { return none, l.Check(ctx) }
			}
		}
	case wire.MListenerPoll:
		var a wire.Listener
		var l ports.Listener
		if err = decodeArgs(args, &a); err == nil {
			if l, err = s.listener(a.Listener); err == nil {
				q.do = func(ctx context.Context) (any, error) { return pollListener(ctx, l) }
			}
		}
	case wire.MSubscriptionPoll:
		var a wire.Subscription
		var sub ports.Subscription
		if err = decodeArgs(args, &a); err == nil {
			if sub, err = s.subscription(a.Subscription); err == nil {
				q.do = func(context.Context) (any, error) { return pollSubscription(sub), nil }
			}
		}
	case wire.MLeadershipTryAcquire:
		var a wire.TryAcquire
		if err = decodeArgs(args, &a); err == nil {
			q.do = func(ctx context.Context) (any, error) { return s.tryAcquire(ctx, a.Holder) }
		}
	default:
		return q, fmt.Errorf("method %q cannot wake a child: want one of %v", c.Method, wire.WakeMethods)
	}
	var bad *badArgs
	if errors.As(err, &bad) {
		err = bad.err
	}
	if err != nil {
		return q, fmt.Errorf("%s: %w", c.Method, err)
	}
	return q, nil
}

// decodeArgs reads a call's arguments as the handlers do.
func decodeArgs[A any](raw []byte, a *A) error {
	if fa, ok := any(a).(wire.FastArgs); ok && fa.DecodeFast(raw) {
		return nil
	}
	return wire.Strict(raw, a)
}

// wakeStep begins the step at now for the child, when it declared a
// wake-up: it makes the wake-up's calls, in order, until one answers
// otherwise. quiet reports that every call answered quietly before the
// wake-up's until: the step is over, and next is when the instance runs
// again. Otherwise answers holds the answers made (none without a
// wake-up), which the step the child must now take brings. An error is
// fatal to the child: the simulator crashed it at one of the calls.
func (s *session) wakeStep(ctx context.Context, now time.Time) (quiet bool, next time.Time, answers [][]byte, err error) {
	w := s.wake
	if w == nil {
		return false, time.Time{}, nil, nil
	}
	w.values = w.values[:0]
	for _, c := range w.calls {
		v, err := c.do(ctx)
		if errors.Is(err, contracts.ErrCrashed) {
			// The simulator's gate failed this call: the process is dead.
			return false, time.Time{}, nil, &crashed{err}
		}
		if !quietAnswer(c.method, v, err) {
			// Wake the child with every answer so far, this one last.
			a, err := appendAnswer(nil, v, err)
			if err != nil {
				return false, time.Time{}, nil, err
			}
			return false, time.Time{}, append(w.answers(), a[:len(a)-1]), nil
		}
		w.values = append(w.values, v)
	}
	if !w.until.IsZero() && !now.Before(w.until) {
		return false, time.Time{}, w.answers(), nil // its own work is due
	}
	next = now.Add(w.every)
	if !w.until.IsZero() && w.until.Before(next) {
		next = w.until
	}
	return true, next, nil, nil
}

// answers encodes the quiet answers of the calls made so far.
func (w *wake) answers() [][]byte {
	out := make([][]byte, 0, len(w.values)+1)
	for _, v := range w.values {
		a, _ := appendAnswer(nil, v, nil)
		out = append(out, a[:len(a)-1])
	}
	return out
}

// quietAnswer reports whether a wake-up call's answer is its quiet one: a
// lease that still holds, a listener with no change, a subscription with
// no message, a lock another holds.
func quietAnswer(method string, v any, portErr error) bool {
	if portErr != nil {
		return false
	}
	switch method {
	case wire.MLeaseCheck:
		return true
	case wire.MListenerPoll, wire.MSubscriptionPoll:
		raw, ok := v.(json.RawMessage)
		return ok && string(raw) == "[]"
	case wire.MLeadershipTryAcquire:
		a, ok := v.(wire.Acquired)
		return ok && !a.OK
	}
	return false
}
