package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// fullRow sets every column, nullable ones to non-empty values.
func fullRow(id string) contracts.Workspace {
	at := func(m int) time.Time { return us(t0.Add(time.Duration(m)*time.Minute + 123456789)) }
	return contracts.Workspace{
		ID: id, OwnerUserID: "3f2c9a1e-5b7d-4c0e-8a6f-0123456789ab", Name: "full", Description: "desc", Memo: "memo",
		ImageRef: "registry/img:2", InstanceBackend: contracts.InstanceK8s, StorageBackend: contracts.StorageMinio,
		HomeStoreKey: "custom-key", HomeCtx: &contracts.HomeCtx{RestoreMarker: "archives/x/y/home.tar.zst"},
		ObservedStatus: contracts.ObservedStandby, HealthStatus: contracts.HealthError, ObservedAt: at(1),
		Operation: contracts.OpArchiving, OpStartedAt: at(2), OpID: "0f2c9a1e-5b7d-4c0e-8a6f-0123456789ab",
		ArchiveKey: "archives/k", ErrorCount: 2,
		ErrorInfo: &contracts.ErrorInfo{
			Reason: contracts.ReasonActionFailed, Message: "boom", IsTerminal: true, Operation: contracts.OpArchiving,
			ErrorCount: 2, Context: map[string]any{"action": "archive", "exit_code": float64(1), "ok": false},
			OccurredAt: at(3),
		},
		ErrorMessage: "boom", PreviousStatus: contracts.ObservedRunning, DesiredState: contracts.DesiredPending,
		DeletedAt: at(4), StandbyTTLSeconds: 60, ArchiveTTLSeconds: 120, LastAccessAt: at(5),
		CreatedAt: at(6), UpdatedAt: at(7),
	}
}

func TestRoundTripEveryColumn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	full := fullRow(e.ids.NewID())
	require.NoError(t, e.s.Insert(ctx, apiWriter, full))
	require.Equal(t, full, e.get(t, full.ID))

	// Every nullable column NULL, the rest at their defaults; created_at
	// and updated_at zero: stamped with the store's clock.
	e.clock.Advance(1500 * time.Microsecond)
	bare := contracts.NewWorkspace(e.ids.NewID(), "user-2", "bare", "img:1", time.Time{})
	bare.HomeStoreKey = ""
	require.NoError(t, e.s.Insert(ctx, apiWriter, bare))
	got := e.get(t, bare.ID)
	want := bare
	want.HomeStoreKey = contracts.VolumeName(bare.ID)
	want.CreatedAt, want.UpdatedAt = us(e.clock.Now()), us(e.clock.Now())
	require.Equal(t, want, got)
	require.Nil(t, got.HomeCtx)
	require.Nil(t, got.ErrorInfo)

	// A patch of every updatable column, then back to NULL.
	e.clock.Advance(time.Second)
	p := contracts.Patch{
		Name: contracts.Some("renamed"), Description: contracts.Some("d"), Memo: contracts.Some("m"),
		HomeCtx: contracts.Some(full.HomeCtx), ObservedStatus: contracts.Some(contracts.ObservedRunning),
		HealthStatus: contracts.Some(contracts.HealthError), ObservedAt: contracts.Some(full.ObservedAt),
		Operation: contracts.Some(contracts.OpStopping), OpStartedAt: contracts.Some(full.OpStartedAt),
		OpID: contracts.Some(full.OpID), ArchiveKey: contracts.Some("archives/a"), ErrorCount: contracts.Some(3),
		ErrorInfo: contracts.Some(full.ErrorInfo), ErrorMessage: contracts.Some("m2"),
		PreviousStatus: contracts.Some(contracts.ObservedStandby), DesiredState: contracts.Some(contracts.DesiredStandby),
		DeletedAt: contracts.Some(full.DeletedAt), StandbyTTLSeconds: contracts.Some(1), ArchiveTTLSeconds: contracts.Some(2),
		LastAccessAt: contracts.Some(full.LastAccessAt),
	}
	applied, err := e.s.Update(ctx, apiWriter, bare.ID, contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, applied)
	p.Apply(&want, us(e.clock.Now()))
	require.Equal(t, want, e.get(t, bare.ID))

	e.clock.Advance(time.Second)
	clear := contracts.Patch{
		Description: contracts.Some(""), Memo: contracts.Some(""), HomeCtx: contracts.Some[*contracts.HomeCtx](nil),
		ObservedAt: contracts.Some(time.Time{}), OpStartedAt: contracts.Some(time.Time{}), OpID: contracts.Some(""),
		ArchiveKey: contracts.Some(""), ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil),
		ErrorMessage: contracts.Some(""), PreviousStatus: contracts.Some(contracts.ObservedStatus("")),
		DeletedAt: contracts.Some(time.Time{}), LastAccessAt: contracts.Some(time.Time{}),
	}
	applied, err = e.s.Update(ctx, apiWriter, bare.ID, contracts.Cond{}, clear)
	require.NoError(t, err)
	require.True(t, applied)
	clear.Apply(&want, us(e.clock.Now()))
	require.Equal(t, want, e.get(t, bare.ID))
}

