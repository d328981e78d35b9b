package api

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// Service is the API service layer.
type Service struct {
	store    ports.Store
	bus      ports.Bus
	clock    ports.Clock
	ids      ports.IDs
	limits   contracts.Limits
	instance string
	epoch    func() int64
}

// WithEpoch makes every write carry the epoch f returns: a coordinator's
// own service (TTL Manager, last_access_at stamps) is fenced with its leader
// epoch like its other writes.
func (s *Service) WithEpoch(f func() int64) *Service {
	c := *s
	c.epoch = f
	return &c
}

// New builds the service on deps (Store, Bus, Clock, IDs, Limits,
// Instance). Bus is optional: it carries recovery's monitor:trigger hint.
func New(deps ports.Deps) *Service {
	return &Service{store: deps.Store, bus: deps.Bus, clock: deps.Clock, ids: deps.IDs, limits: deps.Limits.OrDefaults(), instance: deps.Instance}
}

var (
	_ ports.API      = (*Service)(nil)
	_ ports.AdminAPI = (*Service)(nil)
)

// Validation bounds. Lengths are in characters (SPEC 4.3); name and
// image_ref are bounded by their columns (contracts.MaxChars), description
// and memo, unbounded text in the table, by the API.
const (
	maxTextChars  = 64 << 10
	maxTTLSeconds = 10 * 365 * 86400
)

func badRequest(format string, args ...any) *contracts.APIError {
	return &contracts.APIError{Status: 400, Code: contracts.APIBadRequest, Message: fmt.Sprintf(format, args...)}
}

func (s *Service) writer(onBehalf contracts.Component) contracts.Writer {
	w := contracts.Writer{Component: contracts.CompAPI, Instance: s.instance, OnBehalf: onBehalf}
	if s.epoch != nil {
		w.Epoch = s.epoch()
	}
	return w
}

// checkText validates a text field of a request: what the store cannot
// hold (a NUL character, invalid UTF-8, more characters than the column)
// is a 400 naming the field, never echoing the value.
func checkText(col contracts.Column, v string, required bool) *contracts.APIError {
	if required && v == "" {
		return badRequest("%s is required", col)
	}
	if err := contracts.CheckText(col, v); err != nil {
		return badRequest("%v", err)
	}
	if contracts.MaxChars(col) == 0 && len(v) > maxTextChars && utf8.RuneCountInString(v) > maxTextChars {
		return badRequest("%s is longer than %d characters", col, maxTextChars)
	}
	return nil
}

