package api

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

func TestAdminListAcrossUsers(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	a, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "a", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err)
	b, err := s.Create(ctx, "bob", ports.CreateRequest{Name: "b", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err)
	setRow(t, w, b.ID, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	gone, err := s.Create(ctx, "bob", ports.CreateRequest{Name: "g", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err)
	setRow(t, w, gone.ID, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedDeleted)})

	rows, err := s.AdminList(ctx, "root", contracts.AdminQuery{Health: contracts.HealthError})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, b.ID, rows[0].ID)

	rows, err = s.AdminList(ctx, "root", contracts.AdminQuery{})
	require.NoError(t, err)
	got := []string{rows[0].ID, rows[1].ID}
	require.ElementsMatch(t, []string{a.ID, b.ID}, got, "DELETED rows only when asked for")
	require.Less(t, rows[0].ID, rows[1].ID, "ordered by id")

	rows, err = s.AdminList(ctx, "root", contracts.AdminQuery{Display: contracts.DisplayDeleted})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, gone.ID, rows[0].ID)
}

// Concurrent recoveries of one workspace in ERROR (issue 23): the reset is
// conditioned on a terminal error_info in the write itself, so exactly one
// succeeds and the others get 409, although health is still ERROR for all
// of them (the HealthMonitor has not re-observed the row yet).
func TestConcurrentRecoveriesExactlyOneSucceeds(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err)
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorCount: contracts.Some(3)})
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})

	const admins = 8
	errs := make([]error, admins)
	var wg sync.WaitGroup
	for i := range admins {
		wg.Go(func() { errs[i] = s.Recover(ctx, "admin", ws.ID) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		requireAPIError(t, err, 409, contracts.APIInvalidState)
	}
	require.Equal(t, 1, ok, "exactly one of %d concurrent recoveries succeeds: %v", admins, errs)

	// A later recovery while a retryable error is being counted (health
	// still ERROR, error_info not terminal) resets nothing.
	retry := &contracts.ErrorInfo{Reason: contracts.ReasonActionFailed, ErrorCount: 1}
	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(retry), ErrorCount: contracts.Some(1)})
	requireAPIError(t, s.Recover(ctx, "admin", ws.ID), 409, contracts.APIInvalidState)
	got, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.ErrorCount, "the reconciler's attempt count is kept")
}
