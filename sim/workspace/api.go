package workspace

import (
	"context"
	"errors"
	"strconv"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// apiInstance names the API process in the history.
const apiInstance = "api"

// recordedAPI records every call of the system's API as a history.KindAPI
// event (method, arguments, result or error code) and counts them.
type recordedAPI struct {
	api ports.API
	s   *Sim
}

var _ ports.API = (*recordedAPI)(nil)

func (a *recordedAPI) record(method, ws, args, result string, err error) {
	a.s.apiCalls++
	e := history.Event{
		At:        a.s.clock.Now(),
		Kind:      history.KindAPI,
		Instance:  apiInstance,
		Workspace: ws,
		Method:    method,
		Args:      args,
	}
	if err != nil {
		e.Err = ErrorCode(err)
	} else {
		e.Result = result
	}
	a.s.rec.Add(e)
}

// ErrorCode renders an API error for the history: "409 INVALID_STATE" for
// an *contracts.APIError, the message of any other error.
func ErrorCode(err error) string {
	var ae *contracts.APIError
	if errors.As(err, &ae) {
		return strconv.Itoa(ae.Status) + " " + ae.Code
	}
	return err.Error()
}

// rowSummary is the part of a workspace an API result shows in the history.
func rowSummary(w *contracts.Workspace) string {
	return string(contracts.Display(w)) + " desired=" + string(w.DesiredState) + " op=" + string(w.Operation)
}

func (a *recordedAPI) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	w, err := a.api.Create(ctx, user, req)
	args := "user=" + user + " name=" + req.Name + " image=" + req.ImageRef
	if req.DesiredState != nil {
		args += " desired=" + *req.DesiredState
	}
	if req.StandbyTTLSeconds != nil {
		args += " standby_ttl=" + strconv.Itoa(*req.StandbyTTLSeconds)
	}
	if req.ArchiveTTLSeconds != nil {
		args += " archive_ttl=" + strconv.Itoa(*req.ArchiveTTLSeconds)
	}
	a.record("api.Create", w.ID, args, rowSummary(&w), err)
	return w, err
}

func (a *recordedAPI) Get(ctx context.Context, user, id string) (contracts.Workspace, error) {
	w, err := a.api.Get(ctx, user, id)
	a.record("api.Get", id, "user="+user, rowSummary(&w), err)
	return w, err
}

func (a *recordedAPI) List(ctx context.Context, user string) ([]contracts.Workspace, error) {
	ws, err := a.api.List(ctx, user)
	a.record("api.List", "", "user="+user, strconv.Itoa(len(ws))+" workspaces", err)
	return ws, err
}

func (a *recordedAPI) Patch(ctx context.Context, user, id string, req ports.PatchRequest) (contracts.Workspace, error) {
	w, err := a.api.Patch(ctx, user, id, req)
	args := "user=" + user
	if req.DesiredState != nil {
		args += " desired=" + *req.DesiredState
	}
	if req.StandbyTTLSeconds != nil {
		args += " standby_ttl=" + strconv.Itoa(*req.StandbyTTLSeconds)
	}
	if req.ArchiveTTLSeconds != nil {
		args += " archive_ttl=" + strconv.Itoa(*req.ArchiveTTLSeconds)
	}
	if req.Name != nil {
		args += " name=" + strconv.Quote(*req.Name)
	}
	if req.Description != nil {
		args += " description=" + strconv.Quote(*req.Description)
	}
	if req.Memo != nil {
		args += " memo=" + strconv.Quote(*req.Memo)
	}
	a.record("api.Patch", id, args, rowSummary(&w), err)
	return w, err
}

func (a *recordedAPI) Delete(ctx context.Context, user, id string) error {
	err := a.api.Delete(ctx, user, id)
	a.record("api.Delete", id, "user="+user, "accepted", err)
	return err
}

func (a *recordedAPI) Recover(ctx context.Context, admin, id string) error {
	err := a.api.Recover(ctx, admin, id)
	a.record("api.Recover", id, "admin="+admin, "recovered", err)
	return err
}

func (a *recordedAPI) Wake(ctx context.Context, id string) error {
	err := a.api.Wake(ctx, id)
	a.record("api.Wake", id, "", "woken", err)
	return err
}
