package api

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Service is the API service layer.
type Service struct {
	store    ports.Store
	clock    ports.Clock
	ids      ports.IDs
	limits   contracts.Limits
	instance string
	epoch    func() int64
	// skipLimits breaks the limits on purpose (the ignore-limits mutant).
	skipLimits bool
}

// WithoutLimits returns a service that accepts RUNNING over the running
// limits: a deliberately broken variant for the mutant catalogue only.
func (s *Service) WithoutLimits() *Service {
	c := *s
	c.skipLimits = true
	return &c
}

// WithEpoch makes every write carry the epoch f returns: a coordinator's
// own service (TTL Manager, last_access_at stamps) is fenced with its leader
// epoch like its other writes.
func (s *Service) WithEpoch(f func() int64) *Service {
	c := *s
	c.epoch = f
	return &c
}

// New builds the service on deps (Store, Clock, IDs, Limits, Instance).
func New(deps ports.Deps) *Service {
	l := deps.Limits
	if l.MaxRunningPerUser == 0 && l.MaxRunningGlobal == 0 {
		l = contracts.DefaultLimits
	}
	return &Service{store: deps.Store, clock: deps.Clock, ids: deps.IDs, limits: l, instance: deps.Instance}
}

var _ ports.API = (*Service)(nil)

// Validation bounds.
const (
	maxNameLen     = 255
	maxImageRefLen = 512
	maxTextLen     = 64 << 10
	maxTTLSeconds  = 10 * 365 * 86400
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

func checkText(field, v string, max int, required bool) *contracts.APIError {
	if required && v == "" {
		return badRequest("%s is required", field)
	}
	if !utf8.ValidString(v) {
		return badRequest("%s must be valid UTF-8", field)
	}
	if len(v) > max {
		return badRequest("%s is longer than %d bytes", field, max)
	}
	return nil
}

func checkTTL(field string, v *int) *contracts.APIError {
	if v != nil && (*v <= 0 || *v > maxTTLSeconds) {
		return badRequest("%s must be between 1 and %d seconds", field, maxTTLSeconds)
	}
	return nil
}

// Create inserts a workspace owned by user.
func (s *Service) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	if e := checkText("name", req.Name, maxNameLen, true); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkText("image_ref", req.ImageRef, maxImageRefLen, true); e != nil {
		return contracts.Workspace{}, e
	}
	if e := checkText("description", req.Description, maxTextLen, false); e != nil {
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
	if desired == contracts.DesiredRunning {
		if err := s.checkLimits(ctx, user); err != nil {
			return contracts.Workspace{}, err
		}
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
	if err := s.store.Insert(ctx, s.writer(""), ws); err != nil {
		return contracts.Workspace{}, fmt.Errorf("create workspace %s: %w", id, err)
	}
	return ws, nil
}

// visible loads id for user and applies the visibility rule.
func (s *Service) visible(ctx context.Context, user, id string, admin bool) (contracts.Workspace, error) {
	w, err := s.store.Get(ctx, id)
	if errors.Is(err, contracts.ErrNotFound) {
		return contracts.Workspace{}, contracts.CheckVisible(nil, user, admin)
	}
	if err != nil {
		return contracts.Workspace{}, fmt.Errorf("load workspace %s: %w", id, err)
	}
	if e := contracts.CheckVisible(&w, user, admin); e != nil {
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
		if contracts.CheckVisible(&rows[i], user, false) == nil {
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
		if e := checkText("name", *req.Name, maxNameLen, true); e != nil {
			return contracts.Workspace{}, e
		}
		p.Name = contracts.Some(*req.Name)
	}
	if req.Description != nil {
		if e := checkText("description", *req.Description, maxTextLen, false); e != nil {
			return contracts.Workspace{}, e
		}
		p.Description = contracts.Some(*req.Description)
	}
	if req.Memo != nil {
		if e := checkText("memo", *req.Memo, maxTextLen, false); e != nil {
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
	if req.DesiredState != nil {
		to, perr := contracts.ParseDesiredState(*req.DesiredState)
		if perr != nil {
			return contracts.Workspace{}, badRequest("%v", perr)
		}
		change, e := contracts.CheckDesiredChange(&w, to)
		if e != nil {
			return contracts.Workspace{}, e
		}
		if change == contracts.DesiredApply {
			if contracts.NeedsLimitCheck(to) {
				if err := s.checkLimits(ctx, w.OwnerUserID); err != nil {
					return contracts.Workspace{}, err
				}
			}
			p.DesiredState = contracts.Some(to)
			cond.Operation = contracts.Some(contracts.OpNone)
			cond.DesiredState = contracts.Some(w.DesiredState)
			cond.NotTerminal = true
		}
	}
	if p.Empty() {
		return w, nil
	}
	if err := s.update(ctx, s.writer(""), id, cond, p); err != nil {
		return contracts.Workspace{}, err
	}
	p.Apply(&w, s.clock.Now())
	return w, nil
}

// update applies p under cond; a failed condition means the row changed
// under the request (an operation started, or it was deleted): 409.
func (s *Service) update(ctx context.Context, wr contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) error {
	ok, err := s.store.Update(ctx, wr, id, cond, p)
	if err != nil {
		return fmt.Errorf("update workspace %s: %w", id, err)
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
	if e := contracts.CheckDelete(&w); e != nil {
		return e
	}
	cond := contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotDeleted: true}
	return s.update(ctx, s.writer(""), id, cond, contracts.DeletePatch(s.clock.Now()))
}

// Recover is the administrator's reset of a workspace in ERROR.
func (s *Service) Recover(ctx context.Context, admin, id string) error {
	w, err := s.visible(ctx, admin, id, true)
	if err != nil {
		return err
	}
	if e := contracts.CheckRecover(&w, true); e != nil {
		return e
	}
	wr := contracts.Writer{Component: contracts.CompAdmin, Instance: s.instance}
	return s.update(ctx, wr, id, contracts.Cond{}, contracts.RecoverPatch())
}

// Wake is the proxy's auto-wake: a STANDBY workspace is set to desired
// RUNNING, limits applying.
func (s *Service) Wake(ctx context.Context, id string) error {
	w, err := s.store.Get(ctx, id)
	if errors.Is(err, contracts.ErrNotFound) {
		return contracts.CheckVisible(nil, "", true)
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
	change, e := contracts.CheckDesiredChange(w, to)
	if e != nil {
		return e
	}
	if change == contracts.DesiredNoop {
		return nil
	}
	if contracts.NeedsLimitCheck(to) {
		if err := s.checkLimits(ctx, w.OwnerUserID); err != nil {
			return err
		}
	}
	cond := contracts.Cond{
		Operation:    contracts.Some(contracts.OpNone),
		DesiredState: contracts.Some(w.DesiredState),
		NotDeleted:   true,
		NotTerminal:  true,
	}
	return s.update(ctx, s.writer(onBehalf), w.ID, cond, contracts.Patch{DesiredState: contracts.Some(to)})
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

// checkLimits enforces the running limits (per user first).
func (s *Service) checkLimits(ctx context.Context, user string) error {
	if s.skipLimits {
		return nil
	}
	rows, err := s.store.List(ctx, contracts.FilterRunning)
	if err != nil {
		return fmt.Errorf("count running workspaces: %w", err)
	}
	var mine []string
	for i := range rows {
		if rows[i].OwnerUserID == user {
			mine = append(mine, rows[i].ID)
		}
	}
	if le := contracts.CheckLimits(s.limits, mine, len(rows)); le != nil {
		return &contracts.APIError{Status: 429, Code: contracts.APILimitExceeded, Message: le.Error(), Limit: le}
	}
	return nil
}
