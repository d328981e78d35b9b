package contracttest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// StoreTarget is a fresh, empty workspaces table with its leader lock and
// its change feed.
type StoreTarget struct {
	Store ports.Store
	Feed  ports.ChangeFeed
	// Clock is the clock the store stamps updated_at with. Its readings
	// should have microsecond precision (what PostgreSQL keeps).
	Clock ports.Clock
	// Advance moves Clock forward by d (nil: the clock moves on its own).
	Advance func(t *testing.T, d time.Duration)
	// NewSession opens a new leader-election session (its own DB
	// connection), closed when t ends.
	NewSession func(t *testing.T) ports.Leadership
	// KillSession ends, from outside, the session that acquired lease (as
	// pg_terminate_backend would).
	KillSession func(t *testing.T, session ports.Leadership, lease ports.Lease)
	// Wait bounds the wait for a notification or for a killed session to
	// be noticed (zero: DefaultWait).
	Wait time.Duration
}

// Writers the suite writes with (epoch 0: never fenced).
var (
	apiWriter    = contracts.Writer{Component: contracts.CompAPI}
	healthWriter = contracts.Writer{Component: contracts.CompHealthMonitor}
)

func reconcilerAt(epoch int64) contracts.Writer {
	return contracts.Writer{Component: contracts.CompStateReconciler, Instance: "contracttest", Epoch: epoch}
}

// Store runs the ports.Store suite, with the leadership and change-feed
// behaviour of the same store.
func Store(t *testing.T, newStore func(t *testing.T) StoreTarget) {
	t.Run("InsertGetRoundTrip", func(t *testing.T) { storeRoundTrip(t, newStore(t)) })
	t.Run("GetMissingIsNotFound", func(t *testing.T) { storeMissing(t, newStore(t)) })
	t.Run("ListMatchesFilter", func(t *testing.T) { storeList(t, newStore(t)) })
	t.Run("UpdateEveryColumn", func(t *testing.T) { storeUpdateEveryColumn(t, newStore(t)) })
	t.Run("UpdateCAS", func(t *testing.T) { storeCAS(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { storeConcurrentClaims(t, newStore(t)) })
	t.Run("ConcurrentRecoveries", func(t *testing.T) { storeConcurrentRecoveries(t, newStore(t)) })
	t.Run("UpdateMany", func(t *testing.T) { storeUpdateMany(t, newStore(t)) })
	t.Run("MarkObserved", func(t *testing.T) { storeMarkObserved(t, newStore(t)) })
	t.Run("Fencing", func(t *testing.T) { storeFencing(t, newStore(t)) })
	t.Run("Leadership", func(t *testing.T) { storeLeadership(t, newStore(t)) })
	t.Run("ChangeFeed", func(t *testing.T) { storeFeed(t, newStore(t)) })
	t.Run("InputEdgeCases", func(t *testing.T) { storeInput(t, newStore(t)) })
	t.Run("LimitGuard", func(t *testing.T) { storeLimitGuard(t, newStore(t)) })
	t.Run("LimitGuardConcurrency", func(t *testing.T) { storeLimitConcurrency(t, newStore(t)) })
}

// tick lets a second pass, so that the next write's updated_at differs
// from the last one's.
func (x StoreTarget) tick(t *testing.T) {
	t.Helper()
	if x.Advance != nil {
		x.Advance(t, time.Second)
	}
}

// now is the store clock's reading at microsecond precision.
func (x StoreTarget) now() time.Time { return normTime(x.Clock.Now()) }

func (x StoreTarget) insert(t *testing.T, w contracts.Workspace) {
	t.Helper()
	require.NoError(t, x.Store.Insert(t.Context(), apiWriter, w), "insert %s", w.ID)
}

func (x StoreTarget) get(t *testing.T, id string) contracts.Workspace {
	t.Helper()
	w, err := x.Store.Get(t.Context(), id)
	require.NoError(t, err, "get %s", id)
	return w
}

// requireRow asserts that row id equals want, compared as the database
// would keep it (see normalize).
func (x StoreTarget) requireRow(t *testing.T, want contracts.Workspace, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, normalize(want), normalize(x.get(t, want.ID)), msgAndArgs...)
}

// normalize puts a row in the form a round trip through PostgreSQL keeps:
// times in UTC at microsecond precision without monotonic readings, and
// error_info.context as decoded JSON (numbers as float64).
func normalize(w contracts.Workspace) contracts.Workspace {
	w = w.Clone()
	for _, p := range []*time.Time{&w.ObservedAt, &w.OpStartedAt, &w.DeletedAt, &w.LastAccessAt, &w.CreatedAt, &w.UpdatedAt} {
		*p = normTime(*p)
	}
	if w.ErrorInfo != nil {
		w.ErrorInfo.OccurredAt = normTime(w.ErrorInfo.OccurredAt)
		w.ErrorInfo.Context = normJSON(w.ErrorInfo.Context)
	}
	return w
}

func normalizeAll(ws []contracts.Workspace) []contracts.Workspace {
	out := make([]contracts.Workspace, len(ws))
	for i, w := range ws {
		out[i] = normalize(w)
	}
	return out
}

func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(time.Microsecond).UTC()
}

func normJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("contracttest: error_info.context is not JSON: %v", err))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("contracttest: error_info.context: %v", err))
	}
	return out
}

// uuidFrom draws a UUIDv4 string from r (ids must be UUIDs: the id
// column is uuid).
func uuidFrom(r *rand.Rand) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r.Uint64())
	binary.BigEndian.PutUint64(b[8:], r.Uint64())
	return uuid.Must(uuid.NewRandomFromReader(bytes.NewReader(b[:]))).String()
}

// fullRow is a row with every nullable column set to a non-null value and
// every other column away from its default.
func fullRow(r *rand.Rand, base time.Time) contracts.Workspace {
	id, op := uuidFrom(r), uuidFrom(r)
	key := contracts.ArchiveKey(id, op)
	return contracts.Workspace{
		ID:              id,
		OwnerUserID:     uuidFrom(r),
		Name:            "full row ü",
		Description:     "a description with 'quotes' and \"double quotes\"",
		Memo:            "memo\nwith a newline",
		ImageRef:        "registry.local/workspace:1.2.3",
		InstanceBackend: contracts.InstanceK8s,
		StorageBackend:  contracts.StorageMinio,
		HomeStoreKey:    "custom-home-key",
		HomeCtx:         &contracts.HomeCtx{RestoreMarker: key},
		ObservedStatus:  contracts.ObservedStandby,
		HealthStatus:    contracts.HealthError,
		ObservedAt:      base.Add(-1 * time.Minute),
		Operation:       contracts.OpArchiving,
		OpStartedAt:     base.Add(-2 * time.Minute),
		OpID:            op,
		ArchiveKey:      key,
		ErrorCount:      2,
		ErrorInfo: &contracts.ErrorInfo{
			Reason:     contracts.ReasonActionFailed,
			Message:    "archive job exited 1",
			Operation:  contracts.OpArchiving,
			ErrorCount: 2,
			Context: map[string]any{
				"action":    "archive",
				"exit_code": 1,
				"ratio":     0.5,
				"retry":     true,
				"nested":    map[string]any{"list": []any{"x", 2.0, nil}},
			},
			OccurredAt: base.Add(-3 * time.Minute),
		},
		ErrorMessage:      "archive job exited 1",
		PreviousStatus:    contracts.ObservedRunning,
		DesiredState:      contracts.DesiredPending,
		DeletedAt:         base.Add(-4 * time.Minute),
		StandbyTTLSeconds: 60,
		ArchiveTTLSeconds: 3600,
		LastAccessAt:      base.Add(-5 * time.Minute),
		CreatedAt:         base.Add(-time.Hour),
		UpdatedAt:         base.Add(-30 * time.Minute),
	}
}

