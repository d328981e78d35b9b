package api

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func newService(t *testing.T) (*Service, *wsfakes.World) {
	t.Helper()
	w := wsfakes.NewWorld(wsfakes.NewClock(t0), history.NewRecorder())
	deps := w.Deps("api")
	deps.IDs = wsfakes.NewIDs(1)
	deps.Limits = contracts.Limits{MaxRunningPerUser: 2, MaxRunningGlobal: 3}
	return New(deps), w
}

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

func requireAPIError(t *testing.T, err error, status int, code string) *contracts.APIError {
	t.Helper()
	var ae *contracts.APIError
	require.True(t, errors.As(err, &ae), "want an APIError %d, got %v", status, err)
	require.Equal(t, status, ae.Status, ae.Message)
	require.Equal(t, code, ae.Code)
	return ae
}

// setRow forces columns owned by other components, as the coordinator would
// have written them.
func setRow(t *testing.T, w *wsfakes.World, id string, comp contracts.Component, p contracts.Patch) {
	t.Helper()
	ok, err := w.Store.Update(t.Context(), contracts.Writer{Component: comp}, id, contracts.Cond{}, p)
	require.NoError(t, err)
	require.True(t, ok)
}

func TestCreateDefaultsAndValidation(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "dev", ImageRef: "img:1"})
	require.NoError(t, err)
	require.Equal(t, contracts.DesiredRunning, ws.DesiredState)
	require.Equal(t, t0, ws.LastAccessAt)
	require.Equal(t, contracts.VolumeName(ws.ID), ws.HomeStoreKey)
	got, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, "alice", got.OwnerUserID)
	require.Equal(t, contracts.DefaultStandbyTTLSeconds, got.StandbyTTLSeconds)

	for name, req := range map[string]ports.CreateRequest{
		"no name":        {ImageRef: "img"},
		"no image":       {Name: "n"},
		"bad desired":    {Name: "n", ImageRef: "i", DesiredState: str("ERROR")},
		"zero ttl":       {Name: "n", ImageRef: "i", StandbyTTLSeconds: num(0)},
		"negative ttl":   {Name: "n", ImageRef: "i", ArchiveTTLSeconds: num(-5)},
		"long name":      {Name: strings.Repeat("n", 256), ImageRef: "i"},
		"invalid utf-8":  {Name: "\xff", ImageRef: "i"},
		"deleted target": {Name: "n", ImageRef: "i", DesiredState: str("DELETED")},
	} {
		_, err := s.Create(ctx, "alice", req)
		requireAPIError(t, err, 400, contracts.APIBadRequest)
		_ = name
	}
}

func TestOtherUsersAndDeletedWorkspacesAre404(t *testing.T) {
	s, _ := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", DesiredState: str("PENDING")})
	require.NoError(t, err)
	_, err = s.Get(ctx, "bob", ws.ID)
	requireAPIError(t, err, 404, contracts.APINotFound)
	_, err = s.Patch(ctx, "bob", ws.ID, ports.PatchRequest{Name: str("x")})
	requireAPIError(t, err, 404, contracts.APINotFound)
	requireAPIError(t, s.Delete(ctx, "bob", ws.ID), 404, contracts.APINotFound)
	list, err := s.List(ctx, "bob")
	require.NoError(t, err)
	require.Empty(t, list)

	require.NoError(t, s.Delete(ctx, "alice", ws.ID))
	_, err = s.Get(ctx, "alice", ws.ID)
	requireAPIError(t, err, 404, contracts.APINotFound)
	requireAPIError(t, s.Delete(ctx, "alice", ws.ID), 404, contracts.APINotFound)
	_, err = s.Get(ctx, "alice", "no-such-id")
	requireAPIError(t, err, 404, contracts.APINotFound)
}

func TestDesiredStateRules(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "dev", ImageRef: "img", DesiredState: str("STANDBY")})
	require.NoError(t, err)

	before := w.Rec.Len()
	same, err := s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: str("STANDBY")})
	require.NoError(t, err, "PATCH to the current desired state is a 200 no-op")
	require.Equal(t, contracts.DesiredStandby, same.DesiredState)
	require.Equal(t, before, w.Rec.Len(), "a no-op writes nothing")

	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)})
	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: str("RUNNING")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)
	requireAPIError(t, s.Delete(ctx, "alice", ws.ID), 409, contracts.APIInvalidState)
	renamed, err := s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{Name: str("renamed"), Memo: str("m"), StandbyTTLSeconds: num(60)})
	require.NoError(t, err, "name, memo and TTL edits are allowed while an operation runs")
	require.Equal(t, "renamed", renamed.Name)

	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{Operation: contracts.Some(contracts.OpNone),
		ErrorInfo: contracts.Some(&contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true})})
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: str("RUNNING")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)
	require.NoError(t, s.Delete(ctx, "alice", ws.ID), "DELETE is allowed in ERROR with no operation")
	got, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.True(t, got.Deleted())
	require.Equal(t, contracts.DesiredPending, got.DesiredState)
}

