package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

const benchRows = 10_000

// benchEnv is a store holding benchRows live rows, half RUNNING.
func benchEnv(b *testing.B) *env {
	b.Helper()
	e := newEnv(b)
	_, err := e.s.Pool().Exec(context.Background(), `INSERT INTO workspaces
			(id, owner_user_id, name, image_ref, instance_backend, storage_backend, observed_status)
		SELECT gen_random_uuid(), 'user-' || (i % 100), 'ws-' || i, 'img:1', 'local-docker', 'docker-volume',
			CASE WHEN i % 2 = 0 THEN 'RUNNING' ELSE 'STANDBY' END::workspace_observed_status
		FROM generate_series(1, $1::integer) AS i`, benchRows)
	require.NoError(b, err)
	_, err = e.s.Pool().Exec(context.Background(), `ANALYZE workspaces`)
	require.NoError(b, err)
	return e
}

// benchPass runs b.N HealthMonitor passes: List(FilterActive), then one
// UpdateMany of an observation patch per row built by patch, and reports
// milliseconds and round trips per pass.
func benchPass(b *testing.B, patch func(w *contracts.Workspace, now time.Time) contracts.Patch) {
	e := benchEnv(b)
	ctx := context.Background()
	w := health(0)
	b.ResetTimer()
	trips := e.s.RoundTrips()
	start := time.Now()
	for range b.N {
		e.clock.Advance(2 * time.Second)
		now := e.clock.Now()
		rows, err := e.s.List(ctx, contracts.FilterActive)
		require.NoError(b, err)
		require.Len(b, rows, benchRows)
		updates := make([]ports.RowUpdate, len(rows))
		for i := range rows {
			updates[i] = ports.RowUpdate{ID: rows[i].ID, Patch: patch(&rows[i], now)}
		}
		require.NoError(b, e.s.UpdateMany(ctx, w, updates))
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/pass")
	b.ReportMetric(float64(e.s.RoundTrips()-trips)/float64(b.N), "roundtrips/pass")
}

// BenchmarkHealthPassObservedAt: every row's observation is unchanged, the
// patch only stamps observed_at (the common pass).
func BenchmarkHealthPassObservedAt(b *testing.B) {
	benchPass(b, func(_ *contracts.Workspace, now time.Time) contracts.Patch {
		return contracts.Patch{ObservedAt: contracts.Some(now)}
	})
}

// BenchmarkHealthPassAllChanged: every row's status flips (the worst
// pass: every row audited and notified).
func BenchmarkHealthPassAllChanged(b *testing.B) {
	benchPass(b, func(w *contracts.Workspace, now time.Time) contracts.Patch {
		next := contracts.ObservedRunning
		if w.ObservedStatus == contracts.ObservedRunning {
			next = contracts.ObservedStandby
		}
		return contracts.Patch{ObservedStatus: contracts.Some(next), ObservedAt: contracts.Some(now)}
	})
}

// BenchmarkHealthPassMarkObserved: the same common pass through
// MarkObserved, as the reference HealthMonitor writes it.
func BenchmarkHealthPassMarkObserved(b *testing.B) {
	e := benchEnv(b)
	ctx := context.Background()
	w := health(0)
	b.ResetTimer()
	trips := e.s.RoundTrips()
	start := time.Now()
	for range b.N {
		e.clock.Advance(2 * time.Second)
		rows, err := e.s.List(ctx, contracts.FilterActive)
		require.NoError(b, err)
		ids := make([]string, len(rows))
		for i := range rows {
			ids[i] = rows[i].ID
		}
		require.NoError(b, e.s.MarkObserved(ctx, w, ids, e.clock.Now()))
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/pass")
	b.ReportMetric(float64(e.s.RoundTrips()-trips)/float64(b.N), "roundtrips/pass")
}