func storeRoundTrip(t *testing.T, x StoreTarget) {
	r := rand.New(rand.NewPCG(1, 2))
	now := x.now()
	full := fullRow(r, now)
	x.insert(t, full)
	x.requireRow(t, full, "every column set")

	// Every nullable column null, the rest at their defaults; created_at
	// and updated_at zero: stamped with the clock.
	nulls := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "nulls", "img:1", time.Time{})
	x.insert(t, nulls)
	want := nulls
	want.CreatedAt, want.UpdatedAt = now, now
	x.requireRow(t, want, "every nullable column null")

	// A terminal error without context.
	term := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "terminal", "img:1", now)
	term.HealthStatus = contracts.HealthError
	term.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, Message: "checksum mismatch", IsTerminal: true,
		Operation: contracts.OpRestoring, ErrorCount: 1, OccurredAt: now}
	term.ErrorMessage = term.ErrorInfo.Message
	term.HomeCtx = &contracts.HomeCtx{}
	x.insert(t, term)
	x.requireRow(t, term, "terminal error_info, empty home_ctx")

	// Rows are values: changing what Get returned changes nothing stored.
	got := x.get(t, full.ID)
	got.HomeCtx.RestoreMarker = "changed"
	got.ErrorInfo.Context["action"] = "changed"
	got.ErrorInfo.Message = "changed"
	x.requireRow(t, full, "after changing a row Get returned")

	// A duplicate id is refused and changes nothing.
	dup := contracts.NewWorkspace(full.ID, uuidFrom(r), "duplicate", "img:2", now)
	require.Error(t, x.Store.Insert(t.Context(), apiWriter, dup), "duplicate id")
	x.requireRow(t, full, "after a refused duplicate insert")
}

func storeMissing(t *testing.T, x StoreTarget) {
	r := rand.New(rand.NewPCG(3, 4))
	ctx := t.Context()
	missing := uuidFrom(r)
	_, err := x.Store.Get(ctx, missing)
	require.ErrorIs(t, err, contracts.ErrNotFound)
	applied, err := x.Store.Update(ctx, apiWriter, missing, contracts.Cond{}, contracts.Patch{Memo: contracts.Some("x")})
	require.ErrorIs(t, err, contracts.ErrNotFound, "Update of a missing row")
	require.False(t, applied)
	rows, err := x.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	require.Empty(t, rows, "nothing was created")
}

// variedRows draws n rows over every combination that matters to the
// filters: statuses, health, operation, desired state, soft delete,
// error_info (none, retried, terminal) and two owners.
func variedRows(r *rand.Rand, n int, now time.Time) []contracts.Workspace {
	owners := []string{uuidFrom(r), uuidFrom(r)}
	rows := make([]contracts.Workspace, 0, n)
	for i := range n {
		w := contracts.NewWorkspace(uuidFrom(r), owners[r.IntN(2)], fmt.Sprintf("row %d", i), "img:1", now.Add(-time.Duration(i)*time.Second))
		w.ObservedStatus = contracts.AllObserved[r.IntN(len(contracts.AllObserved))]
		if r.IntN(3) == 0 {
			w.HealthStatus = contracts.HealthError
		}
		if r.IntN(2) == 0 {
			w.Operation = contracts.AllOperations[1+r.IntN(len(contracts.AllOperations)-1)]
			w.OpStartedAt = now.Add(-time.Minute)
			w.OpID = uuidFrom(r)
		}
		w.DesiredState = contracts.AllDesired[r.IntN(len(contracts.AllDesired))]
		if r.IntN(4) == 0 {
			w.DeletedAt = now.Add(-time.Hour)
		}
		switch r.IntN(4) {
		case 0:
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonUnreachable, Message: "docker down",
				Operation: contracts.OpStarting, ErrorCount: 1, OccurredAt: now}
		case 1:
			w.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "timed out", IsTerminal: true,
				Operation: contracts.OpArchiving, ErrorCount: 3, OccurredAt: now}
		}
		if w.ErrorInfo != nil {
			w.ErrorMessage, w.ErrorCount = w.ErrorInfo.Message, w.ErrorInfo.ErrorCount
		}
		if r.IntN(3) == 0 {
			w.ArchiveKey = contracts.ArchiveKey(w.ID, uuidFrom(r))
		}
		if r.IntN(2) == 0 {
			w.LastAccessAt = now.Add(-time.Duration(r.IntN(1000)) * time.Second)
		}
		rows = append(rows, w)
	}
	return rows
}

