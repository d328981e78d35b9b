package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

var errListenerClosed = errors.New("listener closed")

// listener receives change notifications (ports.Listener).
type listener struct {
	s      *Store
	inst   string
	queue  []ports.Change
	ready  chan struct{}
	broken bool
	closed bool
}

func (s *Store) listen(ctx context.Context, inst string) (ports.Listener, error) {
	if err := s.w.gate(ctx, mFeedListen, inst, "", ""); err != nil {
		s.w.recordCall(inst, mFeedListen, "", "", "", err)
		return nil, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	l := &listener{s: s, inst: inst, ready: make(chan struct{}, 1)}
	s.listeners = append(s.listeners, l)
	s.w.recordCall(inst, mFeedListen, "", "", "", nil)
	return l, nil
}

// BreakFeed ends every open listener's session: each one's next Poll fails
// and the notifications it had not polled are lost (world method).
func (s *Store) BreakFeed() {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	for _, l := range s.listeners {
		l.broken = true
		l.queue = nil
		l.signal()
	}
	s.listeners = nil
}

func (l *listener) signal() {
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// Poll returns the notifications received since the last Poll.
func (l *listener) Poll(ctx context.Context) ([]ports.Change, error) {
	s := l.s
	if err := s.w.gate(ctx, mFeedPoll, l.inst, "", ""); err != nil {
		s.w.recordCall(l.inst, mFeedPoll, "", "", "", err)
		return nil, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	switch {
	case l.closed:
		return nil, fmt.Errorf("poll: %w", errListenerClosed)
	case l.broken:
		return nil, fmt.Errorf("poll: listener session lost: %w", contracts.ErrUnavailable)
	}
	out := l.queue
	l.queue = nil
	return out, nil
}

// Ready is signalled when notifications arrive.
func (l *listener) Ready() <-chan struct{} { return l.ready }

// Close stops listening.
func (l *listener) Close() error {
	s := l.s
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	l.closed = true
	l.queue = nil
	if i := slices.Index(s.listeners, l); i >= 0 {
		s.listeners = slices.Delete(s.listeners, i, i+1)
	}
	return nil
}