func TestNotFoundAndDuplicate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rows := e.insert(t, 1)

	_, err := e.s.Get(ctx, e.ids.NewID())
	require.ErrorIs(t, err, contracts.ErrNotFound)
	_, err = e.s.Get(ctx, "not-a-uuid")
	require.ErrorIs(t, err, contracts.ErrNotFound)

	applied, err := e.s.Update(ctx, apiWriter, e.ids.NewID(), contracts.Cond{}, contracts.Patch{Name: contracts.Some("x")})
	require.ErrorIs(t, err, contracts.ErrNotFound)
	require.False(t, applied)
	_, err = e.s.Update(ctx, apiWriter, "nope", contracts.Cond{}, contracts.Patch{Name: contracts.Some("x")})
	require.ErrorIs(t, err, contracts.ErrNotFound)

	err = e.s.Insert(ctx, apiWriter, rows[0])
	require.ErrorIs(t, err, pgstore.ErrDuplicateID)
}

func TestConditionalUpdate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	w := e.insert(t, 1)[0]
	claim := contracts.Patch{Operation: contracts.Some(contracts.OpStarting), OpStartedAt: contracts.Some(us(t0))}

	cases := []struct {
		name string
		cond contracts.Cond
		ok   bool
	}{
		{"operation differs", contracts.Cond{Operation: contracts.Some(contracts.OpStopping)}, false},
		{"desired differs", contracts.Cond{DesiredState: contracts.Some(contracts.DesiredStandby)}, false},
		{"all hold", contracts.Cond{Operation: contracts.Some(contracts.OpNone), DesiredState: contracts.Some(contracts.DesiredRunning),
			NotTerminal: true, NotDeleted: true, ErrorInfoNull: true}, true},
	}
	for _, c := range cases {
		before := e.get(t, w.ID)
		applied, err := e.s.Update(ctx, reconciler(0), w.ID, c.cond, claim)
		require.NoError(t, err, c.name)
		require.Equal(t, c.ok, applied, c.name)
		if !c.ok {
			require.Equal(t, before, e.get(t, w.ID), c.name)
		}
	}
	require.Equal(t, contracts.OpStarting, e.get(t, w.ID).Operation)

	// Terminal, deleted and error_info conditions against a row that
	// fails each.
	nonTerminal := &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "m"}
	terminal := &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, Message: "gone", IsTerminal: true}
	for _, c := range []struct {
		name  string
		patch contracts.Patch
		cond  contracts.Cond
		ok    bool
	}{
		{"not terminal holds on a retried error", contracts.Patch{ErrorInfo: contracts.Some(nonTerminal)}, contracts.Cond{NotTerminal: true}, true},
		{"error_info null fails on a retried error", contracts.Patch{}, contracts.Cond{ErrorInfoNull: true}, false},
		{"not terminal fails on a terminal error", contracts.Patch{ErrorInfo: contracts.Some(terminal)}, contracts.Cond{NotTerminal: true}, false},
		{"not deleted fails on a deleted row", contracts.Patch{DeletedAt: contracts.Some(us(t0))}, contracts.Cond{NotDeleted: true}, false},
	} {
		if !c.patch.Empty() {
			applied, err := e.s.Update(ctx, apiWriter, w.ID, contracts.Cond{}, c.patch)
			require.NoError(t, err)
			require.True(t, applied)
		}
		row := e.get(t, w.ID)
		require.Equal(t, c.ok, c.cond.Holds(&row), c.name)
		applied, err := e.s.Update(ctx, apiWriter, w.ID, c.cond, contracts.Patch{Memo: contracts.Some(c.name)})
		require.NoError(t, err, c.name)
		require.Equal(t, c.ok, applied, c.name)
	}
}

// TestConcurrentClaim: of two claims racing on operation = NONE exactly
// one applies (compare-and-set, C4).
func TestConcurrentClaim(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, w := range e.insert(t, 20) {
		results := make(chan bool, 2)
		errs := make(chan error, 2)
		for _, op := range []contracts.Operation{contracts.OpStarting, contracts.OpArchiving} {
			go func() {
				ok, err := e.s.Update(ctx, reconciler(0), w.ID, contracts.Cond{Operation: contracts.Some(contracts.OpNone)},
					contracts.Patch{Operation: contracts.Some(op)})
				results <- ok
				errs <- err
			}()
		}
		a, b := <-results, <-results
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		require.True(t, a != b, "exactly one claim applies")
		require.NotEqual(t, contracts.OpNone, e.get(t, w.ID).Operation)
	}
}