var allFilters = []contracts.Filter{
	contracts.FilterAll, contracts.FilterActive, contracts.FilterReconcile, contracts.FilterTTL, contracts.FilterRunning,
}

func storeList(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	for _, f := range allFilters {
		rows, err := x.Store.List(ctx, f)
		require.NoError(t, err)
		require.Empty(t, rows, "filter %d of an empty table", f)
	}

	r := rand.New(rand.NewPCG(5, 6))
	rows := variedRows(r, 120, x.now())
	for _, w := range rows { // inserted in random id order
		x.insert(t, w)
	}
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(a, b contracts.Workspace) int { return strings.Compare(a.ID, b.ID) })
	for _, f := range allFilters {
		var want []contracts.Workspace
		for i := range sorted {
			if f.Match(&sorted[i]) {
				want = append(want, sorted[i])
			}
		}
		if f != contracts.FilterAll {
			require.NotEmpty(t, want, "filter %d selects some of the varied rows", f)
			require.Less(t, len(want), len(rows), "filter %d leaves some of the varied rows out", f)
		}
		got, err := x.Store.List(ctx, f)
		require.NoError(t, err, "filter %d", f)
		require.Equal(t, idsOf(want), idsOf(got), "filter %d: the rows Filter.Match selects, ordered by id", f)
		require.Equal(t, normalizeAll(want), normalizeAll(got), "filter %d: whole rows", f)
		var scanned []contracts.Workspace
		require.NoError(t, x.Store.Scan(ctx, f, func(w *contracts.Workspace) { scanned = append(scanned, w.Clone()) }), "scan, filter %d", f)
		require.Equal(t, normalizeAll(want), normalizeAll(scanned), "filter %d: Scan passes what List returns, in order", f)
	}
}

func idsOf(ws []contracts.Workspace) []string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return ids
}

