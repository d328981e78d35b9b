package acme

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
)

// newAPI is acme's API on converge's in-memory world, with limits of 2
// per user and 3 in all.
func newAPI(t *testing.T) (ports.API, *wsfakes.World) {
	t.Helper()
	world := wsfakes.NewWorld(wsfakes.NewClock(t0), history.NewRecorder())
	deps := world.Deps("api")
	deps.IDs = wsfakes.NewIDs(1)
	deps.Limits = contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3}
	a, err := NewSystem().NewAPI(deps)
	require.NoError(t, err)
	return a, world
}

func ptr[T any](v T) *T { return &v }

// requireAPIError requires err to be an API rejection with status and code.
func requireAPIError(t *testing.T, err error, status int, code string) *contracts.APIError {
	t.Helper()
	var ae *contracts.APIError
	require.True(t, errors.As(err, &ae), "want an API error %d %s, got %v", status, code, err)
	require.Equal(t, status, ae.Status, ae.Message)
	require.Equal(t, code, ae.Code, ae.Message)
	return ae
}

func create(t *testing.T, a ports.API, user string, desired contracts.DesiredState) contracts.Workspace {
	t.Helper()
	w, err := a.Create(context.Background(), user, ports.CreateRequest{Name: "dev", ImageRef: "img", DesiredState: ptr(string(desired))})
	require.NoError(t, err)
	return w
}

// set changes columns of row id behind the API's back, as the coordinator
// would.
func set(t *testing.T, world *wsfakes.World, id string, p contracts.Patch) {
	t.Helper()
	ok, err := world.Store.Update(context.Background(), contracts.Writer{Component: contracts.CompStateReconciler}, id, contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, ok)
}

func TestCreateValidates(t *testing.T) {
	a, _ := newAPI(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		user string
		req  ports.CreateRequest
		code string
	}{
		{"no user", "", ports.CreateRequest{Name: "dev", ImageRef: "img"}, contracts.APIUnauthorized},
		{"no name", "alice", ports.CreateRequest{Name: " ", ImageRef: "img"}, contracts.APIBadRequest},
		{"NUL in the name", "alice", ports.CreateRequest{Name: "a\x00b", ImageRef: "img"}, contracts.APIBadRequest},
		{"invalid UTF-8", "alice", ports.CreateRequest{Name: "a\xffb", ImageRef: "img"}, contracts.APIBadRequest},
		{"name of 256 characters", "alice", ports.CreateRequest{Name: strings.Repeat("é", 256), ImageRef: "img"}, contracts.APIBadRequest},
		{"no image", "alice", ports.CreateRequest{Name: "dev"}, contracts.APIBadRequest},
		{"bad desired state", "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", DesiredState: ptr("ERROR")}, contracts.APIBadRequest},
		{"zero standby TTL", "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", StandbyTTLSeconds: ptr(0)}, contracts.APIBadRequest},
		{"negative archive TTL", "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", ArchiveTTLSeconds: ptr(-1)}, contracts.APIBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Create(ctx, tc.user, tc.req)
			status := 400
			if tc.code == contracts.APIUnauthorized {
				status = 401
			}
			requireAPIError(t, err, status, tc.code)
		})
	}
	list, err := a.List(ctx, "alice")
	require.NoError(t, err)
	require.Empty(t, list, "nothing was created")

	w, err := a.Create(ctx, "alice", ports.CreateRequest{Name: strings.Repeat("é", 255), ImageRef: "img", StandbyTTLSeconds: ptr(600)})
	require.NoError(t, err, "255 characters fit, however many bytes")
	require.Equal(t, contracts.DesiredRunning, w.DesiredState, "RUNNING by default")
	require.Equal(t, 600, w.StandbyTTLSeconds)
	require.Equal(t, t0, w.LastAccessAt)
}

func TestVisibility(t *testing.T) {
	a, world := newAPI(t)
	ctx := context.Background()
	w := create(t, a, "alice", contracts.DesiredStandby)
	_, err := a.Get(ctx, "bob", w.ID)
	requireAPIError(t, err, 404, contracts.APINotFound)
	_, err = a.Patch(ctx, "bob", w.ID, ports.PatchRequest{Name: ptr("mine")})
	requireAPIError(t, err, 404, contracts.APINotFound)
	requireAPIError(t, a.Delete(ctx, "bob", w.ID), 404, contracts.APINotFound)
	list, err := a.List(ctx, "bob")
	require.NoError(t, err)
	require.Empty(t, list)

	require.NoError(t, a.Delete(ctx, "alice", w.ID))
	row, err := world.Store.Get(ctx, w.ID)
	require.NoError(t, err)
	require.True(t, row.Deleted())
	require.Equal(t, contracts.DesiredPending, row.DesiredState)
	_, err = a.Get(ctx, "alice", w.ID)
	requireAPIError(t, err, 404, contracts.APINotFound)
	requireAPIError(t, a.Delete(ctx, "alice", w.ID), 404, contracts.APINotFound)
}

