package fakes

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// ErrDuplicateID: Insert of an id that already exists (a primary-key
// violation).
var ErrDuplicateID = errors.New("duplicate workspace id")

// Store is the workspaces table with its leader lock (system_locks) and its
// change feed. It implements ports.Store and ports.ChangeFeed; calls made on
// it directly are attributed to instance "".
//
// The feed carries one ports.Change per inserted row and per applied update
// that changes the value of a column of ports.NotifyColumns (as a trigger
// comparing OLD and NEW would), to the listeners open at that moment.
type Store struct {
	w *World

	rows  map[string]*contracts.Workspace
	order []*contracts.Workspace // the same rows, sorted by id

	epoch      int64
	lockHolder string
	sessions   map[string]*Session
	// advisory are the session-level advisory locks held, by key: the
	// leader lock is LeaderLockKey.
	advisory map[int64]*advisoryHold

	listeners []*listener
	dropFeed  int
}

var (
	_ ports.Store      = (*Store)(nil)
	_ ports.ChangeFeed = (*Store)(nil)
)

// Get returns one row (ports.Store).
func (s *Store) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	return s.get(ctx, "", id)
}

// List returns the rows selected by f, ordered by id (ports.Store).
func (s *Store) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	return s.list(ctx, "", f)
}

// Insert adds a row (ports.Store). A zero created_at or updated_at is
// stamped with the clock.
func (s *Store) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	return s.insert(ctx, "", w, ws)
}

// InsertWithinLimits adds a row under the running-limit guard
// (ports.Store), evaluated under the world's lock.
func (s *Store) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	return s.insertGuarded(ctx, "", w, ws, &l)
}

// Update applies p to row id if cond holds (ports.Store). A missing row is
// contracts.ErrNotFound.
func (s *Store) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	return s.update(ctx, "", w, id, cond, p)
}

// UpdateWithinLimits applies p under cond and the running-limit guard
// (ports.Store), evaluated under the world's lock.
func (s *Store) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
	return s.updateGuarded(ctx, "", w, id, cond, p, &l)
}

// MarkObserved stamps observed_at on rows (ports.Store).
func (s *Store) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	return s.markObserved(ctx, "", w, ids, at)
}

// UpdateMany applies one patch per row (ports.Store). Missing rows are
// skipped like rows whose condition fails.
func (s *Store) UpdateMany(ctx context.Context, w contracts.Writer, updates []ports.RowUpdate) error {
	return s.updateMany(ctx, "", w, updates)
}

// Listen starts a change-feed listener (ports.ChangeFeed).
func (s *Store) Listen(ctx context.Context) (ports.Listener, error) {
	return s.listen(ctx, "")
}

// Snapshot returns deep copies of every row, ordered by id (world method).
func (s *Store) Snapshot() []contracts.Workspace {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	out := make([]contracts.Workspace, len(s.order))
	for i, row := range s.order {
		out[i] = row.Clone()
	}
	return out
}

// Epoch is the current leader epoch: the number of acquisitions so far
// (world method).
func (s *Store) Epoch() int64 {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.epoch
}

// Holder is the holder named by the session holding the leader lock, or ""
// (world method).
func (s *Store) Holder() string {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.lockHolder
}

// DropFeed makes the next n change notifications vanish (world method).
func (s *Store) DropFeed(n int) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	s.dropFeed += n
}