func storeUpdateEveryColumn(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(7, 8))
	now := x.now()
	row := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "before", "img:1", now)
	x.insert(t, row)

	x.tick(t)
	now = x.now()
	set := fullRow(r, now)
	set.ErrorInfo.IsTerminal = true
	p := contracts.Patch{
		Name:              contracts.Some(set.Name),
		Description:       contracts.Some(set.Description),
		Memo:              contracts.Some(set.Memo),
		HomeCtx:           contracts.Some(set.HomeCtx),
		ObservedStatus:    contracts.Some(contracts.ObservedRunning),
		HealthStatus:      contracts.Some(contracts.HealthError),
		ObservedAt:        contracts.Some(set.ObservedAt),
		Operation:         contracts.Some(contracts.OpRestoring),
		OpStartedAt:       contracts.Some(set.OpStartedAt),
		OpID:              contracts.Some(set.OpID),
		ArchiveKey:        contracts.Some(set.ArchiveKey),
		ErrorCount:        contracts.Some(7),
		ErrorInfo:         contracts.Some(set.ErrorInfo),
		ErrorMessage:      contracts.Some(set.ErrorMessage),
		PreviousStatus:    contracts.Some(contracts.ObservedStandby),
		DesiredState:      contracts.Some(contracts.DesiredStandby),
		DeletedAt:         contracts.Some(set.DeletedAt),
		StandbyTTLSeconds: contracts.Some(1),
		ArchiveTTLSeconds: contracts.Some(2),
		LastAccessAt:      contracts.Some(set.LastAccessAt),
	}
	require.Len(t, p.Columns(), 20, "the patch sets every updatable column")
	applied, err := x.Store.Update(ctx, apiWriter, row.ID, contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, applied)
	want := row.Clone()
	p.Apply(&want, now)
	x.requireRow(t, want, "every column set by a patch; updated_at stamped")

	// The caller's patch values are not aliased by the store.
	set.HomeCtx.RestoreMarker = "changed"
	set.ErrorInfo.Context["action"] = "changed"
	x.requireRow(t, want, "after changing the patch's pointers")

	x.tick(t)
	now = x.now()
	null := contracts.Patch{
		Description:    contracts.Some(""),
		Memo:           contracts.Some(""),
		HomeCtx:        contracts.Some[*contracts.HomeCtx](nil),
		ObservedAt:     contracts.Some(time.Time{}),
		OpStartedAt:    contracts.Some(time.Time{}),
		OpID:           contracts.Some(""),
		ArchiveKey:     contracts.Some(""),
		ErrorInfo:      contracts.Some[*contracts.ErrorInfo](nil),
		ErrorMessage:   contracts.Some(""),
		PreviousStatus: contracts.Some(contracts.ObservedStatus("")),
		DeletedAt:      contracts.Some(time.Time{}),
		LastAccessAt:   contracts.Some(time.Time{}),
	}
	applied, err = x.Store.Update(ctx, apiWriter, row.ID, contracts.Cond{}, null)
	require.NoError(t, err)
	require.True(t, applied)
	null.Apply(&want, now)
	x.requireRow(t, want, "every nullable column set back to null")
	require.Nil(t, x.get(t, row.ID).HomeCtx)
	require.Nil(t, x.get(t, row.ID).ErrorInfo)
}

func storeCAS(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(9, 10))
	now := x.now()
	idle := contracts.NewWorkspace("", uuidFrom(r), "idle", "img:1", now)
	busy := idle
	busy.Name = "busy, retried error, deleted"
	busy.Operation, busy.OpStartedAt, busy.OpID = contracts.OpArchiving, now, uuidFrom(r)
	busy.DesiredState = contracts.DesiredPending
	busy.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Message: "m", Operation: contracts.OpArchiving, ErrorCount: 1, OccurredAt: now}
	busy.DeletedAt = now
	stuck := idle
	stuck.Name = "terminal error"
	stuck.DesiredState = contracts.DesiredStandby
	stuck.HealthStatus = contracts.HealthError
	stuck.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "t", IsTerminal: true, Operation: contracts.OpStopping, ErrorCount: 1, OccurredAt: now}
	shapes := []contracts.Workspace{idle, busy, stuck}

	conds := []contracts.Cond{
		{},
		{Operation: contracts.Some(contracts.OpNone)},
		{Operation: contracts.Some(contracts.OpArchiving)},
		{DesiredState: contracts.Some(contracts.DesiredRunning)},
		{DesiredState: contracts.Some(contracts.DesiredPending)},
		{NotTerminal: true},
		{NotDeleted: true},
		{ErrorInfoNull: true},
		{Terminal: true},
		{Operation: contracts.Some(contracts.OpNone), DesiredState: contracts.Some(contracts.DesiredRunning),
			NotTerminal: true, NotDeleted: true, ErrorInfoNull: true},
		{Operation: contracts.Some(contracts.OpNone), DesiredState: contracts.Some(contracts.DesiredStandby)},
	}
	x.tick(t)
	for ci, c := range conds {
		held, failed := 0, 0
		for _, shape := range shapes {
			row := shape.Clone()
			row.ID = uuidFrom(r)
			x.insert(t, row)
			x.tick(t)
			p := contracts.Patch{Memo: contracts.Some(fmt.Sprintf("cond %d", ci)), Operation: contracts.Some(contracts.OpStarting)}
			applied, err := x.Store.Update(ctx, reconcilerAt(0), row.ID, c, p)
			require.NoError(t, err, "cond %d on %q", ci, row.Name)
			want := row.Clone()
			if c.Holds(&row) {
				held++
				require.True(t, applied, "cond %d holds on %q", ci, row.Name)
				p.Apply(&want, x.now())
			} else {
				failed++
				require.False(t, applied, "cond %d fails on %q", ci, row.Name)
			}
			x.requireRow(t, want, "cond %d on %q: applied=%v", ci, row.Name, applied)
		}
		require.NotZero(t, held, "cond %d holds on some shape", ci)
		if ci > 0 {
			require.NotZero(t, failed, "cond %d fails on some shape", ci)
		}
	}
}

