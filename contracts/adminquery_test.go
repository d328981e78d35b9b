package contracts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAdminQueryMatch(t *testing.T) {
	ok := row(withObserved(ObservedRunning))
	broken := row(withObserved(ObservedStandby), withHealth(HealthError))
	gone := row(withObserved(ObservedDeleted), withHealth(HealthError))
	archived := row(withArchiveKey("k"))
	require.True(t, AdminQuery{}.Match(ok))
	require.False(t, AdminQuery{}.Match(gone), "DELETED only when asked for")
	require.True(t, AdminQuery{Display: DisplayDeleted}.Match(gone))
	require.True(t, AdminQuery{Health: HealthError}.Match(broken))
	require.False(t, AdminQuery{Health: HealthError}.Match(ok))
	require.False(t, AdminQuery{Health: HealthError}.Match(gone))
	require.True(t, AdminQuery{Display: DisplayArchived}.Match(archived))
	require.False(t, AdminQuery{Health: HealthOK, Display: DisplayError}.Match(broken))
}
