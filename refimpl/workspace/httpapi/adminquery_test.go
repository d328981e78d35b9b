package httpapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestParseAdminQuery(t *testing.T) {
	q, e := parseAdminQuery(map[string][]string{"health": {"ERROR"}})
	require.Nil(t, e)
	require.Equal(t, contracts.AdminQuery{Health: contracts.HealthError}, q)
	q, e = parseAdminQuery(map[string][]string{"health": {"OK"}, "display": {"ARCHIVED"}})
	require.Nil(t, e)
	require.Equal(t, contracts.AdminQuery{Health: contracts.HealthOK, Display: contracts.DisplayArchived}, q)
	q, e = parseAdminQuery(nil)
	require.Nil(t, e)
	require.Equal(t, contracts.AdminQuery{}, q)

	for name, params := range map[string]map[string][]string{
		"bad health":        {"health": {"error"}},
		"empty health":      {"health": {""}},
		"bad display":       {"display": {"BROKEN"}},
		"repeated":          {"health": {"OK", "ERROR"}},
		"unknown parameter": {"owner": {"alice"}},
		"huge name":         {strings.Repeat("x", 10_000): {"1"}},
	} {
		_, e := parseAdminQuery(params)
		require.NotNil(t, e, name)
		require.Equal(t, 400, e.Status, name)
		require.Equal(t, contracts.APIBadRequest, e.Code, name)
		require.Less(t, len(e.Message), 200, "%s: the message stays short", name)
	}
}