func storeUpdateMany(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(11, 12))
	now := x.now()
	rows := make([]contracts.Workspace, 4)
	for i := range rows {
		rows[i] = contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), fmt.Sprintf("row %d", i), "img:1", now)
		x.insert(t, rows[i])
	}
	require.NoError(t, x.Store.UpdateMany(ctx, healthWriter, nil), "no updates")

	x.tick(t)
	now = x.now()
	err := errInfo(now)
	updates := []ports.RowUpdate{
		{ID: rows[0].ID, Cond: contracts.Cond{Operation: contracts.Some(contracts.OpNone)},
			Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning), ObservedAt: contracts.Some(now)}},
		{ID: rows[1].ID, Cond: contracts.Cond{Operation: contracts.Some(contracts.OpDeleting)},
			Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedDeleted)}},
		{ID: uuidFrom(r), Cond: contracts.Cond{}, Patch: contracts.Patch{ObservedAt: contracts.Some(now)}},
		{ID: rows[2].ID, Cond: contracts.Cond{ErrorInfoNull: true},
			Patch: contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError), ErrorInfo: contracts.Some(&err), ObservedAt: contracts.Some(now)}},
	}
	require.NoError(t, x.Store.UpdateMany(ctx, healthWriter, updates), "a failing cond and a missing row are skipped")

	want := make([]contracts.Workspace, len(rows))
	for i := range rows {
		want[i] = rows[i].Clone()
	}
	updates[0].Patch.Apply(&want[0], now)
	updates[3].Patch.Apply(&want[2], now)
	for i := range want {
		x.requireRow(t, want[i], "row %d", i)
	}
	all, errList := x.Store.List(ctx, contracts.FilterAll)
	require.NoError(t, errList)
	require.Len(t, all, len(rows), "the missing row was not created")
}

func errInfo(now time.Time) contracts.ErrorInfo {
	return contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "container without volume", IsTerminal: true,
		Operation: contracts.OpNone, Context: map[string]any{"violation": contracts.ViolationContainerWithoutVolume}, OccurredAt: now}
}

func storeMarkObserved(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(13, 14))
	now := x.now()
	rows := make([]contracts.Workspace, 3)
	for i := range rows {
		rows[i] = contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), fmt.Sprintf("row %d", i), "img:1", now)
		rows[i].ObservedAt = now.Add(-time.Hour)
		x.insert(t, rows[i])
	}
	require.NoError(t, x.Store.MarkObserved(ctx, healthWriter, nil, now), "no rows")

	x.tick(t)
	now = x.now()
	at := now.Add(-time.Second)
	require.NoError(t, x.Store.MarkObserved(ctx, healthWriter, []string{rows[2].ID, uuidFrom(r), rows[0].ID}, at))
	for _, i := range []int{0, 2} {
		want := rows[i].Clone()
		want.ObservedAt, want.UpdatedAt = at, now
		x.requireRow(t, want, "row %d observed", i)
	}
	x.requireRow(t, rows[1], "row 1 not listed")
}

