package contracts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAdminQuery(t *testing.T) {
	q, e := ParseAdminQuery(map[string][]string{"health": {"ERROR"}})
	require.Nil(t, e)
	require.Equal(t, AdminQuery{Health: HealthError}, q)
	q, e = ParseAdminQuery(map[string][]string{"health": {"OK"}, "display": {"ARCHIVED"}})
	require.Nil(t, e)
	require.Equal(t, AdminQuery{Health: HealthOK, Display: DisplayArchived}, q)
	q, e = ParseAdminQuery(nil)
	require.Nil(t, e)
	require.Equal(t, AdminQuery{}, q)

	for name, params := range map[string]map[string][]string{
		"bad health":        {"health": {"error"}},
		"empty health":      {"health": {""}},
		"bad display":       {"display": {"BROKEN"}},
		"repeated":          {"health": {"OK", "ERROR"}},
		"unknown parameter": {"owner": {"alice"}},
		"huge name":         {strings.Repeat("x", 10_000): {"1"}},
	} {
		_, e := ParseAdminQuery(params)
		require.NotNil(t, e, name)
		require.Equal(t, 400, e.Status, name)
		require.Equal(t, APIBadRequest, e.Code, name)
		require.Less(t, len(e.Message), 200, "%s: the message stays short", name)
	}
}

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
