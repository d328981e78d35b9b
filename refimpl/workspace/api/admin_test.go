package api

import (
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
