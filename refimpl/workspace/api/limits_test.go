package api

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// TestLimitsCountDesiredRunning: SPEC 4.3 as amended. Workspaces count as
// soon as they are desired RUNNING, so a user cannot create a third before
// the first two run (the "4 of 2" a new user saw).
func TestLimitsCountDesiredRunning(t *testing.T) {
	s, _ := newService(t)
	ctx := t.Context()
	var ids []string
	for range 2 {
		ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i"})
		require.NoError(t, err)
		ids = append(ids, ws.ID)
	}
	_, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i"})
	ae := requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, contracts.LimitPerUser, ae.Limit.LimitType)
	require.ElementsMatch(t, ids, ae.Limit.RunningWorkspaces)

	// Lowering one frees a place; raising another takes it.
	_, err = s.Patch(ctx, "alice", ids[0], ports.PatchRequest{DesiredState: str("STANDBY")})
	require.NoError(t, err)
	third, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("STANDBY")})
	require.NoError(t, err)
	_, err = s.Patch(ctx, "alice", third.ID, ports.PatchRequest{DesiredState: str("RUNNING")})
	require.NoError(t, err)
	_, err = s.Patch(ctx, "alice", ids[0], ports.PatchRequest{DesiredState: str("RUNNING")})
	requireAPIError(t, err, 429, contracts.APILimitExceeded)
}

// TestLimitsHoldUnderConcurrency: 300 parallel creates by 12 users against
// limits of 2 per user and 15 overall (360 concurrent creates once
// accepted 101 of 100). The check and the write are one step of the store,
// so exactly 15 are accepted, no user gets more than 2, and every other
// request is a 429 — whatever the interleaving.
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	s, w := newService(t)
	s.limits = contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 15}
	ctx := t.Context()
	const requests, users = 300, 12
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted = map[string]int{}
		refused  int
		failures []error
	)
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("user-%d", i%users)
			_, err := s.Create(ctx, user, ports.CreateRequest{Name: "n", ImageRef: "i"})
			mu.Lock()
			defer mu.Unlock()
			var ae *contracts.APIError
			switch {
			case err == nil:
				accepted[user]++
			case errors.As(err, &ae) && ae.Status == 429:
				refused++
			default:
				failures = append(failures, err)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failures)
	total := 0
	for user, n := range accepted {
		require.LessOrEqual(t, n, 2, "%s got %d running workspaces", user, n)
		total += n
	}
	require.Equal(t, 15, total, "the global limit is reached exactly, never exceeded")
	require.Equal(t, requests-15, refused)

	counted := 0
	for _, row := range w.Store.Snapshot() {
		if contracts.CountsRunning(&row) {
			counted++
		}
	}
	require.Equal(t, 15, counted, "the table agrees")
}