// storeConcurrentRecoveries races administrators' recoveries of one row in
// ERROR (SPEC 4.3): each is conditioned on a terminal error_info in the
// same statement, so exactly one resets the row; the others find it
// recovered and apply nothing, even when the HealthMonitor has meanwhile
// recorded a new, retryable error.
func storeConcurrentRecoveries(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(23, 24))
	now := x.now()
	row := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "in error", "img:1", now)
	row.HealthStatus = contracts.HealthError
	row.ErrorCount = 3
	row.ErrorMessage = "t"
	row.ErrorInfo = &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "t", IsTerminal: true,
		Operation: contracts.OpStopping, ErrorCount: 3, OccurredAt: now}
	x.insert(t, row)
	x.tick(t)
	const admins = 8
	applied := make([]bool, admins)
	errs := make([]error, admins)
	admin := contracts.Writer{Component: contracts.CompAdmin}
	var wg sync.WaitGroup
	for i := range admins {
		wg.Go(func() {
			applied[i], errs[i] = x.Store.Update(ctx, admin, row.ID, contracts.Cond{Terminal: true}, contracts.RecoverPatch())
		})
	}
	wg.Wait()
	winners := 0
	for i := range admins {
		require.NoError(t, errs[i], "recovery %d", i)
		if applied[i] {
			winners++
		}
	}
	require.Equal(t, 1, winners, "exactly one of %d concurrent recoveries applies", admins)
	got := x.get(t, row.ID)
	require.Nil(t, got.ErrorInfo)
	require.Zero(t, got.ErrorCount)

	// A retryable error recorded after the recovery is not terminal: a
	// late recovery leaves it (and its attempt count) alone.
	retry := contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Message: "m", Operation: contracts.OpStarting, ErrorCount: 1, OccurredAt: now}
	ok, err := x.Store.Update(ctx, reconcilerAt(0), row.ID, contracts.Cond{},
		contracts.Patch{ErrorInfo: contracts.Some(&retry), ErrorCount: contracts.Some(1), ErrorMessage: contracts.Some("m")})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = x.Store.Update(ctx, admin, row.ID, contracts.Cond{Terminal: true}, contracts.RecoverPatch())
	require.NoError(t, err)
	require.False(t, ok, "a recovery of a row whose error is not terminal applies nothing")
	got = x.get(t, row.ID)
	require.Equal(t, 1, got.ErrorCount)
	require.NotNil(t, got.ErrorInfo)
}

// storeConcurrentClaims races claims of one row: a compare-and-set on
// operation = NONE lets exactly one of them in.
func storeConcurrentClaims(t *testing.T, x StoreTarget) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(19, 20))
	row := contracts.NewWorkspace(uuidFrom(r), uuidFrom(r), "claimed", "img:1", x.now())
	x.insert(t, row)
	const claimers = 8
	ops := make([]string, claimers)
	for i := range ops {
		ops[i] = uuidFrom(r)
	}
	type result struct {
		applied bool
		err     error
	}
	results := make([]result, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		wg.Go(func() {
			applied, err := x.Store.Update(ctx, reconcilerAt(0), row.ID,
				contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotTerminal: true},
				contracts.Patch{Operation: contracts.Some(contracts.OpArchiving), OpID: contracts.Some(ops[i])})
			results[i] = result{applied, err}
		})
	}
	wg.Wait()
	winner := -1
	for i, res := range results {
		require.NoError(t, res.err, "claim %d", i)
		if res.applied {
			require.Equal(t, -1, winner, "claims %d and %d both applied", winner, i)
			winner = i
		}
	}
	require.NotEqual(t, -1, winner, "one claim applied")
	got := x.get(t, row.ID)
	require.Equal(t, contracts.OpArchiving, got.Operation)
	require.Equal(t, ops[winner], got.OpID, "the row holds the winner's op id")
}