// storeError turns the store's rejections of a request's values into API
// errors: a running limit into 429 with its details, a value the table
// cannot hold into 400 (the validation above should have caught it).
func storeError(what string, err error) error {
	var le *contracts.LimitExceeded
	switch {
	case errors.As(err, &le):
		return &contracts.APIError{Status: 429, Code: contracts.APILimitExceeded, Message: le.Error(), Limit: le}
	case errors.Is(err, contracts.ErrInvalidInput):
		return badRequest("%v", err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func checkTTL(field string, v *int) *contracts.APIError {
	if v != nil && (*v <= 0 || *v > maxTTLSeconds) {
		return badRequest("%s must be between 1 and %d seconds", field, maxTTLSeconds)
	}
	return nil
}

// Create inserts a workspace owned by user.
func (s *Service) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	if e := checkText(contracts.ColName, req.Name, true); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkText(contracts.ColImageRef, req.ImageRef, true); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkText(contracts.ColDescription, req.Description, false); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkTTL("standby_ttl_seconds", req.StandbyTTLSeconds); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkTTL("archive_ttl_seconds", req.ArchiveTTLSeconds); e != nil {
		return contracts.Workspace{}, e
	}
	desired := contracts.DesiredRunning
	if req.DesiredState != nil {
		d, err := contracts.ParseDesiredState(*req.DesiredState)
		if err != nil {
			return contracts.Workspace{}, badRequest("%v", err)
		}
		desired = d
	}
	id := req.ID
	if id == "" {
		id = s.ids.NewID()
	}
	now := s.clock.Now()
	ws := contracts.NewWorkspace(id, user, req.Name, req.ImageRef, now)
	ws.Description = req.Description
	ws.DesiredState = desired
	ws.LastAccessAt = now
	if req.StandbyTTLSeconds != nil {
		ws.StandbyTTLSeconds = *req.StandbyTTLSeconds
	}
	if req.ArchiveTTLSeconds != nil {
		ws.ArchiveTTLSeconds = *req.ArchiveTTLSeconds
	}
	var err error
	if decide.NeedsLimitCheck(desired) {
		err = s.store.InsertWithinLimits(ctx, s.writer(""), ws, s.limits)
	} else {
		err = s.store.Insert(ctx, s.writer(""), ws)
	}
	if err != nil {
		return contracts.Workspace{}, storeError("create workspace "+id, err)
	}
	return ws, nil
}

// visible loads id for user and applies the visibility rule.
func (s *Service) visible(ctx context.Context, user, id string, admin bool) (contracts.Workspace, error) {
	w, err := s.store.Get(ctx, id)
	if errors.Is(err, contracts.ErrNotFound) {
		return contracts.Workspace{}, decide.CheckVisible(nil, user, admin)
	}
	if err != nil {
		return contracts.Workspace{}, fmt.Errorf("load workspace %s: %w", id, err)
	}
	if e := decide.CheckVisible(&w, user, admin); e != nil {
		return contracts.Workspace{}, e
	}
	return w, nil
}

// Get returns one of the caller's workspaces.
func (s *Service) Get(ctx context.Context, user, id string) (contracts.Workspace, error) {
	return s.visible(ctx, user, id, false)
}

// List returns the caller's visible workspaces, ordered by id.
func (s *Service) List(ctx context.Context, user string) ([]contracts.Workspace, error) {
	rows, err := s.store.List(ctx, contracts.FilterActive)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	out := rows[:0]
	for i := range rows {
		if decide.CheckVisible(&rows[i], user, false) == nil {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

// AdminList returns every workspace q selects, whoever owns it, ordered
// by id: the administrator's view for finding what to recover. The caller
// checks the admin role.
func (s *Service) AdminList(ctx context.Context, admin string, q contracts.AdminQuery) ([]contracts.Workspace, error) {
	rows, err := s.store.List(ctx, contracts.FilterAll)
	if err != nil {
		return nil, fmt.Errorf("list workspaces for %s: %w", admin, err)
	}
	out := rows[:0]
	for i := range rows {
		if q.Match(&rows[i]) {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

// Patch edits a workspace. A desired_state change follows SPEC 4.3's rules
// and the limits; other fields are always editable.
func (s *Service) Patch(ctx context.Context, user, id string, req ports.PatchRequest) (contracts.Workspace, error) {
	w, err := s.visible(ctx, user, id, false)
	if err != nil {
		return contracts.Workspace{}, err
	}
	var p contracts.Patch
	if req.Name != nil {
		if e := checkText(contracts.ColName, *req.Name, true); e != nil {
			return contracts.Workspace{}, e
		}
		p.Name = contracts.Some(*req.Name)
	}
	if req.Description != nil {
		if e := checkText(contracts.ColDescription, *req.Description, false); e != nil {
			return contracts.Workspace{}, e
		}
		p.Description = contracts.Some(*req.Description)
	}
	if req.Memo != nil {
		if e := checkText(contracts.ColMemo, *req.Memo, false); e != nil {
			return contracts.Workspace{}, e
		}
		p.Memo = contracts.Some(*req.Memo)
	}
	if e := checkTTL("standby_ttl_seconds", req.StandbyTTLSeconds); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkTTL("archive_ttl_seconds", req.ArchiveTTLSeconds); e != nil {
		return contracts.Workspace{}, e
	}
	if req.StandbyTTLSeconds != nil {
		p.StandbyTTLSeconds = contracts.Some(*req.StandbyTTLSeconds)
	}
	if req.ArchiveTTLSeconds != nil {
		p.ArchiveTTLSeconds = contracts.Some(*req.ArchiveTTLSeconds)
	}
	cond := contracts.Cond{NotDeleted: true}
	guard := false
	if req.DesiredState != nil {
		to, perr := contracts.ParseDesiredState(*req.DesiredState)
		if perr != nil {
			return contracts.Workspace{}, badRequest("%v", perr)
		}
		change, e := decide.CheckDesiredChange(&w, to)
		if e != nil {
			return contracts.Workspace{}, e
		}
		if change == decide.DesiredApply {
			guard = decide.NeedsLimitCheck(to)
			p.DesiredState = contracts.Some(to)
			cond.Operation = contracts.Some(contracts.OpNone)
			cond.DesiredState = contracts.Some(w.DesiredState)
			cond.NotTerminal = true
		}
	}
	if p.Empty() {
		return w, nil
	}
	if err := s.update(ctx, s.writer(""), id, cond, p, guard); err != nil {
		return contracts.Workspace{}, err
	}
	p.Apply(&w, s.clock.Now())
	return w, nil
}

// update applies p under cond, and under the running-limit guard when
// guard is set (a change to desired RUNNING); a failed condition means the
// row changed under the request (an operation started, or it was
// deleted): 409.
func (s *Service) update(ctx context.Context, wr contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, guard bool) error {
	var (
		ok  bool
		err error
	)
	if guard {
		ok, err = s.store.UpdateWithinLimits(ctx, wr, id, cond, p, s.limits)
	} else {
		ok, err = s.store.Update(ctx, wr, id, cond, p)
	}
	if err != nil {
		return storeError("update workspace "+id, err)
	}
	if !ok {
		return &contracts.APIError{Status: 409, Code: contracts.APIInvalidState, Message: "workspace changed concurrently (an operation may have started): retry"}
	}
	return nil
}

// Delete soft-deletes a workspace (202 at the HTTP layer).
func (s *Service) Delete(ctx context.Context, user, id string) error {
	w, err := s.visible(ctx, user, id, false)
	if err != nil {
		return err
	}
	if e := decide.CheckDelete(&w); e != nil {
		return e
	}
	cond := contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotDeleted: true}
	return s.update(ctx, s.writer(""), id, cond, decide.DeletePatch(s.clock.Now()), false)
}

// Recover is the administrator's reset of a workspace in ERROR (SPEC 4.3
// as amended): error_info, error_count and error_message in one write,
// then monitor:trigger, so the HealthMonitor re-observes the workspace now
// rather than at its next idle period. A desired-state change is accepted
// from the moment the reset commits.
func (s *Service) Recover(ctx context.Context, admin, id string) error {
	w, err := s.visible(ctx, admin, id, true)
	if err != nil {
		return err
	}
	if e := decide.CheckRecover(&w, true); e != nil {
		return e
	}
	// The reset applies only while error_info is terminal, checked in the
	// write itself: of concurrent recoveries (or one racing the
	// HealthMonitor's re-observation after another) exactly one resets the
	// row, and a late one never wipes an error recorded since.
	wr := contracts.Writer{Component: contracts.CompAdmin, Instance: s.instance}
	ok, err := s.store.Update(ctx, wr, id, contracts.Cond{Terminal: true}, contracts.RecoverPatch())
	if err != nil {
		return storeError("recover workspace "+id, err)
	}
	if !ok {
		return &contracts.APIError{Status: 409, Code: contracts.APIInvalidState, Message: "workspace is no longer in ERROR (recovered concurrently?)"}
	}
	if s.bus != nil {
		// A hint only (C2): the HealthMonitor's next pass re-observes the
		// workspace anyway.
		_ = s.bus.Publish(ctx, contracts.MonitorTriggerChannel, id)
	}
	return nil
}

// Wake is the proxy's auto-wake: a STANDBY workspace is set to desired
// RUNNING, limits applying.
func (s *Service) Wake(ctx context.Context, id string) error {
	w, err := s.store.Get(ctx, id)
	if errors.Is(err, contracts.ErrNotFound) {
		return decide.CheckVisible(nil, "", true)
	}
	if err != nil {
		return fmt.Errorf("load workspace %s: %w", id, err)
	}
	if w.Deleted() || w.ObservedStatus != contracts.ObservedStandby {
		return &contracts.APIError{Status: 409, Code: contracts.APIInvalidState, Message: "only a STANDBY workspace is woken; it is " + string(contracts.Display(&w))}
	}
	return s.setDesired(ctx, &w, contracts.DesiredRunning, contracts.CompProxy)
}

// SetDesiredFrom changes desired_state from `from` to `to` on behalf of a
// component (the TTL Manager), conditioned on the desired state it read so
// a newer user request is never overwritten. applied is false when the row
// moved on meanwhile.
func (s *Service) SetDesiredFrom(ctx context.Context, id string, from, to contracts.DesiredState, onBehalf contracts.Component) (applied bool, err error) {
	w, err := s.store.Get(ctx, id)
	if err != nil {
		return false, fmt.Errorf("load workspace %s: %w", id, err)
	}
	if w.DesiredState != from {
		return false, nil
	}
	if err := s.setDesired(ctx, &w, to, onBehalf); err != nil {
		var ae *contracts.APIError
		if errors.As(err, &ae) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (s *Service) setDesired(ctx context.Context, w *contracts.Workspace, to contracts.DesiredState, onBehalf contracts.Component) error {
	change, e := decide.CheckDesiredChange(w, to)
	if e != nil {
		return e
	}
	if change == decide.DesiredNoop {
		return nil
	}
	cond := contracts.Cond{
		Operation:    contracts.Some(contracts.OpNone),
		DesiredState: contracts.Some(w.DesiredState),
		NotDeleted:   true,
		NotTerminal:  true,
	}
	return s.update(ctx, s.writer(onBehalf), w.ID, cond, contracts.Patch{DesiredState: contracts.Some(to)}, decide.NeedsLimitCheck(to))
}

// Touch stamps last_access_at = now on behalf of a component (the
// StateReconciler at STARTING, STOPPING and RESTORING completion).
func (s *Service) Touch(ctx context.Context, id string, onBehalf contracts.Component) error {
	p := contracts.Patch{LastAccessAt: contracts.Some(s.clock.Now())}
	if _, err := s.store.Update(ctx, s.writer(onBehalf), id, contracts.Cond{}, p); err != nil {
		return fmt.Errorf("stamp last_access_at of %s: %w", id, err)
	}
	return nil
}
