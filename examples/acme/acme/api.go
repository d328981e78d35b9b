package acme

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// service is acme's API service layer (SPEC 4.3): the only writer of
// desired_state, deleted_at, the TTLs and last_access_at. The HTTP layer,
// the proxy's auto-wake, and the coordinator's TTL Manager and
// StateReconciler all write those columns through it.
type service struct {
	deps ports.Deps
	// mu serialises every limit check with the write it guards (SPEC 4.3:
	// concurrent requests never exceed a limit). This holds within one
	// API process; several processes would need the check and the write
	// in one transaction under an advisory lock, which the Store port
	// does not offer.
	mu sync.Mutex
}

// Bounds of what the API accepts.
const (
	maxNameChars     = 255
	maxImageRefChars = 512
	maxTextChars     = 64 * 1024
	maxTTLSeconds    = 10 * 365 * 24 * 3600
)

func apiError(status int, code, format string, args ...any) *contracts.APIError {
	return &contracts.APIError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	errNotFound  = apiError(http.StatusNotFound, contracts.APINotFound, "workspace not found")
	errNoUser    = apiError(http.StatusUnauthorized, contracts.APIUnauthorized, "missing or bad credentials")
	errErrorMode = apiError(http.StatusConflict, contracts.APIInvalidState, "the workspace is in ERROR: an administrator must recover it first")
)

func errBusy(op contracts.Operation) *contracts.APIError {
	return apiError(http.StatusConflict, contracts.APIInvalidState, "operation %s is in progress", op)
}

// checkText rejects what the store cannot hold (SPEC 4.3): invalid UTF-8,
// NUL characters, and more characters than the column allows.
func checkText(field, v string, maxChars int, required bool) error {
	switch {
	case required && strings.TrimSpace(v) == "":
		return apiError(http.StatusBadRequest, contracts.APIBadRequest, "%s is required", field)
	case !utf8.ValidString(v):
		return apiError(http.StatusBadRequest, contracts.APIBadRequest, "%s is not valid UTF-8", field)
	case strings.ContainsRune(v, 0):
		return apiError(http.StatusBadRequest, contracts.APIBadRequest, "%s contains a NUL character", field)
	case utf8.RuneCountInString(v) > maxChars:
		return apiError(http.StatusBadRequest, contracts.APIBadRequest, "%s is longer than %d characters", field, maxChars)
	}
	return nil
}

func checkTTL(field string, v *int) error {
	if v != nil && (*v < 1 || *v > maxTTLSeconds) {
		return apiError(http.StatusBadRequest, contracts.APIBadRequest, "%s must be between 1 and %d seconds", field, maxTTLSeconds)
	}
	return nil
}

func parseDesired(s string) (contracts.DesiredState, error) {
	d := contracts.DesiredState(s)
	if d != contracts.DesiredPending && d != contracts.DesiredStandby && d != contracts.DesiredRunning {
		return "", apiError(http.StatusBadRequest, contracts.APIBadRequest, "desired_state %q: want PENDING, STANDBY or RUNNING", s)
	}
	return d, nil
}

// visible returns workspace id as user may see it: another user's
// workspace, a soft-deleted one and a DELETED one are all 404.
func (s *service) visible(ctx context.Context, user, id string) (contracts.Workspace, error) {
	if user == "" {
		return contracts.Workspace{}, errNoUser
	}
	w, err := s.deps.Store.Get(ctx, id)
	switch {
	case errors.Is(err, contracts.ErrNotFound):
		return w, errNotFound
	case err != nil:
		return w, fmt.Errorf("read workspace %s: %w", id, err)
	case w.OwnerUserID != user || w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted:
		return w, errNotFound
	}
	return w, nil
}

