package realtier

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/httpapi"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
)

// TestRunningLimitsOnPostgreSQL: SPEC 4.3 as amended, through the HTTP API
// on real PostgreSQL. A user's four sequential creates get two 201s and two
// 429s (a new user saw "4 of 2"); then 240 creates from 12 users at once
// leave exactly the global limit counting, no user over 2, every other
// request a 429 — and the audit trail PostgreSQL recorded, judged by the
// limits checker, shows no acceptance over a limit.
func TestRunningLimitsOnPostgreSQL(t *testing.T) {
	ctx := t.Context()
	store, err := pgstore.Open(ctx, testenv.PostgresDB(t), nil, pgstore.WithMaxConns(8))
	require.NoError(t, err)
	t.Cleanup(store.Close)
	require.NoError(t, store.Migrate(ctx))
	limits := contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 15}
	svc := api.New(ports.Deps{Instance: "api", Store: store, Clock: runner.Clock{}, IDs: runner.IDs{}, Limits: limits})
	const users = 12
	tokens := map[string]string{"tok-solo": "solo"}
	for i := range users {
		tokens[fmt.Sprintf("tok-%d", i)] = fmt.Sprintf("user-%d", i)
	}
	world := wsfakes.NewWorld(wsfakes.NewClock(time.Now()), history.NewRecorder()) // the event streams' bus only
	srv := httptest.NewServer(httpapi.New(httpapi.Config{API: svc, Tokens: tokens, Bus: world.Bus, Clock: runner.Clock{}}))
	t.Cleanup(srv.Close)
	create := func(token string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/workspaces",
			bytes.NewBufferString(`{"name":"dev","image_ref":"converge/workspace-agent:dev"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	var sequential []int
	for range 4 {
		sequential = append(sequential, create("tok-solo"))
	}
	require.Equal(t, []int{201, 201, 429, 429}, sequential, "desired RUNNING counts before anything runs")

	const perUser = 20
	statuses := make(chan int, users*perUser)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range users * perUser {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses <- create(fmt.Sprintf("tok-%d", i%users))
		}()
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	require.Equal(t, map[int]int{201: limits.MaxRunningGlobal - 2, 429: users*perUser - (limits.MaxRunningGlobal - 2)}, count)

	rows, err := store.List(ctx, contracts.FilterRunning)
	require.NoError(t, err)
	require.Len(t, rows, limits.MaxRunningGlobal, "the global limit is reached, never exceeded")
	per := map[string]int{}
	for i := range rows {
		per[rows[i].OwnerUserID]++
	}
	for u, n := range per {
		require.LessOrEqual(t, n, limits.MaxRunningPerUser, u)
	}

	events, err := store.History(ctx, 0)
	require.NoError(t, err)
	require.Len(t, events, limits.MaxRunningGlobal, "one audited insert per accepted request")
	var checker wsjudge.Checker
	for _, c := range wsjudge.All() {
		if c.Name() == "limits" {
			checker = c
		}
	}
	r := wsjudge.Check(wsjudge.Input{Events: events, Limits: limits}, checker)
	require.Empty(t, r.Violations)
}