func TestPatchRules(t *testing.T) {
	a, world := newAPI(t)
	ctx := context.Background()
	w := create(t, a, "alice", contracts.DesiredStandby)

	got, err := a.Patch(ctx, "alice", w.ID, ports.PatchRequest{DesiredState: ptr("STANDBY")})
	require.NoError(t, err, "the current desired state is a no-op")
	require.Equal(t, w.UpdatedAt, got.UpdatedAt, "nothing written")

	set(t, world, w.ID, contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)})
	_, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{DesiredState: ptr("RUNNING")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)
	_, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{DesiredState: ptr("RUNNING"), Memo: ptr("note")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)
	got, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{Memo: ptr("note"), StandbyTTLSeconds: ptr(900)})
	require.NoError(t, err, "edits other than desired_state are allowed while an operation runs")
	require.Equal(t, "note", got.Memo)
	require.Equal(t, 900, got.StandbyTTLSeconds)
	requireAPIError(t, a.Delete(ctx, "alice", w.ID), 409, contracts.APIInvalidState)

	terminal := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, Message: "late", IsTerminal: true, OccurredAt: t0}
	set(t, world, w.ID, contracts.Patch{Operation: contracts.Some(contracts.OpNone), ErrorInfo: contracts.Some(terminal), ErrorMessage: contracts.Some("late")})
	_, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{DesiredState: ptr("RUNNING")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)

	// Recovery, then a change at once: ERROR is judged by error_info,
	// before the HealthMonitor has looked again.
	requireAPIError(t, a.Recover(ctx, "", w.ID), 401, contracts.APIUnauthorized)
	require.NoError(t, a.Recover(ctx, "root", w.ID))
	row, err := world.Store.Get(ctx, w.ID)
	require.NoError(t, err)
	require.Nil(t, row.ErrorInfo)
	require.Zero(t, row.ErrorCount)
	requireAPIError(t, a.Recover(ctx, "root", w.ID), 409, contracts.APIInvalidState)
	_, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{DesiredState: ptr("RUNNING")})
	require.NoError(t, err)

	_, err = a.Patch(ctx, "alice", w.ID, ports.PatchRequest{Name: ptr("")})
	requireAPIError(t, err, 400, contracts.APIBadRequest)
}

// SPEC 4.3: a workspace counts when it is wanted or seen RUNNING, so a
// user cannot create more than the limit before the first one runs.
func TestLimits(t *testing.T) {
	a, world := newAPI(t)
	ctx := context.Background()
	first := create(t, a, "alice", contracts.DesiredRunning)
	create(t, a, "alice", contracts.DesiredRunning)
	_, err := a.Create(ctx, "alice", ports.CreateRequest{Name: "third", ImageRef: "img"})
	ae := requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, "per_user", ae.Limit.LimitType)
	require.Equal(t, 2, ae.Limit.Current)
	require.Len(t, ae.Limit.RunningWorkspaces, 2)

	standby := create(t, a, "alice", contracts.DesiredStandby)
	_, err = a.Patch(ctx, "alice", standby.ID, ports.PatchRequest{DesiredState: ptr("RUNNING")})
	requireAPIError(t, err, 429, contracts.APILimitExceeded)

	create(t, a, "bob", contracts.DesiredRunning)
	_, err = a.Create(ctx, "carol", ports.CreateRequest{Name: "dev", ImageRef: "img"})
	ae = requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, "global", ae.Limit.LimitType)
	require.Empty(t, ae.Limit.RunningWorkspaces, "other users' workspaces are not named")

	// A workspace in ERROR no longer counts.
	set(t, world, first.ID, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	_, err = a.Patch(ctx, "alice", standby.ID, ports.PatchRequest{DesiredState: ptr("RUNNING")})
	require.NoError(t, err)
}

func TestWake(t *testing.T) {
	a, world := newAPI(t)
	ctx := context.Background()
	w := create(t, a, "alice", contracts.DesiredStandby)
	err := a.Wake(ctx, w.ID)
	requireAPIError(t, err, 502, "WAKE_REFUSED") // still PENDING: a start is needed, not a wake
	set(t, world, w.ID, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})
	require.NoError(t, a.Wake(ctx, w.ID))
	row, err := world.Store.Get(ctx, w.ID)
	require.NoError(t, err)
	require.Equal(t, contracts.DesiredRunning, row.DesiredState)
	require.NoError(t, a.Wake(ctx, w.ID), "already wanted RUNNING: nothing to do")
	requireAPIError(t, a.Wake(ctx, "no-such-id"), 404, contracts.APINotFound)
}