// checkLimits refuses one more RUNNING workspace for owner when the
// per-user or the global limit is reached (SPEC 4.3, per-user first).
// self, already counted or not, is left out of the counts: asking again
// for what it already has takes no new slot. Callers hold s.mu.
func (s *service) checkLimits(ctx context.Context, owner, self string) error {
	rows, err := s.deps.Store.List(ctx, contracts.FilterAll)
	if err != nil {
		return fmt.Errorf("count running workspaces: %w", err)
	}
	var mine []string
	all := 0
	for i := range rows {
		w := &rows[i]
		if w.ID == self || !countsRunning(w) {
			continue
		}
		all++
		if w.OwnerUserID == owner {
			mine = append(mine, w.ID)
		}
	}
	sort.Strings(mine)
	l := s.deps.Limits
	switch {
	case len(mine) >= l.MaxRunningPerUser:
		return &contracts.APIError{Status: http.StatusTooManyRequests, Code: contracts.APILimitExceeded,
			Message: fmt.Sprintf("you already run %d of %d workspaces", len(mine), l.MaxRunningPerUser),
			Limit:   &contracts.LimitExceeded{LimitType: "per_user", Current: len(mine), Max: l.MaxRunningPerUser, RunningWorkspaces: mine}}
	case all >= l.MaxRunningGlobal:
		return &contracts.APIError{Status: http.StatusTooManyRequests, Code: contracts.APILimitExceeded,
			Message: fmt.Sprintf("the platform runs %d of %d workspaces", all, l.MaxRunningGlobal),
			Limit:   &contracts.LimitExceeded{LimitType: "global", Current: all, Max: l.MaxRunningGlobal}}
	}
	return nil
}

// api is the ports.API of an API process.
type api struct{ *service }

// Create is POST /workspaces.
func (a api) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	if user == "" {
		return contracts.Workspace{}, errNoUser
	}
	desired := contracts.DesiredRunning
	if req.DesiredState != nil {
		d, err := parseDesired(*req.DesiredState)
		if err != nil {
			return contracts.Workspace{}, err
		}
		desired = d
	}
	for _, err := range []error{
		checkText("name", req.Name, maxNameChars, true),
		checkText("image_ref", req.ImageRef, maxImageRefChars, true),
		checkText("description", req.Description, maxTextChars, false),
		checkTTL("standby_ttl_seconds", req.StandbyTTLSeconds),
		checkTTL("archive_ttl_seconds", req.ArchiveTTLSeconds),
	} {
		if err != nil {
			return contracts.Workspace{}, err
		}
	}
	id := req.ID
	if id == "" {
		id = a.deps.IDs.NewID()
	}
	now := a.deps.Clock.Now()
	w := contracts.NewWorkspace(id, user, req.Name, req.ImageRef, now)
	w.Description = req.Description
	w.DesiredState = desired
	w.LastAccessAt = now
	if req.StandbyTTLSeconds != nil {
		w.StandbyTTLSeconds = *req.StandbyTTLSeconds
	}
	if req.ArchiveTTLSeconds != nil {
		w.ArchiveTTLSeconds = *req.ArchiveTTLSeconds
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if desired == contracts.DesiredRunning {
		if err := a.checkLimits(ctx, user, id); err != nil {
			return contracts.Workspace{}, err
		}
	}
	if err := a.deps.Store.Insert(ctx, contracts.Writer{Component: contracts.CompAPI}, w); err != nil {
		return contracts.Workspace{}, fmt.Errorf("create workspace: %w", err)
	}
	return w, nil
}

// Get is GET /workspaces/{id}.
func (a api) Get(ctx context.Context, user, id string) (contracts.Workspace, error) {
	return a.visible(ctx, user, id)
}

// List is GET /workspaces: the caller's workspaces that are not deleted.
func (a api) List(ctx context.Context, user string) ([]contracts.Workspace, error) {
	if user == "" {
		return nil, errNoUser
	}
	rows, err := a.deps.Store.List(ctx, contracts.FilterActive)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	out := []contracts.Workspace{}
	for _, w := range rows {
		if w.OwnerUserID == user && !w.Deleted() {
			out = append(out, w)
		}
	}
	return out, nil
}