func TestUpdateMany(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rows := e.insert(t, 4)
	e.clock.Advance(time.Second)
	now := us(e.clock.Now())
	info := &contracts.ErrorInfo{Reason: contracts.ReasonMismatch, Message: "container without volume", IsTerminal: true,
		Context: map[string]any{"violation": contracts.ViolationContainerWithoutVolume}}
	updates := []ports.RowUpdate{
		{ID: rows[0].ID, Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby), ObservedAt: contracts.Some(now)}},
		{ID: rows[1].ID, Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby), ObservedAt: contracts.Some(now)}},
		// Condition fails: skipped.
		{ID: rows[2].ID, Cond: contracts.Cond{Operation: contracts.Some(contracts.OpStarting)},
			Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}},
		// Condition holds, other columns.
		{ID: rows[3].ID, Cond: contracts.Cond{ErrorInfoNull: true},
			Patch: contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError), ErrorInfo: contracts.Some(info)}},
		// The same row again, later in the call: applied after the first.
		{ID: rows[0].ID, Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)}},
		// Missing and malformed rows: skipped.
		{ID: e.ids.NewID(), Patch: contracts.Patch{Memo: contracts.Some("x")}},
		{ID: "nope", Patch: contracts.Patch{Memo: contracts.Some("x")}},
	}
	before := make([]contracts.Workspace, len(rows))
	for i := range rows {
		before[i] = e.get(t, rows[i].ID)
	}
	require.NoError(t, e.s.UpdateMany(ctx, health(0), updates))

	want := make([]contracts.Workspace, len(rows))
	copy(want, before)
	index := map[string]int{}
	for i := range rows {
		index[rows[i].ID] = i
	}
	for _, u := range updates {
		i, ok := index[u.ID]
		if !ok || !u.Cond.Holds(&want[i]) {
			continue
		}
		u.Patch.Apply(&want[i], now)
	}
	for i := range rows {
		require.Equal(t, want[i], e.get(t, rows[i].ID), "row %d", i)
	}
	require.Equal(t, contracts.ObservedRunning, want[0].ObservedStatus)
	require.Equal(t, before[2], want[2])
}

func TestMarkObserved(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rows := e.insert(t, 3)
	e.clock.Advance(time.Minute)
	at := us(e.clock.Now())
	require.NoError(t, e.s.MarkObserved(ctx, health(0), []string{rows[0].ID, rows[2].ID, e.ids.NewID(), "nope"}, at))
	require.Equal(t, at, e.get(t, rows[0].ID).ObservedAt)
	require.Equal(t, at, e.get(t, rows[0].ID).UpdatedAt)
	require.True(t, e.get(t, rows[1].ID).ObservedAt.IsZero())
	require.Equal(t, at, e.get(t, rows[2].ID).ObservedAt)
	// An empty pass is still a pass.
	require.NoError(t, e.s.MarkObserved(ctx, health(0), nil, at))
}

// TestFencing: a write carrying a stale epoch fails with ErrFenced and
// writes nothing; the current epoch writes; epoch 0 is never fenced.
func TestFencing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rows := e.insert(t, 2)
	lead := func(holder string) int64 {
		t.Helper()
		l := e.s.Leadership()
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		lease, ok, err := l.TryAcquire(ctx, holder)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, lease.Release(ctx))
		return lease.Epoch()
	}
	old := lead("c1")
	cur := lead("c2")
	require.Equal(t, old+1, cur)

	snapshot := func() []contracts.Workspace {
		all, err := e.s.List(ctx, contracts.FilterAll)
		require.NoError(t, err)
		return all
	}
	before := snapshot()
	claim := contracts.Patch{Operation: contracts.Some(contracts.OpStarting)}

	applied, err := e.s.Update(ctx, reconciler(old), rows[0].ID, contracts.Cond{}, claim)
	require.ErrorIs(t, err, contracts.ErrFenced)
	require.False(t, applied)
	// Fenced even where the condition fails or the row is missing: the
	// epoch is judged first.
	_, err = e.s.Update(ctx, reconciler(old), e.ids.NewID(), contracts.Cond{}, claim)
	require.ErrorIs(t, err, contracts.ErrFenced)
	err = e.s.UpdateMany(ctx, health(old), []ports.RowUpdate{
		{ID: rows[0].ID, Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)}},
		{ID: rows[1].ID, Patch: contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)}},
	})
	require.ErrorIs(t, err, contracts.ErrFenced)
	require.ErrorIs(t, e.s.MarkObserved(ctx, health(old), []string{rows[0].ID}, us(t0.Add(time.Hour))), contracts.ErrFenced)
	w := contracts.NewWorkspace(e.ids.NewID(), "u", "n", "i", t0)
	require.ErrorIs(t, e.s.Insert(ctx, reconciler(old), w), contracts.ErrFenced)
	// A future epoch is as wrong as a past one.
	_, err = e.s.Update(ctx, reconciler(cur+1), rows[0].ID, contracts.Cond{}, claim)
	require.ErrorIs(t, err, contracts.ErrFenced)
	require.Equal(t, before, snapshot(), "a fenced write wrote something")

	applied, err = e.s.Update(ctx, reconciler(cur), rows[0].ID, contracts.Cond{}, claim)
	require.NoError(t, err)
	require.True(t, applied)
	applied, err = e.s.Update(ctx, apiWriter, rows[1].ID, contracts.Cond{}, contracts.Patch{Memo: contracts.Some("api")})
	require.NoError(t, err)
	require.True(t, applied)
}