func (s *Store) get(ctx context.Context, inst, id string) (contracts.Workspace, error) {
	if err := s.w.gate(ctx, mStoreGet, inst, id, ""); err != nil {
		s.w.recordCall(inst, mStoreGet, id, "", "", err)
		return contracts.Workspace{}, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	row, ok := s.rows[id]
	if !ok {
		return contracts.Workspace{}, fmt.Errorf("get workspace %s: %w", id, contracts.ErrNotFound)
	}
	return row.Clone(), nil
}

func (s *Store) list(ctx context.Context, inst string, f contracts.Filter) ([]contracts.Workspace, error) {
	if err := s.w.gate(ctx, mStoreList, inst, "", ""); err != nil {
		s.w.recordCall(inst, mStoreList, "", "", "", err)
		return nil, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	var out []contracts.Workspace
	if f == contracts.FilterAll || f == contracts.FilterActive {
		out = make([]contracts.Workspace, 0, len(s.order))
	}
	for _, row := range s.order {
		if f.Match(row) {
			out = append(out, *row)
			detach(&out[len(out)-1])
		}
	}
	return out, nil
}

// detach gives a shallow copy of a row its own copies of the pointer
// columns (Workspace.Clone without copying the struct twice).
func detach(w *contracts.Workspace) {
	if w.HomeCtx != nil {
		h := *w.HomeCtx
		w.HomeCtx = &h
	}
	if w.ErrorInfo != nil {
		e := w.ErrorInfo.Clone()
		w.ErrorInfo = &e
	}
}

// attribute is the instance a write is recorded under: the writer's, else
// the calling view's.
func attribute(w contracts.Writer, inst string) string {
	if w.Instance != "" {
		return w.Instance
	}
	return inst
}

func (s *Store) fenced(w contracts.Writer) bool { return w.Epoch != 0 && w.Epoch != s.epoch }

func (s *Store) insert(ctx context.Context, inst string, w contracts.Writer, ws contracts.Workspace) error {
	return s.insertGuarded(ctx, inst, w, ws, nil)
}

// guardLocked evaluates the running-limit guard l (nil: unguarded) for a
// write of a row of owner with id id, under the world's lock.
func (s *Store) guardLocked(l *contracts.Limits, owner, id string) error {
	if l == nil {
		return nil
	}
	if le := contracts.CheckGuard(*l, owner, id, slices.Values(s.order)); le != nil {
		return le
	}
	return nil
}

// insertGuarded is Insert, and InsertWithinLimits when l is set. A guarded
// insert is recorded like any other (method store.Insert), a rejected one
// with the limit error.
func (s *Store) insertGuarded(ctx context.Context, inst string, w contracts.Writer, ws contracts.Workspace, l *contracts.Limits) error {
	if err := s.w.gate(ctx, mStoreInsert, inst, ws.ID, ""); err != nil {
		s.recordInsert(inst, w, ws.Clone(), err)
		return err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	now := s.w.Clock.Now()
	row := ws.Clone()
	if row.CreatedAt.IsZero() {
		row.CreatedAt = now
	}
	if row.UpdatedAt.IsZero() {
		row.UpdatedAt = now
	}
	var err error
	switch {
	case ws.ID == "":
		err = errors.New("insert workspace: empty id")
	case s.fenced(w):
		err = fmt.Errorf("insert workspace %s: %w", ws.ID, contracts.ErrFenced)
	case s.rows[ws.ID] != nil:
		err = fmt.Errorf("insert workspace %s: %w", ws.ID, ErrDuplicateID)
	}
	if err == nil {
		if cerr := contracts.CheckRow(&row); cerr != nil {
			err = fmt.Errorf("insert workspace %s: %w", ws.ID, cerr)
		}
	}
	if err == nil {
		err = s.guardLocked(l, row.OwnerUserID, row.ID)
	}
	s.recordInsert(inst, w, row.Clone(), err)
	if err != nil {
		return err
	}
	s.rows[row.ID] = &row
	i, _ := slices.BinarySearchFunc(s.order, row.ID, func(r *contracts.Workspace, id string) int { return strings.Compare(r.ID, id) })
	s.order = slices.Insert(s.order, i, &row)
	s.notify(&row, now)
	return nil
}

func (s *Store) recordInsert(inst string, w contracts.Writer, row contracts.Workspace, err error) {
	e := history.Event{
		At: s.w.Clock.Now(), Kind: history.KindInsert, Instance: attribute(w, inst),
		Component: w.Component, Epoch: w.Epoch, Workspace: row.ID, Method: "store.Insert",
		Applied: err == nil, Row: &row,
	}
	if err != nil {
		e.Err = err.Error()
	}
	s.w.Rec.Add(e)
}

func (s *Store) update(ctx context.Context, inst string, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	return s.updateGuarded(ctx, inst, w, id, cond, p, nil)
}

// updateGuarded is Update, and UpdateWithinLimits when l is set.
func (s *Store) updateGuarded(ctx context.Context, inst string, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l *contracts.Limits) (bool, error) {
	if err := s.w.gate(ctx, mStoreUpdate, inst, id, ""); err != nil {
		s.recordWrite(mStoreUpdate, inst, w, id, &cond, &p, false, err)
		return false, err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.applyLocked(mStoreUpdate, inst, w, id, &cond, &p, l, s.w.Clock.Now())
}

func (s *Store) updateMany(ctx context.Context, inst string, w contracts.Writer, updates []ports.RowUpdate) error {
	if err := s.w.gate(ctx, mStoreUpdateMany, inst, "", ""); err != nil {
		for i := range updates {
			u := &updates[i]
			s.recordWrite(mStoreUpdateMany, inst, w, u.ID, &u.Cond, &u.Patch, false, err)
		}
		return err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	now := s.w.Clock.Now()
	// One invalid patch fails the whole call, as one transaction would:
	// check them all before applying any.
	for i := range updates {
		if err := contracts.CheckPatch(&updates[i].Patch); err != nil {
			err = fmt.Errorf("update many (%d rows): workspace %s: %w", len(updates), updates[i].ID, err)
			for j := range updates {
				u := &updates[j]
				s.recordWrite(mStoreUpdateMany, inst, w, u.ID, &u.Cond, &u.Patch, false, err)
			}
			return err
		}
	}
	var fencedErr, firstErr error
	for i := range updates {
		u := &updates[i]
		_, err := s.applyLocked(mStoreUpdateMany, inst, w, u.ID, &u.Cond, &u.Patch, nil, now)
		switch {
		case errors.Is(err, contracts.ErrFenced):
			fencedErr = err
		case errors.Is(err, contracts.ErrInvalidInput) && firstErr == nil:
			firstErr = err
		}
	}
	if fencedErr != nil {
		return fmt.Errorf("update many (%d rows): %w", len(updates), contracts.ErrFenced)
	}
	if firstErr != nil {
		return fmt.Errorf("update many (%d rows): %w", len(updates), firstErr)
	}
	return nil
}

// markObserved stamps observed_at on ids and records the pass: one note
// whose count and time enter the run's hash (the rows are not recorded one
// by one: they are the bulk of a long run and say nothing else).
func (s *Store) markObserved(ctx context.Context, inst string, w contracts.Writer, ids []string, at time.Time) error {
	if err := s.w.gate(ctx, mStoreMarkObserved, inst, "", ""); err != nil {
		s.w.recordCall(inst, mStoreMarkObserved, "", strconv.Itoa(len(ids))+" rows", "", err)
		return err
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	now := s.w.Clock.Now()
	if s.fenced(w) {
		err := fmt.Errorf("mark %d rows observed: %w", len(ids), contracts.ErrFenced)
		s.w.recordCall(attribute(w, inst), mStoreMarkObserved, "", strconv.Itoa(len(ids))+" rows", "", err)
		return err
	}
	n := 0
	for _, id := range ids {
		if row, ok := s.rows[id]; ok {
			row.ObservedAt, row.UpdatedAt = at, now
			n++
		}
	}
	s.w.Rec.CountObservedAt(n)
	s.w.Rec.Add(history.Event{At: now, Kind: history.KindNote, Instance: attribute(w, inst), Component: w.Component, Epoch: w.Epoch,
		Method: "health.pass", Result: strconv.Itoa(n) + " rows observed"})
	return nil
}

// applyLocked runs one update attempt, under the running-limit guard l
// when it is set, and records it.
func (s *Store) applyLocked(m method, inst string, w contracts.Writer, id string, cond *contracts.Cond, p *contracts.Patch, l *contracts.Limits, now time.Time) (bool, error) {
	if s.fenced(w) {
		err := fmt.Errorf("update workspace %s: %w", id, contracts.ErrFenced)
		s.recordWrite(m, inst, w, id, cond, p, false, err)
		return false, err
	}
	if err := contracts.CheckPatch(p); err != nil {
		err = fmt.Errorf("update workspace %s: %w", id, err)
		s.recordWrite(m, inst, w, id, cond, p, false, err)
		return false, err
	}
	row, ok := s.rows[id]
	if !ok {
		err := fmt.Errorf("update workspace %s: %w", id, contracts.ErrNotFound)
		s.recordWrite(m, inst, w, id, cond, p, false, err)
		return false, err
	}
	if !cond.Holds(row) {
		s.recordWrite(m, inst, w, id, cond, p, false, nil)
		return false, nil
	}
	if err := s.guardLocked(l, row.OwnerUserID, id); err != nil {
		s.recordWrite(m, inst, w, id, cond, p, false, err)
		return false, err
	}
	fire := notifies(row, p)
	p.Apply(row, now)
	s.recordWrite(m, inst, w, id, cond, p, true, nil)
	if fire {
		s.notify(row, now)
	}
	return true, nil
}

func (s *Store) recordWrite(m method, inst string, w contracts.Writer, id string, cond *contracts.Cond, p *contracts.Patch, applied bool, err error) {
	e := history.Event{
		At: s.w.Clock.Now(), Kind: history.KindWrite, Instance: attribute(w, inst),
		Component: w.Component, Epoch: w.Epoch, Workspace: id, Method: methods[m].full,
		Patch: p, Cond: cond, Applied: applied,
	}
	if w.OnBehalf != "" {
		e.Args = "on behalf of " + string(w.OnBehalf)
	}
	if !onlyObservedAt(p) {
		// The recorder keeps this event: give it copies. (A write of
		// observed_at alone is folded into the hash during Add and never
		// kept, so the caller's values can be lent; it is the bulk of the
		// HealthMonitor's writes.)
		cc := *cond
		e.Patch, e.Cond = copyPatch(p), &cc
	}
	if err != nil {
		e.Err = err.Error()
	}
	s.w.Rec.Add(e)
}

// onlyObservedAt reports whether p sets observed_at and nothing else (the
// writes history.Recorder folds but does not keep), without allocating.
func onlyObservedAt(p *contracts.Patch) bool { return p.Mask() == contracts.MaskObservedAt }

// copyPatch deep-copies p (its pointer values too).
func copyPatch(p *contracts.Patch) *contracts.Patch {
	c := *p
	if c.HomeCtx.V != nil {
		h := *c.HomeCtx.V
		c.HomeCtx.V = &h
	}
	if c.ErrorInfo.V != nil {
		e := c.ErrorInfo.V.Clone()
		c.ErrorInfo.V = &e
	}
	return &c
}

// notifies reports whether applying p to row changes a column of
// ports.NotifyColumns (the trigger fires on a change of value, SPEC 4.6).
func notifies(row *contracts.Workspace, p *contracts.Patch) bool {
	return p.ObservedStatus.Set && p.ObservedStatus.V != row.ObservedStatus ||
		p.HealthStatus.Set && p.HealthStatus.V != row.HealthStatus ||
		p.Operation.Set && p.Operation.V != row.Operation ||
		p.DesiredState.Set && p.DesiredState.V != row.DesiredState ||
		p.DeletedAt.Set && !p.DeletedAt.V.Equal(row.DeletedAt) ||
		p.ErrorInfo.Set && !sameErrorInfo(p.ErrorInfo.V, row.ErrorInfo)
}

func sameErrorInfo(a, b *contracts.ErrorInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Reason == b.Reason && a.Message == b.Message && a.IsTerminal == b.IsTerminal &&
		a.Operation == b.Operation && a.ErrorCount == b.ErrorCount && a.OccurredAt.Equal(b.OccurredAt) &&
		(len(a.Context) == 0 && len(b.Context) == 0 || reflect.DeepEqual(a.Context, b.Context))
}

// notify delivers the change of row to every listener (under the lock).
func (s *Store) notify(row *contracts.Workspace, now time.Time) {
	if s.dropFeed > 0 {
		s.dropFeed--
		s.w.droppedChanges.Add(1)
		return
	}
	if len(s.listeners) == 0 {
		return
	}
	c := ports.ChangeOf(row, now)
	for _, l := range s.listeners {
		l.queue = append(l.queue, c)
		l.signal()
	}
}
