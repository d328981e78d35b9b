package pgstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

var allFilters = []contracts.Filter{
	contracts.FilterAll, contracts.FilterActive, contracts.FilterReconcile, contracts.FilterTTL, contracts.FilterRunning,
}

var (
	retriedError  = &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, Message: "retry me", ErrorCount: 1}
	terminalError = &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, Message: "gone", IsTerminal: true}
)

// requireFiltersMatch checks that List(f) returns exactly the rows of the
// table that f.Match selects, ordered by id.
func requireFiltersMatch(t require.TestingT, e *env, rows []contracts.Workspace) {
	ctx := context.Background()
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(a, b contracts.Workspace) int { return compareStrings(a.ID, b.ID) })
	for _, f := range allFilters {
		want := []string{}
		for i := range sorted {
			if f.Match(&sorted[i]) {
				want = append(want, sorted[i].ID)
			}
		}
		got, err := e.s.List(ctx, f)
		require.NoError(t, err)
		ids := make([]string, len(got))
		for i := range got {
			ids[i] = got[i].ID
		}
		require.Equal(t, want, ids, "filter %d", f)
		if f == contracts.FilterAll && len(got) > 0 {
			require.Equal(t, sorted, got)
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestFiltersEveryCombination: every combination of the columns the
// filters read, each filter against Filter.Match.
func TestFiltersEveryCombination(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var rows []contracts.Workspace
	for _, obs := range contracts.AllObserved {
		for _, h := range []contracts.HealthStatus{contracts.HealthOK, contracts.HealthError} {
			for _, op := range []contracts.Operation{contracts.OpNone, contracts.OpStarting} {
				for _, d := range contracts.AllDesired {
					for _, info := range []*contracts.ErrorInfo{nil, retriedError, terminalError} {
						for _, deleted := range []bool{false, true} {
							w := contracts.NewWorkspace(e.ids.NewID(), "user-1", "ws", "img", us(t0))
							w.ObservedStatus, w.HealthStatus, w.Operation, w.DesiredState, w.ErrorInfo = obs, h, op, d, info
							if deleted {
								w.DeletedAt = us(t0.Add(time.Hour))
							}
							require.NoError(t, e.s.Insert(ctx, apiWriter, w))
							rows = append(rows, w)
						}
					}
				}
			}
		}
	}
	requireFiltersMatch(t, e, rows)
}

// TestFiltersProperty: on generated tables, each filter equals
// Filter.Match.
func TestFiltersProperty(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	genRow := func(rt *rapid.T, id string) contracts.Workspace {
		w := contracts.NewWorkspace(id, rapid.SampledFrom([]string{"user-1", "user-2"}).Draw(rt, "owner"), "ws", "img", us(t0))
		w.ObservedStatus = rapid.SampledFrom(contracts.AllObserved).Draw(rt, "observed")
		w.HealthStatus = rapid.SampledFrom([]contracts.HealthStatus{contracts.HealthOK, contracts.HealthError}).Draw(rt, "health")
		w.Operation = rapid.SampledFrom(contracts.AllOperations).Draw(rt, "operation")
		w.DesiredState = rapid.SampledFrom(contracts.AllDesired).Draw(rt, "desired")
		w.ErrorInfo = rapid.SampledFrom([]*contracts.ErrorInfo{nil, retriedError, terminalError}).Draw(rt, "error_info")
		w.ArchiveKey = rapid.SampledFrom([]string{"", "archives/k"}).Draw(rt, "archive_key")
		if rapid.Bool().Draw(rt, "deleted") {
			w.DeletedAt = us(t0.Add(time.Minute))
		}
		return w
	}
	rapid.Check(t, func(rt *rapid.T) {
		_, err := e.s.Pool().Exec(ctx, `TRUNCATE workspaces`)
		require.NoError(rt, err)
		n := rapid.IntRange(0, 12).Draw(rt, "rows")
		rows := make([]contracts.Workspace, n)
		for i := range rows {
			rows[i] = genRow(rt, e.ids.NewID())
			require.NoError(rt, e.s.Insert(ctx, apiWriter, rows[i]))
		}
		requireFiltersMatch(rt, e, rows)
	})
}

// Every filter's page is read in index order: the plan of its keyset query
// has no Sort, so a page costs its own rows, not the whole selection; and
// the narrow filters (reconcile, TTL, running) read a partial index.
// (ORDER BY a bare "id" once sorted the select list's id::text: every page
// sorted all 100,000 rows of a large fleet.)
func TestPagesAreReadInIndexOrder(t *testing.T) {
	e := newEnv(t)
	e.insert(t, 50)
	ctx := context.Background()
	for _, f := range allFilters {
		tx, err := e.s.Pool().Begin(ctx)
		require.NoError(t, err)
		// On a small table the planner may prefer a scan and a sort; forbid
		// both where it has a choice, so a Sort left in the plan is one no
		// index could avoid.
		_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
		require.NoError(t, err)
		rows, err := tx.Query(ctx, "EXPLAIN "+pgstore.PageQuery(pgstore.FilterWhere[f]),
			"00000000-0000-0000-0000-000000000000", 5000)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, tx.Rollback(ctx))
		for _, line := range plan {
			require.NotContains(t, line, "Sort", "filter %v sorts its page:\n%s", f, strings.Join(plan, "\n"))
		}
		// The narrow selections read their own partial index, not the
		// whole table in key order.
		if f != contracts.FilterAll && f != contracts.FilterActive {
			require.NotContains(t, strings.Join(plan, "\n"), "workspaces_pkey", "filter %v walks the whole table:\n%s", f, strings.Join(plan, "\n"))
		}
	}
}
