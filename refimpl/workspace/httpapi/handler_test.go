package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
)

func TestWorkspaceLifecycle(t *testing.T) {
	e := newEnv(t)
	r := e.call(http.MethodPost, "/api/v1/workspaces", alice,
		`{"name":"dev","image_ref":"img:1","description":"my box","desired_state":"STANDBY","standby_ttl_seconds":600}`)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	ws := r.json(t)
	id := ws["id"].(string)
	require.Equal(t, "/api/v1/workspaces/"+id, r.header.Get("Location"))
	require.Equal(t, map[string]any{
		"id": id, "name": "dev", "description": "my box", "memo": nil, "image_ref": "img:1",
		"display_state": "PENDING", "observed_status": "PENDING", "health_status": "OK",
		"operation": "NONE", "desired_state": "STANDBY", "archive_key": nil, "error": nil,
		"standby_ttl_seconds": 600.0, "archive_ttl_seconds": 86400.0,
		"last_access_at": "2026-03-02T09:00:00Z", "created_at": "2026-03-02T09:00:00Z",
		"updated_at": "2026-03-02T09:00:00Z",
	}, ws)
	require.Equal(t, "alice", e.row(id).OwnerUserID)

	r = e.call(http.MethodGet, "/api/v1/workspaces", alice, "")
	require.Equal(t, http.StatusOK, r.status)
	list := r.json(t)["workspaces"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, id, list[0].(map[string]any)["id"])
	r = e.call(http.MethodGet, "/api/v1/workspaces", bob, "")
	require.Equal(t, `{"workspaces":[]}`+"\n", string(r.body))

	// The coordinator archives it: the display state follows.
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{ArchiveKey: contracts.Some("archives/" + id + "/op/home.tar.zst")})
	r = e.call(http.MethodGet, "/api/v1/workspaces/"+id, alice, "")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "ARCHIVED", r.json(t)["display_state"])

	r = e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice,
		`{"name":"dev2","memo":"note","desired_state":"RUNNING","archive_ttl_seconds":3600}`)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	ws = r.json(t)
	require.Equal(t, "dev2", ws["name"])
	require.Equal(t, "note", ws["memo"])
	require.Equal(t, "RUNNING", ws["desired_state"])
	require.Equal(t, 3600.0, ws["archive_ttl_seconds"])
	require.Equal(t, contracts.DesiredRunning, e.row(id).DesiredState)

	// "" clears a nullable text; the same desired state is a no-op.
	r = e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice, `{"memo":"","desired_state":"RUNNING"}`)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Nil(t, r.json(t)["memo"])

	r = e.call(http.MethodDelete, "/api/v1/workspaces/"+id, alice, "")
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"id": id, "deleted": true}, r.json(t))
	gone := e.row(id)
	require.True(t, gone.Deleted())
	require.Equal(t, contracts.DesiredPending, gone.DesiredState)

	e.call(http.MethodGet, "/api/v1/workspaces/"+id, alice, "").errorOf(t, 404, contracts.APINotFound)
	e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice, `{"name":"x"}`).errorOf(t, 404, contracts.APINotFound)
	e.call(http.MethodDelete, "/api/v1/workspaces/"+id, alice, "").errorOf(t, 404, contracts.APINotFound)
	require.Equal(t, `{"workspaces":[]}`+"\n", string(e.call(http.MethodGet, "/api/v1/workspaces", alice, "").body))
}