// Patch is PATCH /workspaces/{id}. A desired_state change is refused while
// an operation runs or the workspace is in ERROR, and the whole request
// with it: a request is applied entirely or not at all.
func (a api) Patch(ctx context.Context, user, id string, req ports.PatchRequest) (contracts.Workspace, error) {
	var p contracts.Patch
	for _, err := range []error{
		checkTTL("standby_ttl_seconds", req.StandbyTTLSeconds),
		checkTTL("archive_ttl_seconds", req.ArchiveTTLSeconds),
	} {
		if err != nil {
			return contracts.Workspace{}, err
		}
	}
	texts := []struct {
		field    string
		v        *string
		max      int
		required bool
		set      *contracts.Opt[string]
	}{
		{"name", req.Name, maxNameChars, true, &p.Name},
		{"description", req.Description, maxTextChars, false, &p.Description},
		{"memo", req.Memo, maxTextChars, false, &p.Memo},
	}
	for _, t := range texts {
		if t.v == nil {
			continue
		}
		if err := checkText(t.field, *t.v, t.max, t.required); err != nil {
			return contracts.Workspace{}, err
		}
		*t.set = contracts.Some(*t.v)
	}
	if req.StandbyTTLSeconds != nil {
		p.StandbyTTLSeconds = contracts.Some(*req.StandbyTTLSeconds)
	}
	if req.ArchiveTTLSeconds != nil {
		p.ArchiveTTLSeconds = contracts.Some(*req.ArchiveTTLSeconds)
	}
	var desired contracts.DesiredState
	if req.DesiredState != nil {
		d, err := parseDesired(*req.DesiredState)
		if err != nil {
			return contracts.Workspace{}, err
		}
		desired = d
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	w, err := a.visible(ctx, user, id)
	if err != nil {
		return w, err
	}
	cond := contracts.Cond{NotDeleted: true}
	if desired != "" && desired != w.DesiredState { // the same value is a no-op
		switch {
		case w.Operation != contracts.OpNone:
			return w, errBusy(w.Operation)
		case w.Terminal():
			// ERROR is judged by error_info, so that a change right after
			// a recovery is accepted before the HealthMonitor re-observes.
			return w, errErrorMode
		}
		if desired == contracts.DesiredRunning {
			if err := a.checkLimits(ctx, w.OwnerUserID, w.ID); err != nil {
				return w, err
			}
		}
		p.DesiredState = contracts.Some(desired)
		cond.Operation = contracts.Some(contracts.OpNone)
		cond.DesiredState = contracts.Some(w.DesiredState)
		cond.NotTerminal = true
	}
	if p.Empty() {
		return w, nil
	}
	if err := a.write(ctx, contracts.Writer{Component: contracts.CompAPI}, &w, cond, p); err != nil {
		return w, err
	}
	return w, nil
}

// write applies p to w under cond; a row that moved on between the read
// and the write (an operation claimed meanwhile) is a 409.
func (s *service) write(ctx context.Context, wr contracts.Writer, w *contracts.Workspace, cond contracts.Cond, p contracts.Patch) error {
	ok, err := s.deps.Store.Update(ctx, wr, w.ID, cond, p)
	switch {
	case err != nil:
		return fmt.Errorf("update workspace %s: %w", w.ID, err)
	case !ok:
		return apiError(http.StatusConflict, contracts.APIInvalidState, "the workspace changed meanwhile: read it again")
	}
	p.Apply(w, s.deps.Clock.Now())
	return nil
}

// Delete is DELETE /workspaces/{id}: a soft delete, refused while an
// operation runs (allowed in ERROR).
func (a api) Delete(ctx context.Context, user, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, err := a.visible(ctx, user, id)
	if err != nil {
		return err
	}
	if w.Operation != contracts.OpNone {
		return errBusy(w.Operation)
	}
	now := a.deps.Clock.Now()
	return a.write(ctx, contracts.Writer{Component: contracts.CompAPI}, &w,
		contracts.Cond{Operation: contracts.Some(contracts.OpNone), NotDeleted: true},
		contracts.Patch{DeletedAt: contracts.Some(now), DesiredState: contracts.Some(contracts.DesiredPending)})
}

// Recover is POST /workspaces/{id}:recover, for an administrator the
// HTTP layer has authenticated: it clears the error in one write and asks
// the HealthMonitor to look again.
func (a api) Recover(ctx context.Context, admin, id string) error {
	if admin == "" {
		return errNoUser
	}
	w, err := a.deps.Store.Get(ctx, id)
	switch {
	case errors.Is(err, contracts.ErrNotFound):
		return errNotFound
	case err != nil:
		return fmt.Errorf("read workspace %s: %w", id, err)
	case w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted:
		return errNotFound
	case !inError(&w):
		return apiError(http.StatusConflict, contracts.APIInvalidState, "the workspace is not in ERROR")
	}
	p := contracts.Patch{
		ErrorInfo:    contracts.Some[*contracts.ErrorInfo](nil),
		ErrorCount:   contracts.Some(0),
		ErrorMessage: contracts.Some(""),
	}
	// Only while error_info is terminal, in the write itself: health lags
	// behind a recovery until the HealthMonitor looks again, and a second
	// reset then would be one of a workspace no longer in ERROR.
	if err := a.write(ctx, contracts.Writer{Component: contracts.CompAdmin}, &w, contracts.Cond{NotDeleted: true, Terminal: true}, p); err != nil {
		return err
	}
	// A hint only (C2): if it is lost, the next pass observes it anyway.
	_ = a.deps.Bus.Publish(ctx, contracts.MonitorTriggerChannel, id)
	return nil
}

// Wake is the proxy's auto-wake of a STANDBY workspace: desired RUNNING
// through the service layer, limits applied. The proxy turns an error into
// its 502 page.
func (a api) Wake(ctx context.Context, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	w, err := a.deps.Store.Get(ctx, id)
	switch {
	case errors.Is(err, contracts.ErrNotFound):
		return errNotFound
	case err != nil:
		return fmt.Errorf("read workspace %s: %w", id, err)
	case w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted:
		return errNotFound
	case w.DesiredState == contracts.DesiredRunning:
		return nil
	case inError(&w):
		return errErrorMode
	case w.Operation != contracts.OpNone:
		return errBusy(w.Operation)
	case w.ObservedStatus != contracts.ObservedStandby:
		return apiError(http.StatusBadGateway, "WAKE_REFUSED", "workspace is %s: it needs a restore or a start, not a wake", contracts.Display(&w))
	}
	if err := a.checkLimits(ctx, w.OwnerUserID, w.ID); err != nil {
		return err
	}
	return a.write(ctx, contracts.Writer{Component: contracts.CompAPI, OnBehalf: contracts.CompProxy}, &w,
		contracts.Cond{Operation: contracts.Some(contracts.OpNone), DesiredState: contracts.Some(w.DesiredState), NotDeleted: true, NotTerminal: true},
		contracts.Patch{DesiredState: contracts.Some(contracts.DesiredRunning)})
}

// stampAccess moves last_access_at to at (SPEC 4.2.2), on behalf of the
// StateReconciler; it only moves forward (SPEC 4.4). wr carries the
// leader's epoch, so a deposed leader cannot land it.
func (s *service) stampAccess(ctx context.Context, wr contracts.Writer, w *contracts.Workspace, at time.Time) error {
	if !at.After(w.LastAccessAt) {
		return nil
	}
	wr.Component, wr.OnBehalf = contracts.CompAPI, contracts.CompStateReconciler
	ok, err := s.deps.Store.Update(ctx, wr, w.ID, contracts.Cond{Operation: contracts.Some(w.Operation)},
		contracts.Patch{LastAccessAt: contracts.Some(at)})
	switch {
	case err != nil:
		return fmt.Errorf("stamp last_access_at: %w", err)
	case !ok:
		return fmt.Errorf("stamp last_access_at: %s is no longer in progress", w.Operation)
	}
	w.LastAccessAt = at
	return nil
}

// lowerByTTL sets the desired state the TTL Manager asks for, only if the
// row still holds the desired state the decision was made on and no
// operation has started (SPEC 4.4: never over a newer user request).
func (s *service) lowerByTTL(ctx context.Context, wr contracts.Writer, w *contracts.Workspace, to contracts.DesiredState) error {
	wr.Component, wr.OnBehalf = contracts.CompAPI, contracts.CompTTLManager
	_, err := s.deps.Store.Update(ctx, wr, w.ID,
		contracts.Cond{Operation: contracts.Some(contracts.OpNone), DesiredState: contracts.Some(w.DesiredState), NotDeleted: true, NotTerminal: true},
		contracts.Patch{DesiredState: contracts.Some(to)})
	if err != nil {
		return fmt.Errorf("TTL: set desired %s: %w", to, err)
	}
	return nil
}