func TestLimitsPerUserFirstThenGlobal(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	running := func(user string) string {
		ws, err := s.Create(ctx, user, ports.CreateRequest{Name: "n", ImageRef: "i"})
		require.NoError(t, err)
		setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})
		return ws.ID
	}
	a1, a2 := running("alice"), running("alice")
	_, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i"})
	ae := requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, "per_user", ae.Limit.LimitType)
	require.Equal(t, 2, ae.Limit.Current)
	require.Equal(t, 2, ae.Limit.Max)
	require.ElementsMatch(t, []string{a1, a2}, ae.Limit.RunningWorkspaces)

	// A STANDBY one is created and then refused the wake.
	standby, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("STANDBY")})
	require.NoError(t, err)
	_, err = s.Patch(ctx, "alice", standby.ID, ports.PatchRequest{DesiredState: str("RUNNING")})
	requireAPIError(t, err, 429, contracts.APILimitExceeded)

	running("bob")
	_, err = s.Create(ctx, "carol", ports.CreateRequest{Name: "n", ImageRef: "i"})
	ae = requireAPIError(t, err, 429, contracts.APILimitExceeded)
	require.Equal(t, "global", ae.Limit.LimitType)
	require.Empty(t, ae.Limit.RunningWorkspaces, "running_workspaces is for per_user only")

	_, err = s.Create(ctx, "carol", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err, "limits apply only to RUNNING")
}

func TestRecoverIsAdminOnlyAndNeedsError(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("PENDING")})
	require.NoError(t, err)
	requireAPIError(t, s.Recover(ctx, "admin", ws.ID), 409, contracts.APIInvalidState)
	info := &contracts.ErrorInfo{Reason: contracts.ReasonTimeout, IsTerminal: true}
	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorCount: contracts.Some(3)})
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})
	require.NoError(t, s.Recover(ctx, "admin", ws.ID))
	got, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.Nil(t, got.ErrorInfo)
	require.Zero(t, got.ErrorCount)
	last := lastWrite(t, w)
	require.Equal(t, contracts.CompAdmin, last.Component, "recovery is attributed to the admin exception of C3")
}

// lastWrite is the last store write recorded in w's history.
func lastWrite(t *testing.T, w *wsfakes.World) history.Event {
	t.Helper()
	evs := w.Rec.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == history.KindWrite {
			return evs[i]
		}
	}
	require.FailNow(t, "no write recorded")
	return history.Event{}
}

// TestRecoveryAmended: SPEC 4.3 as amended. Recovery clears error_message
// with error_info and error_count in one write, publishes monitor:trigger,
// and a desired-state change right after it is accepted although the
// HealthMonitor has not re-observed health yet.
func TestRecoveryAmended(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	sub, err := w.Bus.Subscribe(ctx, contracts.MonitorTriggerChannel)
	require.NoError(t, err)
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i"})
	require.NoError(t, err)
	info := &contracts.ErrorInfo{Reason: contracts.ReasonRetryExceeded, Message: "3 attempts failed: pull", IsTerminal: true, Operation: contracts.OpStarting}
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})
	setRow(t, w, ws.ID, contracts.CompStateReconciler, contracts.Patch{ErrorInfo: contracts.Some(info), ErrorCount: contracts.Some(3), ErrorMessage: contracts.Some(info.Message)})
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError)})

	_, err = s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: str("STANDBY")})
	requireAPIError(t, err, 409, contracts.APIInvalidState)

	require.NoError(t, s.Recover(ctx, "admin", ws.ID))
	rec := lastWrite(t, w)
	require.Equal(t, contracts.CompAdmin, rec.Component)
	require.ElementsMatch(t, []contracts.Column{contracts.ColErrorCount, contracts.ColErrorInfo, contracts.ColErrorMessage}, rec.Patch.Columns(),
		"one write resets the three columns")
	require.Equal(t, []ports.Message{{Channel: contracts.MonitorTriggerChannel, Payload: ws.ID}}, sub.Poll(),
		"recovery asks the HealthMonitor to observe now")

	got, err := s.Patch(ctx, "alice", ws.ID, ports.PatchRequest{DesiredState: str("STANDBY")})
	require.NoError(t, err, "a desired-state change right after recovery is accepted")
	require.Equal(t, contracts.DesiredStandby, got.DesiredState)
	row, err := w.Store.Get(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, contracts.HealthError, row.HealthStatus, "health is not re-observed yet")
	require.Empty(t, row.ErrorMessage)
	require.Nil(t, row.ErrorInfo)
}

func TestWakeAndTTLChangesGoThroughTheServiceConditionally(t *testing.T) {
	s, w := newService(t)
	ctx := t.Context()
	ws, err := s.Create(ctx, "alice", ports.CreateRequest{Name: "n", ImageRef: "i", DesiredState: str("STANDBY")})
	require.NoError(t, err)
	requireAPIError(t, s.Wake(ctx, ws.ID), 409, contracts.APIInvalidState) // still PENDING
	setRow(t, w, ws.ID, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})
	require.NoError(t, s.Wake(ctx, ws.ID))
	got, _ := w.Store.Get(ctx, ws.ID)
	require.Equal(t, contracts.DesiredRunning, got.DesiredState)
	last := w.Rec.Events()[w.Rec.Len()-1]
	require.Equal(t, contracts.CompAPI, last.Component)

	// The TTL Manager's change is conditioned on what it read.
	applied, err := s.SetDesiredFrom(ctx, ws.ID, contracts.DesiredStandby, contracts.DesiredPending, contracts.CompTTLManager)
	require.NoError(t, err)
	require.False(t, applied, "the user's newer RUNNING wins")
	applied, err = s.SetDesiredFrom(ctx, ws.ID, contracts.DesiredRunning, contracts.DesiredStandby, contracts.CompTTLManager)
	require.NoError(t, err)
	require.True(t, applied)

	fenced := s.WithEpoch(func() int64 { return 7 })
	require.ErrorIs(t, fenced.Touch(ctx, ws.ID, contracts.CompStateReconciler), contracts.ErrFenced, "a coordinator's own service writes under its epoch")
}