func TestErrorInfoIsShown(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	info := &contracts.ErrorInfo{Reason: contracts.ReasonDataLost, Message: "checksum mismatch", IsTerminal: true,
		Operation: contracts.OpRestoring, ErrorCount: 1, OccurredAt: t0.Add(time.Minute)}
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorMessage: contracts.Some(info.Message), ErrorCount: contracts.Some(1)})
	e.setRow(id, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	ws := e.call(http.MethodGet, "/api/v1/workspaces/"+id, alice, "").json(t)
	require.Equal(t, "ERROR", ws["display_state"])
	require.Equal(t, map[string]any{"message": "checksum mismatch", "reason": "DataLost", "count": 1.0,
		"terminal": true, "occurred_at": "2026-03-02T09:01:00Z"}, ws["error"])
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	for name, hdr := range map[string]string{
		"missing":         "",
		"unknown token":   "Bearer nope",
		"wrong scheme":    "Basic " + alice,
		"empty token":     "Bearer ",
		"no scheme":       alice,
		"token is a user": "Bearer alice",
	} {
		var r reply
		if hdr == "" {
			r = e.call(http.MethodGet, "/api/v1/workspaces", "", "")
		} else {
			r = e.call(http.MethodGet, "/api/v1/workspaces", "", "", "Authorization", hdr)
		}
		r.errorOf(t, http.StatusUnauthorized, contracts.APIUnauthorized)
		require.Equal(t, `Bearer realm="converge"`, r.header.Get("WWW-Authenticate"), name)
	}
	// The scheme is case-insensitive.
	r := e.call(http.MethodGet, "/api/v1/workspaces", "", "", "Authorization", "bearer "+alice)
	require.Equal(t, http.StatusOK, r.status)
	// Unknown API paths need credentials too.
	e.call(http.MethodGet, "/api/v1/nothing", "", "").errorOf(t, http.StatusUnauthorized, contracts.APIUnauthorized)
	// /healthz and /metrics do not.
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/healthz", "", "").status)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/metrics", "", "").status)
}

