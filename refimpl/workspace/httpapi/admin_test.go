package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// TestAdminListing: GET /api/v1/admin/workspaces lists every user's
// workspaces for an administrator, filtered by health and display state,
// so the ones to recover can be found; the query is validated.
func TestAdminListing(t *testing.T) {
	e := newEnv(t)
	a := e.create(alice, `{"name":"a","image_ref":"img","desired_state":"STANDBY"}`)
	b := e.create(bob, `{"name":"b","image_ref":"img","desired_state":"STANDBY"}`)
	c := e.create(carol, `{"name":"c","image_ref":"img","desired_state":"PENDING"}`)
	e.setRow(a, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})
	terminal := &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, Message: "checksum mismatch", IsTerminal: true}
	e.setRow(b, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(terminal), ErrorMessage: contracts.Some(terminal.Message)})
	e.setRow(b, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	require.Equal(t, http.StatusAccepted, e.call(http.MethodDelete, "/api/v1/workspaces/"+c, carol, "").status)

	list := func(query string) []map[string]any {
		t.Helper()
		r := e.call(http.MethodGet, "/api/v1/admin/workspaces"+query, root, "")
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		var body struct {
			Workspaces []map[string]any `json:"workspaces"`
		}
		require.NoError(t, json.Unmarshal(r.body, &body))
		require.NotNil(t, body.Workspaces, "an empty list is [], not null")
		return body.Workspaces
	}
	ids := func(ws []map[string]any) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w["id"].(string))
		}
		return out
	}

	broken := list("?health=ERROR")
	require.Equal(t, []string{b}, ids(broken), "what to recover")
	require.Equal(t, "bob", broken[0]["owner_user_id"])
	require.Equal(t, "ERROR", broken[0]["display_state"])
	require.Equal(t, "checksum mismatch", broken[0]["error"].(map[string]any)["message"])

	all := list("")
	require.ElementsMatch(t, []string{a, b, c}, ids(all), "every user's, the soft-deleted one included")
	for _, w := range all {
		if w["id"] == c {
			require.NotNil(t, w["deleted_at"])
		}
	}
	require.Equal(t, []string{a}, ids(list("?display=STANDBY&health=OK")))
	require.Empty(t, list("?display=DELETED"))
	require.Empty(t, list("?health=ERROR&display=RUNNING"))

	// Only administrators; credentials first.
	e.call(http.MethodGet, "/api/v1/admin/workspaces", "", "").errorOf(t, http.StatusUnauthorized, contracts.APIUnauthorized)
	e.call(http.MethodGet, "/api/v1/admin/workspaces?health=ERROR", alice, "").errorOf(t, http.StatusForbidden, contracts.APIForbidden)
	e.call(http.MethodPost, "/api/v1/admin/workspaces", root, "{}").errorOf(t, http.StatusMethodNotAllowed, CodeMethodNotAllowed)

	// A bad query is a 400 with a JSON body that names the problem.
	for query, want := range map[string]string{
		"?health=error":                        "health must be OK or ERROR",
		"?health=OK&health=ERROR":              "more than once",
		"?display=BROKEN":                      "display must be one of",
		"?owner=bob":                           `unknown query parameter "owner"`,
		"?health=%zz":                          "malformed query string",
		"?" + strings.Repeat("x", 5000) + "=1": "unknown query parameter",
	} {
		errObj := e.call(http.MethodGet, "/api/v1/admin/workspaces"+query, root, "").errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		require.Contains(t, errObj["message"], want, query)
		require.NotContains(t, errObj["message"], "xxxxx", "a long name is not echoed")
	}
}
