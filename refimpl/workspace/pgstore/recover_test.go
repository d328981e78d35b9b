package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
)

// Eight concurrent recoveries across two API instances (two pools on one
// database), as in issue 23: the reset is a conditional UPDATE (error_info
// terminal, in the same statement), so exactly one succeeds and the
// others get 409 INVALID_STATE; the row's later, retryable error is never
// wiped by a late recovery.
func TestConcurrentRecoveriesAcrossInstances(t *testing.T) {
	e := newEnv(t)
	other, err := pgstore.Open(context.Background(), e.dsn, e.clock, pgstore.WithLogger(quietLogger(t)))
	require.NoError(t, err)
	t.Cleanup(other.Close)
	services := []*api.Service{
		api.New(ports.Deps{Store: e.s, Clock: e.clock, IDs: e.ids, Instance: "api-1"}),
		api.New(ports.Deps{Store: other, Clock: e.clock, IDs: e.ids, Instance: "api-2"}),
	}
	row := e.insert(t, 1)[0]
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "t", IsTerminal: true, Operation: contracts.OpStopping, ErrorCount: 3, OccurredAt: t0}
	ok, err := e.s.Update(t.Context(), reconciler(0), row.ID, contracts.Cond{},
		contracts.Patch{ErrorInfo: contracts.Some(info), ErrorCount: contracts.Some(3), ErrorMessage: contracts.Some("t")})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = e.s.Update(t.Context(), health(0), row.ID, contracts.Cond{}, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	require.NoError(t, err)
	require.True(t, ok)

	const admins = 8
	errs := make([]error, admins)
	var wg sync.WaitGroup
	for i := range admins {
		wg.Go(func() { errs[i] = services[i%2].Recover(t.Context(), "root", row.ID) })
	}
	wg.Wait()
	succeeded := 0
	for i, err := range errs {
		if err == nil {
			succeeded++
			continue
		}
		var ae *contracts.APIError
		require.True(t, errors.As(err, &ae), "recovery %d: %v", i, err)
		require.Equal(t, 409, ae.Status, "recovery %d: %v", i, err)
		require.Equal(t, contracts.APIInvalidState, ae.Code)
	}
	require.Equal(t, 1, succeeded, "exactly one of %d concurrent recoveries succeeds: %v", admins, errs)
	got := e.get(t, row.ID)
	require.Nil(t, got.ErrorInfo)
	require.Zero(t, got.ErrorCount)
	require.Equal(t, contracts.HealthError, got.HealthStatus, "health is the HealthMonitor's to re-observe")
}
