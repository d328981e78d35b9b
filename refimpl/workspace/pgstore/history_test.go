package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// TestHistoryReproducesWrites: the audit trail read back as history events
// carries every applied write with its writer, patch and condition, and
// replaying it rebuilds the table.
func TestHistoryReproducesWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lease := acquire(t, newLeadership(t, e), "c1")
	ep := lease.Epoch()

	rows := e.insert(t, 2)
	a, b := rows[0].ID, rows[1].ID
	tick := func() time.Time { e.clock.Advance(time.Second); return us(e.clock.Now()) }

	type write struct {
		w     contracts.Writer
		id    string
		cond  contracts.Cond
		patch contracts.Patch
	}
	now := tick()
	writes := []write{
		{ttlWriter, a, contracts.Cond{Operation: contracts.Some(contracts.OpNone)}, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)}},
		{reconciler(ep), b, contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotTerminal: true, NotDeleted: true},
			contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(now), OpID: contracts.Some(e.ids.NewID())}},
	}
	for _, wr := range writes {
		tick()
		applied, err := e.s.Update(ctx, wr.w, wr.id, wr.cond, wr.patch)
		require.NoError(t, err)
		require.True(t, applied)
	}
	// Not recorded: a failed condition, a fenced write, an observed_at stamp.
	applied, err := e.s.Update(ctx, reconciler(ep), a, contracts.Cond{Operation: contracts.Some(contracts.OpStarting)}, contracts.Patch{Memo: contracts.Some("no")})
	require.NoError(t, err)
	require.False(t, applied)
	_, err = e.s.Update(ctx, reconciler(ep+5), a, contracts.Cond{}, contracts.Patch{Memo: contracts.Some("no")})
	require.ErrorIs(t, err, contracts.ErrFenced)

	passAt := tick()
	// health_status is assigned its current value: still recorded, as
	// assigned.
	hm := []ports.RowUpdate{
		{ID: a, Patch: contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby), HealthStatus: contracts.Some(contracts.HealthOK), ObservedAt: contracts.Some(passAt)}},
	}
	require.NoError(t, e.s.UpdateMany(ctx, health(ep), hm))
	require.NoError(t, e.s.MarkObserved(ctx, health(ep), []string{b}, passAt))

	// A third party writes without attribution.
	tick()
	_, err = e.s.Pool().Exec(ctx, `UPDATE workspaces SET memo = 'direct', owner_user_id = 'someone' WHERE id = $1`, a)
	require.NoError(t, err)

	evs, err := e.s.History(ctx, 0)
	require.NoError(t, err)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind)+" "+ev.Method)
	}
	require.Equal(t, []string{
		"leader acquire",
		"db.insert store.Insert", "db.insert store.Insert",
		"db.write store.Update", "db.write store.Update",
		"db.write store.UpdateMany",
		"note " + history.NoteHealthPass,
		"db.write store.Update",
	}, kinds)

	for i, row := range rows {
		ins := evs[1+i]
		require.Equal(t, contracts.CompAPI, ins.Component)
		require.Equal(t, "api-1", ins.Instance)
		require.Equal(t, row.ID, ins.Workspace)
		require.Equal(t, row, *ins.Row)
	}
	for i, wr := range writes {
		ev := evs[3+i]
		require.Equal(t, wr.w.Component, ev.Component)
		require.Equal(t, wr.w.Instance, ev.Instance)
		require.Equal(t, wr.w.Epoch, ev.Epoch)
		require.Equal(t, wr.id, ev.Workspace)
		require.Equal(t, wr.patch, *ev.Patch)
		require.Equal(t, wr.cond, *ev.Cond)
		require.Equal(t, history.OnBehalfArgs(wr.w), ev.Args, "read as the checkers read it")
		require.True(t, ev.Applied)
	}
	require.Equal(t, "on behalf of ttl_manager", evs[3].Args)

	hmEv := evs[5]
	require.Equal(t, contracts.CompHealthMonitor, hmEv.Component)
	require.Equal(t, ep, hmEv.Epoch)
	require.Equal(t, hm[0].Patch, *hmEv.Patch)
	require.Equal(t, passAt, hmEv.At)

	pass := evs[6]
	require.Equal(t, contracts.CompHealthMonitor, pass.Component)
	require.Equal(t, "c1", pass.Instance)
	require.Equal(t, ep, pass.Epoch)
	require.Equal(t, "1 rows observed", pass.Result)

	direct := evs[7]
	require.Equal(t, pgstore.ComponentUnknown, direct.Component)
	require.Equal(t, int64(0), direct.Epoch)
	require.Equal(t, contracts.Patch{Memo: contracts.Some("direct")}, *direct.Patch)
	require.Equal(t, "other=owner_user_id", direct.Args)

	// Replaying the trail rebuilds the table (observed_at stamps and
	// updated_at aside: they are not recorded one by one).
	replayed := map[string]*contracts.Workspace{}
	for _, ev := range evs {
		switch ev.Kind {
		case history.KindInsert:
			r := ev.Row.Clone()
			replayed[r.ID] = &r
		case history.KindWrite:
			ev.Patch.Apply(replayed[ev.Workspace], ev.At)
		}
	}
	final, err := e.s.List(ctx, contracts.FilterAll)
	require.NoError(t, err)
	require.Len(t, replayed, len(final))
	for _, w := range final {
		r := replayed[w.ID]
		w.OwnerUserID = r.OwnerUserID // the third party's change a Patch cannot carry
		w.ObservedAt, r.ObservedAt = time.Time{}, time.Time{}
		w.UpdatedAt, r.UpdatedAt = time.Time{}, time.Time{}
		require.Equal(t, w, *r)
	}

	// Paging.
	rest, err := e.s.History(ctx, evs[5].Seq)
	require.NoError(t, err)
	require.Equal(t, evs[6:], rest)
	none, err := e.s.History(ctx, evs[len(evs)-1].Seq)
	require.NoError(t, err)
	require.Empty(t, none)
}

// TestHistoryFeedsCheckers: a trail with an ownership violation written
// on real PostgreSQL is flagged by the invariant checkers, and a clean
// one is not.
func TestHistoryFeedsCheckers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lease := acquire(t, newLeadership(t, e), "c1")
	row := e.insert(t, 1)[0]
	e.clock.Advance(time.Second)
	applied, err := e.s.Update(ctx, reconciler(lease.Epoch()), row.ID, contracts.Cond{Operation: contracts.Some(contracts.OpNone)},
		contracts.Patch{Operation: contracts.Some(contracts.OpStarting), OpStartedAt: contracts.Some(us(e.clock.Now()))})
	require.NoError(t, err)
	require.True(t, applied)

	clean, err := e.s.History(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, ownership(wsjudge.Check(wsjudge.Input{Events: clean})))

	// The reconciler writes an API column: a C3 violation.
	_, err = e.s.Update(ctx, reconciler(lease.Epoch()), row.ID, contracts.Cond{}, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
	require.NoError(t, err)
	dirty, err := e.s.History(ctx, 0)
	require.NoError(t, err)
	require.NotEmpty(t, ownership(wsjudge.Check(wsjudge.Input{Events: dirty})))
}

func ownership(r *wsjudge.Report) []wsjudge.Violation { return r.ByChecker("c3-single-writer") }