func TestOtherUsersWorkspacesAreNotFound(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	paths := []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/workspaces/" + id, ""},
		{http.MethodPatch, "/api/v1/workspaces/" + id, `{"name":"mine"}`},
		{http.MethodDelete, "/api/v1/workspaces/" + id, ""},
		{http.MethodGet, "/api/v1/workspaces/" + id + "/events", ""},
	}
	for _, p := range paths {
		e.call(p.method, p.path, bob, p.body).errorOf(t, http.StatusNotFound, contracts.APINotFound)
	}
	kept := e.row(id)
	require.Equal(t, "dev", kept.Name)
	require.False(t, kept.Deleted())

	// Ids that are not UUIDs, and unknown ones, are 404 the same way.
	for _, bad := range []string{"nope", "../x", "00000000-0000-0000-0000-00000000000g", "00000000-0000-4000-8000-000000000000"} {
		e.call(http.MethodGet, "/api/v1/workspaces/"+bad, alice, "").errorOf(t, http.StatusNotFound, contracts.APINotFound)
	}
	// Ids are case-insensitive.
	r := e.call(http.MethodGet, "/api/v1/workspaces/"+strings.ToUpper(id), alice, "")
	require.Equal(t, http.StatusOK, r.status)
}

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	item := "/api/v1/workspaces/" + id
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code, field, inMessage   string
	}{
		{"invalid json", "POST", "/api/v1/workspaces", `{"name":`, 400, "BAD_REQUEST", "", "invalid JSON"},
		{"syntax error offset", "POST", "/api/v1/workspaces", `{"name" "x"}`, 400, "BAD_REQUEST", "", "at byte"},
		{"two objects", "POST", "/api/v1/workspaces", `{} {}`, 400, "BAD_REQUEST", "", "single JSON object"},
		{"array", "POST", "/api/v1/workspaces", `[1]`, 400, "BAD_REQUEST", "", "JSON object"},
		{"null", "PATCH", item, `null`, 400, "BAD_REQUEST", "", "JSON object"},
		{"whitespace only", "PATCH", item, ` `, 400, "BAD_REQUEST", "", "required"},
		{"unknown field", "POST", "/api/v1/workspaces", `{"name":"a","image_ref":"i","colour":"red"}`, 400, "BAD_REQUEST", "colour", `"colour"`},
		{"memo on create", "POST", "/api/v1/workspaces", `{"name":"a","image_ref":"i","memo":"m"}`, 400, "BAD_REQUEST", "memo", `"memo"`},
		{"id on create", "POST", "/api/v1/workspaces", `{"name":"a","image_ref":"i","ID":"x"}`, 400, "BAD_REQUEST", "ID", `"ID"`},
		{"desired as number", "POST", "/api/v1/workspaces", `{"name":"a","image_ref":"i","desired_state":5}`, 400, "BAD_REQUEST", "desired_state", "must be a string"},
		{"ttl as string", "PATCH", item, `{"standby_ttl_seconds":"60"}`, 400, "BAD_REQUEST", "standby_ttl_seconds", "must be an integer"},
		{"ttl fractional", "PATCH", item, `{"archive_ttl_seconds":1.5}`, 400, "BAD_REQUEST", "archive_ttl_seconds", "must be an integer"},
		{"ttl overflow", "PATCH", item, `{"archive_ttl_seconds":1e40}`, 400, "BAD_REQUEST", "archive_ttl_seconds", "must be an integer"},
		{"name as object", "PATCH", item, `{"name":{"x":1}}`, 400, "BAD_REQUEST", "name", "must be a string"},
		{"unknown desired state", "PATCH", item, `{"desired_state":"ERROR"}`, 400, "BAD_REQUEST", "", "desired_state"},
		{"deleted desired state", "POST", "/api/v1/workspaces", `{"name":"a","image_ref":"i","desired_state":"DELETED"}`, 400, "BAD_REQUEST", "", "desired_state"},
		{"missing name", "POST", "/api/v1/workspaces", `{"image_ref":"i"}`, 400, "BAD_REQUEST", "", "name"},
		{"zero ttl", "PATCH", item, `{"standby_ttl_seconds":0}`, 400, "BAD_REQUEST", "", "standby_ttl_seconds"},
		{"empty name", "PATCH", item, `{"name":""}`, 400, "BAD_REQUEST", "", "name"},
	} {
		r := e.call(c.method, c.path, alice, c.body)
		errObj := r.errorOf(t, c.status, c.code)
		require.Contains(t, errObj["message"], c.inMessage, c.name)
		if c.field != "" {
			require.Equal(t, c.field, errObj["field"], c.name)
		}
	}
	// Nothing was changed by a rejected request.
	require.Equal(t, "dev", e.row(id).Name)
	require.Len(t, e.world.Store.Snapshot(), 1)

	// An empty body.
	e.call(http.MethodPost, "/api/v1/workspaces", alice, "", "Content-Type", "application/json").
		errorOf(t, 400, contracts.APIBadRequest)
	// Content types.
	e.call(http.MethodPost, "/api/v1/workspaces", alice, `{"name":"a","image_ref":"i"}`, "Content-Type", "text/plain").
		errorOf(t, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
	e.call(http.MethodPatch, item, alice, `{"name":"a"}`, "Content-Type", "").
		errorOf(t, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
	r := e.call(http.MethodPatch, item, alice, `{"name":"a"}`, "Content-Type", "application/json; charset=utf-8")
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
}

func TestOversizedBodies(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	big := `{"description":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice, big).errorOf(t, http.StatusRequestEntityTooLarge, contracts.APITooLarge)

	// Without a Content-Length (chunked), the limit still holds.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, e.srv.URL+"/api/v1/workspaces/"+id, strings.NewReader(big))
	require.NoError(t, err)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// Just under the limit is fine.
	ok := `{"description":"` + strings.Repeat("y", MaxBodyBytes-len(`{"description":""}`)) + `"}`
	require.Len(t, ok, MaxBodyBytes)
	r := e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice, ok)
	require.Equal(t, http.StatusOK, r.status, "body: %.200s", r.body)
}

func TestMethodsAndPaths(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPut, "/api/v1/workspaces/" + id, "GET, PATCH, DELETE"},
		{http.MethodDelete, "/api/v1/workspaces", "GET, POST"},
		{http.MethodGet, "/api/v1/workspaces/" + id + ":recover", "POST"},
		{http.MethodPost, "/api/v1/workspaces/" + id + "/events", "GET"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
		{http.MethodPost, "/metrics", "GET"},
	} {
		r := e.call(c.method, c.path, alice, "")
		r.errorOf(t, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
		require.Equal(t, c.allow, r.header.Get("Allow"), c.path)
	}
	for _, p := range []string{"/", "/api", "/api/v1", "/api/v1/", "/api/v2/workspaces", "/api/v1/workspaces/",
		"/api/v1/workspaces/" + id + "/logs", "/api/v1/workspaces/" + id + "/events/x", "/api/v1/workspaces/:recover",
		"/api/v1/users"} {
		e.call(http.MethodGet, p, alice, "").errorOf(t, http.StatusNotFound, contracts.APINotFound)
	}
	require.Equal(t, http.StatusOK, e.call(http.MethodHead, "/healthz", "", "").status)
}

func TestConflictsWhileAnOperationRunsOrInError(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	item := "/api/v1/workspaces/" + id
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(t0)})
	e.call(http.MethodPatch, item, alice, `{"desired_state":"RUNNING"}`).errorOf(t, http.StatusConflict, contracts.APIInvalidState)
	e.call(http.MethodDelete, item, alice, "").errorOf(t, http.StatusConflict, contracts.APIInvalidState)
	// Name, description, memo and TTL edits are allowed meanwhile.
	r := e.call(http.MethodPatch, item, alice, `{"name":"renamed","standby_ttl_seconds":90}`)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "PROVISIONING", r.json(t)["operation"])
	// PATCH to the current desired state is a 200 no-op.
	require.Equal(t, http.StatusOK, e.call(http.MethodPatch, item, alice, `{"desired_state":"PENDING"}`).status)

	// ERROR (a terminal error_info): desired changes are refused, DELETE
	// allowed.
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{Operation: contracts.Some(contracts.OpNone),
		ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true})})
	e.setRow(id, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	errObj := e.call(http.MethodPatch, item, alice, `{"desired_state":"STANDBY"}`).errorOf(t, http.StatusConflict, contracts.APIInvalidState)
	require.Contains(t, errObj["message"], "recover")
	require.Equal(t, http.StatusAccepted, e.call(http.MethodDelete, item, alice, "").status)
}

func TestRunningLimits(t *testing.T) {
	e := newEnv(t)
	a1 := e.create(alice, `{"name":"a1","image_ref":"img"}`)
	a2 := e.create(alice, `{"name":"a2","image_ref":"img"}`)
	e.setRow(a1, contracts.CompHealthMonitor, running())
	e.setRow(a2, contracts.CompHealthMonitor, running())

	r := e.call(http.MethodPost, "/api/v1/workspaces", alice, `{"name":"a3","image_ref":"img"}`)
	errObj := r.errorOf(t, http.StatusTooManyRequests, contracts.APILimitExceeded)
	want := []any{a1, a2}
	if a2 < a1 {
		want = []any{a2, a1}
	}
	require.Equal(t, map[string]any{
		"code": "workspace_limit_exceeded", "message": errObj["message"],
		"limit_type": "per_user", "current": 2.0, "max": 2.0, "running_workspaces": want,
	}, errObj)
	// Creating a non-running workspace is not limited; starting it is.
	a3 := e.create(alice, `{"name":"a3","image_ref":"img","desired_state":"STANDBY"}`)
	e.call(http.MethodPatch, "/api/v1/workspaces/"+a3, alice, `{"desired_state":"RUNNING"}`).
		errorOf(t, http.StatusTooManyRequests, contracts.APILimitExceeded)

	// Global: 3 running in all.
	b1 := e.create(bob, `{"name":"b1","image_ref":"img"}`)
	e.setRow(b1, contracts.CompHealthMonitor, running())
	errObj = e.call(http.MethodPost, "/api/v1/workspaces", carol, `{"name":"c1","image_ref":"img"}`).
		errorOf(t, http.StatusTooManyRequests, contracts.APILimitExceeded)
	require.Equal(t, "global", errObj["limit_type"])
	require.Equal(t, 3.0, errObj["current"])
	require.Equal(t, 3.0, errObj["max"])
	require.NotContains(t, errObj, "running_workspaces")
}

func TestRecovery(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	path := "/api/v1/workspaces/" + id + ":recover"

	// Not an admin: 403, even for the owner, and for ids that do not exist.
	e.call(http.MethodPost, path, alice, "").errorOf(t, http.StatusForbidden, contracts.APIForbidden)
	e.call(http.MethodPost, "/api/v1/workspaces/00000000-0000-4000-8000-000000000000:recover", bob, "").
		errorOf(t, http.StatusForbidden, contracts.APIForbidden)
	// Admin, but health is OK: 409.
	e.call(http.MethodPost, path, root, "").errorOf(t, http.StatusConflict, contracts.APIInvalidState)
	// Admin, unknown workspace: 404.
	e.call(http.MethodPost, "/api/v1/workspaces/00000000-0000-4000-8000-000000000000:recover", root, "").
		errorOf(t, http.StatusNotFound, contracts.APINotFound)

	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "STARTING timed out", IsTerminal: true, Operation: contracts.OpStarting, ErrorCount: 2}
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorMessage: contracts.Some(info.Message), ErrorCount: contracts.Some(2)})
	e.setRow(id, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	e.call(http.MethodPost, path, alice, "").errorOf(t, http.StatusForbidden, contracts.APIForbidden)
	require.NotNil(t, e.row(id).ErrorInfo)

	r := e.call(http.MethodPost, path, root, "")
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"id": id, "recovered": true}, r.json(t))
	got := e.row(id)
	require.Nil(t, got.ErrorInfo)
	require.Zero(t, got.ErrorCount)
}

func TestHealthz(t *testing.T) {
	var fail error
	e := newEnv(t, func(c *Config) { c.Health = func(context.Context) error { return fail } })
	r := e.call(http.MethodGet, "/healthz", "", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, map[string]any{"status": "ok"}, r.json(t))

	fail = errors.New("database: connection refused")
	r = e.call(http.MethodGet, "/healthz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	require.Equal(t, map[string]any{"status": "unavailable", "error": map[string]any{
		"code": "UNAVAILABLE", "message": "database: connection refused"}}, r.json(t))
}

func TestDependencyFailures(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	e.world.SetHook(func(c wsfakes.Call) error {
		if c.Port == "store" && c.Method == "Get" {
			return fmt.Errorf("read row: %w", contracts.ErrUnavailable)
		}
		if c.Port == "store" && c.Method == "List" {
			return errors.New("secret internal detail")
		}
		return nil
	})
	r := e.call(http.MethodGet, "/api/v1/workspaces/"+id, alice, "")
	r.errorOf(t, http.StatusServiceUnavailable, CodeUnavailable)
	require.Equal(t, "1", r.header.Get("Retry-After"))

	r = e.call(http.MethodGet, "/api/v1/workspaces", alice, "")
	errObj := r.errorOf(t, http.StatusInternalServerError, contracts.APIInternal)
	require.NotContains(t, errObj["message"], "secret")
}

// panicky is an API whose Get panics.
type panicky struct{ ports.API }

func (panicky) Get(context.Context, string, string) (contracts.Workspace, error) { panic("boom") }

func TestPanicsBecomeJSON500(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.API = panicky{c.API} })
	e.call(http.MethodGet, "/api/v1/workspaces/00000000-0000-4000-8000-000000000000", alice, "").
		errorOf(t, http.StatusInternalServerError, contracts.APIInternal)
}

func TestParseTokens(t *testing.T) {
	const t1, t2, t3 = "tok1-0123456789ab", "tok2-0123456789ab", "tok3-0123456789ab"
	tokens, admins, err := ParseTokens(" " + t1 + "=alice, " + t2 + "=bob:admin ," + t3 + "=bob:admin")
	require.NoError(t, err)
	require.Equal(t, map[string]string{t1: "alice", t2: "bob", t3: "bob"}, tokens)
	require.Equal(t, map[string]bool{"bob": true}, admins)

	for spec, msg := range map[string]string{
		"":                                   "entry 1 is empty",
		t1 + "=alice,":                       "entry 2 is empty",
		t1:                                   "entry 1: want token=user",
		"=alice":                             "entry 1: the token is empty",
		t1 + "=":                             "entry 1: the user name is empty",
		t1 + "=alice:root":                   `unknown role "root"`,
		t1 + "=alice," + t1 + "=bob":         "entry 2 repeats the token",
		t1 + "=alice," + t2 + "=alice:admin": `user "alice" is given the admin role by one token and not by another`,
		"sec ret=alice":                      "contains spaces",
		t1 + "=al ice":                       "user name is empty or contains spaces",
		"x=alice":                            "entry 1: the token has 1 characters; a token needs at least 16",
		t1 + "=alice,tok-0123456789a=bob":    "entry 2: the token has 15 characters",
	} {
		_, _, err := ParseTokens(spec)
		require.ErrorContains(t, err, msg, spec)
		require.NotContains(t, err.Error(), "sec ret", "errors never repeat a token")
		require.NotContains(t, err.Error(), "0123456789", "errors never repeat a token")
	}
}

func TestNewRequiresItsPorts(t *testing.T) {
	require.PanicsWithValue(t, "httpapi: Config.API is required", func() { New(Config{}) })
}

// Two Authorization headers are refused with 401 and the JSON error (issue
// 23: the first one won silently), whichever of them is valid.
func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, pair := range [][2]string{{alice, bob}, {alice, "nope"}, {"nope", alice}, {alice, alice}} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/api/v1/workspaces", nil)
		require.NoError(t, err)
		req.Header.Add("Authorization", "Bearer "+pair[0])
		req.Header.Add("Authorization", "Bearer "+pair[1])
		resp, err := e.srv.Client().Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		r := reply{status: resp.StatusCode, header: resp.Header, body: b}
		msg := r.errorOf(t, http.StatusUnauthorized, contracts.APIUnauthorized)["message"]
		require.Contains(t, msg, "more than one Authorization header")
	}
}

// Every error the handler answers is JSON, for the requests a client
// library will not send either (issue 23): the "*" and CONNECT forms, an
// absolute-form target, empty and dot segments, escaped slashes, unknown
// methods. (What net/http writes itself before any handler runs, such as
// 400 for an unparsable target or a missing Host, 431 and 505, is JSON
// through JSONErrors: TestNetHTTPsOwnErrorsAreJSON, DR450.)
func TestRawRequestsGetJSONErrors(t *testing.T) {
	e := newEnv(t)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	auth := "Authorization: Bearer " + alice + "\r\n"
	for _, c := range []struct {
		raw    string
		status int
	}{
		{"GET * HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound},
		{"CONNECT x:80 HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound},
		{"GET //api/v1/workspaces HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusNotFound},
		{"GET http://other/api/v1/nothing HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusNotFound},
		{"GET /api/v1/workspaces/../../healthz HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusNotFound},
		{"GET /api/v1/workspaces/x%2Fevents HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusNotFound},
		{"GET /api/v1/workspaces/%00 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusNotFound},
		{"BREW /api/v1/workspaces HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusMethodNotAllowed},
		{"TRACE /healthz HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusMethodNotAllowed},
		{"GET /api/v1/workspaces HTTP/1.0\r\n\r\n", http.StatusUnauthorized},
	} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = io.WriteString(conn, c.raw)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "%q", c.raw)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		conn.Close()
		r := reply{status: resp.StatusCode, header: resp.Header, body: b}
		require.Equal(t, c.status, r.status, "%q: %s", c.raw, b)
		r.errorOf(t, c.status, r.json(t)["error"].(map[string]any)["code"].(string))
	}
}
