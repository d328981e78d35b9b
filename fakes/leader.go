package fakes

import (
	"context"
	"errors"
	"fmt"
	"github.com/wsconverge/converge/contracts/history"
	"sync"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// errSessionTerminated: the DB session was killed (pg_terminate_backend).
var errSessionTerminated = fmt.Errorf("db session terminated: %w", contracts.ErrUnavailable)

// Session is a dedicated DB session on which the leader lock is taken
// (ports.Leadership). A killed session stays dead.
type Session struct {
	s    *Store
	name string
	dead bool
}

var _ ports.Leadership = (*Session)(nil)

// Session returns the live session named name, connecting a new one when
// there is none or the last one was killed (world method).
func (s *Store) Session(name string) *Session {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if ss := s.sessions[name]; ss != nil && !ss.dead {
		return ss
	}
	ss := &Session{s: s, name: name}
	s.sessions[name] = ss
	return ss
}

// KillSession terminates the live session named name, as
// pg_terminate_backend would: its lock is released (recorded as "lost"),
// its leases report contracts.ErrNotLeader and its TryAcquire fails from
// now on (world method).
func (s *Store) KillSession(name string) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	ss := s.sessions[name]
	if ss == nil || ss.dead {
		return
	}
	ss.dead = true
	s.w.Rec.Add(history.Event{At: s.w.Clock.Now(), Kind: history.KindFault, Method: "store.KillSession", Instance: name})
	if s.lockSession == ss {
		holder := s.lockHolder
		s.lockSession, s.lockHolder = nil, ""
		s.w.recordLeader(holder, "lost", s.epoch)
	}
}

// TryAcquire takes the leader lock for holder if no live session holds it;
// each acquisition increments the epoch. On the session already holding
// it, it returns the current lease again.
func (ss *Session) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	return ss.tryAcquire(ctx, ss.name, holder)
}

func (ss *Session) tryAcquire(ctx context.Context, inst, holder string) (ports.Lease, bool, error) {
	s := ss.s
	if err := s.w.gate(ctx, mStoreTryAcquire, inst, "", ""); err != nil {
		s.w.recordCall(inst, mStoreTryAcquire, "", holder, "", err)
		return nil, false, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	switch {
	case ss.dead:
		s.w.recordCall(inst, mStoreTryAcquire, "", holder, "", errSessionTerminated)
		return nil, false, errSessionTerminated
	case s.lockSession == ss:
		return &Lease{ss: ss, inst: inst, holder: s.lockHolder, epoch: s.epoch}, true, nil
	case s.lockSession != nil:
		return nil, false, nil
	}
	s.epoch++
	s.lockSession, s.lockHolder = ss, holder
	s.w.recordLeader(holder, "acquire", s.epoch)
	return &Lease{ss: ss, inst: inst, holder: holder, epoch: s.epoch}, true, nil
}

// Lease is a held leader lock (ports.Lease).
type Lease struct {
	ss     *Session
	inst   string
	holder string
	epoch  int64
}

var _ ports.Lease = (*Lease)(nil)

// Epoch is the fencing epoch of this acquisition.
func (l *Lease) Epoch() int64 { return l.epoch }

// Check returns contracts.ErrNotLeader unless the lock is still held by this
// acquisition.
func (l *Lease) Check(ctx context.Context) error {
	s := l.ss.s
	if err := s.w.gate(ctx, mStoreCheck, l.inst, "", ""); err != nil {
		s.w.recordCall(l.inst, mStoreCheck, "", l.holder, "", err)
		return err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if !l.heldLocked() {
		return fmt.Errorf("lease of epoch %d: %w", l.epoch, contracts.ErrNotLeader)
	}
	return nil
}

// Release gives the lock up; releasing a lock no longer held is a no-op.
func (l *Lease) Release(ctx context.Context) error {
	s := l.ss.s
	if err := s.w.gate(ctx, mStoreRelease, l.inst, "", ""); err != nil {
		s.w.recordCall(l.inst, mStoreRelease, "", l.holder, "", err)
		return err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if l.heldLocked() {
		s.lockSession, s.lockHolder = nil, ""
		s.w.recordLeader(l.holder, "release", l.epoch)
	}
	return nil
}

func (l *Lease) heldLocked() bool {
	s := l.ss.s
	return !l.ss.dead && s.lockSession == l.ss && s.epoch == l.epoch
}

// leadershipView is an instance's connection for the leader lock: it
// reconnects (a fresh session) after finding its session killed.
type leadershipView struct {
	s    *Store
	inst string

	mu  sync.Mutex
	cur *Session
}

func (v *leadershipView) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	v.mu.Lock()
	ss := v.cur
	v.mu.Unlock()
	lease, ok, err := ss.tryAcquire(ctx, v.inst, holder)
	if errors.Is(err, errSessionTerminated) {
		fresh := v.s.Session(v.inst)
		v.mu.Lock()
		v.cur = fresh
		v.mu.Unlock()
	}
	return lease, ok, err
}
