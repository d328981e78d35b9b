package workspace

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// counting are the rows that count toward the running limits
	// (contracts.CountsRunning), sorted by id: the guard of a guarded
	// write reads them instead of the whole table. Every change of a row
	// goes through insertGuarded or applyLocked, which keep it; see
	// CheckIndex. countingBy holds the same rows by owner (owner_user_id
	// never changes).
	counting   []*contracts.Workspace
	countingBy map[string][]*contracts.Workspace
	// targets are the rows contracts.FilterReconcile selects, sorted by
	// id, kept like counting: the reconciler lists them every pass.
	targets []*contracts.Workspace
	// scattered counts the rows inserted since the rows were last laid out
	// contiguously in id order (compactLocked).
	scattered int

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

// Scan passes the rows selected by f to fn, ordered by id (ports.Store).
func (s *Store) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	return s.scan(ctx, "", f, fn)
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
	from := s.order
	switch f {
	case contracts.FilterAll, contracts.FilterActive:
		out = make([]contracts.Workspace, 0, len(s.order))
	case contracts.FilterReconcile:
		from = s.targets // indexed: the reconciler lists them every pass
		out = make([]contracts.Workspace, 0, len(s.targets))
	}
	for _, row := range from {
		if f.Match(row) {
			out = append(out, *row)
			detach(&out[len(out)-1])
		}
	}
	return out, nil
}

// scan passes each row selected by f to fn, in id order (ports.Store.Scan).
// Rows are copied a page at a time under the world's lock, their pointer
// columns included, into a page reused from scan to scan; fn runs outside
// the lock, so fn calling the store slows nothing but cannot deadlock, and
// a pass over the fleet allocates nothing per row but a row's error_info
// context.
func (s *Store) scan(ctx context.Context, inst string, f contracts.Filter, fn func(*contracts.Workspace)) error {
	if err := s.w.gate(ctx, mStoreList, inst, "", ""); err != nil {
		s.w.recordCall(inst, mStoreList, "", "", "", err)
		return err
	}
	pg := scanPages.Get().(*scanPage)
	defer scanPages.Put(pg)
	var last string
	for i := 0; ; {
		n := 0
		s.w.mu.Lock()
		if i > 0 && (i > len(s.order) || s.order[i-1].ID != last) {
			// The table changed while fn ran: go on after the last row seen.
			i, _ = slices.BinarySearchFunc(s.order, last, func(r *contracts.Workspace, id string) int {
				if r.ID <= id {
					return -1
				}
				return 1
			})
		}
		for ; i < len(s.order) && n < len(pg.rows); i++ {
			if r := s.order[i]; f.Match(r) {
				pg.copyRow(n, r)
				n++
			}
		}
		s.w.mu.Unlock()
		if n == 0 {
			return nil
		}
		last = pg.rows[n-1].ID
		for k := range n {
			fn(&pg.rows[k])
		}
	}
}

// scanPage is a page of rows a scan lends to its reader, with room for
// their pointer columns. Sixteen rows (7 KB) stay in a core's first-level
// data cache beside the table rows being read, between the copy and fn:
// cachegrind counts 40 % fewer first-level misses for a health pass than
// with pages of 64 (29 KB).
type scanPage struct {
	rows  [16]contracts.Workspace
	homes [16]contracts.HomeCtx
	infos [16]contracts.ErrorInfo
}

var scanPages = sync.Pool{New: func() any { return new(scanPage) }}

