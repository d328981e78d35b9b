package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// wake is a coordinator's declared wake-up (protocol version 2): the
// steps it takes while nothing happens. Until until, a step at time t
// makes calls in order and, when each gets its quiet answer, changes
// nothing and asks to run again at min(t+every, until). The harness takes
// such a step itself — it makes the calls through the instance's ports,
// where the simulator records, counts and faults them as the child's own
// — and wakes the child only when a call answers otherwise, or when
// until comes. A child is thus stepped when something happened (a
// change on its listener, a message on its subscription, its lease lost,
// the lock acquired, an error) or its own work is due, and never only to
// poll; the history is the one its own polling steps would record.
type wake struct {
	calls []wire.Call
	every time.Duration
	until time.Time // zero: no limit
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
	out := &wake{calls: make([]wire.Call, len(w.Calls)), every: time.Duration(w.EveryNs)}
	if w.Until != nil {
		out.until = w.Until.Time
	}
	for i, c := range w.Calls {
		if err := s.checkWakeCall(c); err != nil {
			return nil, fmt.Errorf("wake.calls[%d]: %w", i, err)
		}
		if len(c.Args) == 0 {
			c.Args = json.RawMessage("{}")
		}
		out.calls[i] = c
	}
	return out, nil
}

func (s *session) checkWakeCall(c wire.Call) error {
	if !slices.Contains(wire.WakeMethods, c.Method) {
		return fmt.Errorf("method %q cannot wake a child: want one of %v", c.Method, wire.WakeMethods)
	}
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var err error
	switch c.Method {
	case wire.MLeaseCheck:
		var a wire.Lease
		if err = wire.Strict(args, &a); err == nil {
			_, err = s.lease(a.Lease)
		}
	case wire.MListenerPoll:
		var a wire.Listener
		if err = wire.Strict(args, &a); err == nil {
			_, err = s.listener(a.Listener)
		}
	case wire.MSubscriptionPoll:
		var a wire.Subscription
		if err = wire.Strict(args, &a); err == nil {
			_, err = s.subscription(a.Subscription)
		}
	case wire.MLeadershipTryAcquire:
		var a wire.TryAcquire
		err = wire.Strict(args, &a)
	}
	var bad *badArgs
	if errors.As(err, &bad) {
		err = bad.err
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.Method, err)
	}
	return nil
}

// quietStep takes the step at now for the child, if its wake-up covers
// it: it makes the wake-up's calls until one answers otherwise. quiet
// reports that every call answered quietly: the step is over, and next is
// when the instance runs again. Otherwise answers holds the answers made
// (none when the wake-up does not cover now), for the step the child must
// now take. An error is fatal to the child: the simulator crashed it at
// one of the calls.
func (s *session) quietStep(ctx context.Context, now time.Time) (quiet bool, next time.Time, answers [][]byte, err error) {
	w := s.wake
	if w == nil || (!w.until.IsZero() && !now.Before(w.until)) {
		return false, time.Time{}, nil, nil
	}
	for _, c := range w.calls {
		v, portErr, fatal := s.call(ctx, c.Method, c.Args, nil)
		if fatal != nil {
			return false, time.Time{}, nil, fatal
		}
		a, err := appendAnswer(nil, v, portErr)
		if err != nil {
			return false, time.Time{}, nil, err
		}
		answers = append(answers, a[:len(a)-1])
		if !quietAnswer(c.Method, v, portErr) {
			return false, time.Time{}, answers, nil
		}
	}
	next = now.Add(w.every)
	if !w.until.IsZero() && w.until.Before(next) {
		next = w.until
	}
	return true, next, nil, nil
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
