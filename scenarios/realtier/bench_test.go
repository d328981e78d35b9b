package realtier

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/coordinator"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
	"github.com/wsconverge/converge/refimpl/workspace/httpapi"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/redisbus"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
)

// BenchmarkEventLatency measures the time from a DB write (a desired-state
// change through the API) to the SSE client seeing it: PostgreSQL NOTIFY →
// the leader's EventListener → Redis PUBLISH → the API's SSE stream.
// Reports p50 and p99 in ms (target p99 < 100 ms).
func BenchmarkEventLatency(b *testing.B) {
	ctx := b.Context()
	dsn := testenv.PostgresDB(b)
	redisURL := testenv.Redis(b)
	clock := runner.Clock{}
	store, err := pgstore.Open(ctx, dsn, clock)
	require.NoError(b, err)
	defer store.Close()
	require.NoError(b, store.Migrate(ctx))
	bus, err := redisbus.New(ctx, redisURL)
	require.NoError(b, err)
	defer bus.Close()
	world := wsfakes.NewWorld(wsfakes.NewClock(time.Now()), history.NewRecorder())
	deps := func(name string) ports.Deps {
		w := world.Deps(name)
		return ports.Deps{Instance: name, Store: store, Leadership: store.Leadership(), Feed: store,
			Instances: w.Instances, Storage: w.Storage, Objects: w.Objects, Bus: bus,
			Clock: clock, IDs: runner.IDs{}, Limits: contracts.DefaultLimits}
	}
	coord := coordinator.New(deps("coord"), coordinator.Options{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(rctx, coord, clock, runner.Config{}) }()
	defer func() { stop(); <-done }()

	svc := api.New(deps("api"))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{API: svc, Tokens: map[string]string{"tok": "alice"}, Bus: bus, Clock: clock}))
	defer srv.Close()
	pending := "PENDING"
	ws, err := svc.Create(ctx, "alice", ports.CreateRequest{Name: "latency", ImageRef: "img", DesiredState: &pending})
	require.NoError(b, err)
	require.Eventually(b, coord.IsLeader, 10*time.Second, 10*time.Millisecond)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/workspaces/"+ws.ID+"/events", nil)
	require.NoError(b, err)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	require.Equal(b, http.StatusOK, resp.StatusCode)
	seen := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev struct {
					Desired string `json:"desired_state"`
					Name    string `json:"name"`
				}
				if json.Unmarshal([]byte(data), &ev) == nil && ev.Desired != "" {
					seen <- ev.Desired
				}
			}
		}
		close(seen)
	}()
	time.Sleep(200 * time.Millisecond) // let the stream subscribe

	// Flip desired_state between PENDING and STANDBY on a workspace in
	// ERROR-free PENDING with no operation: the reconciler may act on
	// STANDBY, so each flip waits for the event carrying its own value.
	var lat []time.Duration
	want := []string{"STANDBY", "PENDING"}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		to := want[i%2]
		// The reconciler may have an operation running (409): retry, and
		// time only the write that lands.
		var start time.Time
		require.Eventually(b, func() bool {
			start = time.Now()
			_, err := svc.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: &to})
			return err == nil
		}, 30*time.Second, time.Millisecond)
		for got := range seen {
			if got == to {
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkPass is one full HealthMonitor + StateReconciler pass over
// 10,000 and 100,000 workspaces in PostgreSQL with the fake providers: ms
// per pass, DB round trips and provider list calls per pass (targets: a
// constant number of provider calls, not one per workspace; under 1 s per
// pass at 10,000 and under 2 s at 100,000). The clock moves 30 s a pass,
// so every other pass also runs the TTL Manager's scan (every 60 s):
// ms/pass is the mean of all, hm-sr-ms/pass of the passes without it.
func BenchmarkPass(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("workspaces=%d", n), func(b *testing.B) { benchPass(b, n) })
	}
}

func benchPass(b *testing.B, n int) {
	ctx := b.Context()
	dsn := testenv.PostgresDB(b)
	clock := wsfakes.NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	store, err := pgstore.Open(ctx, dsn, clock)
	require.NoError(b, err)
	defer store.Close()
	require.NoError(b, store.Migrate(ctx))
	world := wsfakes.NewWorld(clock, history.NewRecorder())
	ids := wsfakes.NewIDs(1)
	rows := make([]contracts.Workspace, n)
	for i := range rows {
		w := contracts.NewWorkspace(ids.NewID(), fmt.Sprintf("user-%d", i%5000), "ws", "img", clock.Now())
		w.LastAccessAt = clock.Now().Add(24 * time.Hour) // no TTL fires during the benchmark
		// A settled fleet: most idle in STANDBY, a tenth running.
		w.DesiredState = contracts.DesiredStandby
		w.ObservedStatus = contracts.ObservedStandby
		if i%10 == 0 {
			w.DesiredState, w.ObservedStatus = contracts.DesiredRunning, contracts.ObservedRunning
		}
		rows[i] = w
		require.NoError(b, world.Storage.Provision(ctx, w.ID))
		if i%10 == 0 {
			require.NoError(b, world.Instances.Start(ctx, w.ID, "img"))
		}
	}
	// Setting up is not measured: insert on a few connections at once.
	var g errgroup.Group
	g.SetLimit(8)
	for i := range rows {
		g.Go(func() error { return store.Insert(ctx, contracts.Writer{Component: contracts.CompAPI}, rows[i]) })
	}
	require.NoError(b, g.Wait())
	d := world.Deps("coord")
	ttl := &ttlScans{Store: store}
	d.Store, d.Leadership, d.Feed, d.Clock, d.IDs, d.Limits = ttl, store.Leadership(), store, clock, wsfakes.NewIDs(2), contracts.DefaultLimits
	coord := coordinator.New(d, coordinator.Options{})
	_, err = coord.Step(ctx) // take the lead and do the first pass
	require.NoError(b, err)
	require.True(b, coord.IsLeader())

	before := world.Stats()
	trips := store.RoundTrips()
	var hmsr time.Duration
	passes := 0
	b.ResetTimer()
	for b.Loop() {
		clock.Advance(decide.PeriodIdle) // every component that polls is due
		scans, start := ttl.n, time.Now()
		_, err := coord.Step(ctx)
		require.NoError(b, err)
		if ttl.n == scans {
			hmsr += time.Since(start)
			passes++
		}
	}
	b.StopTimer()
	if passes > 0 {
		b.ReportMetric(float64(hmsr.Milliseconds())/float64(passes), "hm-sr-ms/pass")
	}
	after := world.Stats()
	perPass := func(m string) float64 { return float64(after.Calls[m]-before.Calls[m]) / float64(b.N) }
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
	b.ReportMetric(float64(store.RoundTrips()-trips)/float64(b.N), "db-write-round-trips/pass")
	b.ReportMetric(perPass("instances.List")+perPass("storage.ListVolumes"), "provider-lists/pass")
	b.ReportMetric(perPass("instances.Start")+perPass("storage.Provision"), "provider-actions/pass")
}

// ttlScans counts the TTL Manager's scans, to tell its passes apart.
type ttlScans struct {
	*pgstore.Store
	n int
}

func (s *ttlScans) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	if f == contracts.FilterTTL {
		s.n++
	}
	return s.Store.Scan(ctx, f, fn)
}