// copyRow copies r into slot k, pointer columns included.
func (pg *scanPage) copyRow(k int, r *contracts.Workspace) {
	pg.rows[k] = *r
	if r.HomeCtx != nil {
		pg.homes[k] = *r.HomeCtx
		pg.rows[k].HomeCtx = &pg.homes[k]
	}
	if r.ErrorInfo != nil {
		pg.infos[k] = r.ErrorInfo.Clone()
		pg.rows[k].ErrorInfo = &pg.infos[k]
	}
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

// compactLocked lays every row out in one block in id order and repoints
// the indexes: a pass over the table (every scan, every MarkObserved)
// then reads memory in order instead of rows allocated one by one in
// creation order, which is what a large fleet's passes spent their time
// waiting for. The rows' home_ctx values go into a block of their own,
// in the same order. Nothing outside the store holds a pointer to a row
// or to its home_ctx.
func (s *Store) compactLocked() {
	slab := make([]contracts.Workspace, len(s.order))
	homes := make([]contracts.HomeCtx, len(s.order))
	moved := make(map[*contracts.Workspace]*contracts.Workspace, len(s.order))
	for i, r := range s.order {
		slab[i] = *r
		if r.HomeCtx != nil {
			homes[i] = *r.HomeCtx
			slab[i].HomeCtx = &homes[i]
		}
		moved[r] = &slab[i]
		s.order[i] = &slab[i]
		s.rows[r.ID] = &slab[i]
	}
	for i, r := range s.counting {
		s.counting[i] = moved[r]
	}
	for i, r := range s.targets {
		s.targets[i] = moved[r]
	}
	for _, rows := range s.countingBy {
		for i, r := range rows {
			rows[i] = moved[r]
		}
	}
	s.w.internLocked(s.order)
	s.scattered = 0
}

// indexed is what the indexes said of a row before a write.
type indexed struct{ counted, target bool }

func indexOf(row *contracts.Workspace) indexed {
	return indexed{contracts.CountsRunning(row), contracts.FilterReconcile.Match(row)}
}

// reindex keeps the indexes after a write of row, of which was is what
// they said before it.
func (s *Store) reindex(row *contracts.Workspace, was indexed) {
	if target := contracts.FilterReconcile.Match(row); target != was.target {
		s.targets = setIn(s.targets, row, target)
	}
	s.recount(row, was.counted)
}

// recount keeps s.counting after a write of row, which counted toward the
// limits before it when counted.
func (s *Store) recount(row *contracts.Workspace, counted bool) {
	if counts := contracts.CountsRunning(row); counts != counted {
		s.counting = setIn(s.counting, row, counts)
		if s.countingBy == nil {
			s.countingBy = map[string][]*contracts.Workspace{}
		}
		s.countingBy[row.OwnerUserID] = setIn(s.countingBy[row.OwnerUserID], row, counts)
	}
}

// setIn adds row to (in) or removes it from rows, sorted by id.
func setIn(rows []*contracts.Workspace, row *contracts.Workspace, in bool) []*contracts.Workspace {
	i, found := slices.BinarySearchFunc(rows, row.ID, byID)
	switch {
	case in && !found:
		return slices.Insert(rows, i, row)
	case !in && found:
		return slices.Delete(rows, i, i+1)
	}
	return rows
}

func byID(r *contracts.Workspace, id string) int { return strings.Compare(r.ID, id) }

// CheckIndex reports whether the store's index of the rows that count
// toward the limits agrees with the rows (world method: the simulator
// checks it after every run, so a change of a row that bypasses the index
// cannot go unnoticed).
func (s *Store) CheckIndex() error {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	var want, targets []*contracts.Workspace
	byOwner := map[string][]*contracts.Workspace{}
	for _, row := range s.order {
		if contracts.FilterReconcile.Match(row) {
			targets = append(targets, row)
		}
		if contracts.CountsRunning(row) {
			want = append(want, row)
			byOwner[row.OwnerUserID] = append(byOwner[row.OwnerUserID], row)
		}
	}
	if !slices.Equal(targets, s.targets) {
		return fmt.Errorf("fake store: %d rows are reconcile targets, the index lists %d (or others)", len(targets), len(s.targets))
	}
	if !slices.Equal(want, s.counting) {
		return fmt.Errorf("fake store: %d rows count toward the limits, the index lists %d (or others)", len(want), len(s.counting))
	}
	indexed := 0
	for _, rows := range s.countingBy {
		indexed += len(rows)
	}
	for _, row := range want { // in id order: the same message every time
		if owner := row.OwnerUserID; !slices.Equal(s.countingBy[owner], byOwner[owner]) {
			return fmt.Errorf("fake store: the limits index of owner %s lists %d rows, %d count", owner, len(s.countingBy[owner]), len(byOwner[owner]))
		}
	}
	if indexed != len(want) {
		return fmt.Errorf("fake store: the limits index by owner lists %d rows, %d count", indexed, len(want))
	}
	return nil
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
	// contracts.CheckGuard over the indexed rows: the others that count,
	// the owner's in id order.
	all := len(s.counting)
	if _, found := slices.BinarySearchFunc(s.counting, id, byID); found {
		all--
	}
	var mine []string
	for _, r := range s.countingBy[owner] {
		if r.ID != id {
			mine = append(mine, r.ID)
		}
	}
	if le := contracts.CheckLimits(*l, mine, all); le != nil {
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
	s.reindex(&row, indexed{})
	s.notify(&row, now)
	if s.scattered++; s.scattered > 32+len(s.order)/16 {
		s.compactLocked()
	}
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
	// ids usually come in id order, as a scan passed them: walk the table
	// beside them instead of looking each up.
	j := 0
	for _, id := range ids {
		var row *contracts.Workspace
		c := 1
		if j < len(s.order) && s.order[j].ID == id {
			c = 0 // the next row: the common case
		}
		for ; c != 0 && j < len(s.order); j++ {
			if c = strings.Compare(s.order[j].ID, id); c >= 0 {
				break
			}
		}
		if c == 0 {
			row = s.order[j]
			j++
		} else {
			row = s.rows[id] // out of order, or no such row
		}
		if row != nil {
			row.ObservedAt, row.UpdatedAt = at, now
			n++
		}
	}
	s.w.Rec.CountObservedAt(n)
	s.w.Rec.Add(history.Event{At: now, Kind: history.KindNote, Instance: attribute(w, inst), Component: w.Component, Epoch: w.Epoch,
		Method: "health.pass", Args: "observed_at=" + at.UTC().Format(time.RFC3339Nano), Result: strconv.Itoa(n) + " rows observed"})
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
	was := indexOf(row)
	home := row.HomeCtx
	p.Apply(row, now)
	if home != nil && row.HomeCtx != nil && row.HomeCtx != home {
		// The row keeps its home_ctx where compaction laid it out.
		*home = *row.HomeCtx
		row.HomeCtx = home
	}
	s.reindex(row, was)
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
	e.Args = history.OnBehalfArgs(w)
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
