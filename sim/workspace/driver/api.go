package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// api is the API service layer run as child processes. One process serves
// one call at a time; calls that overlap (a simulator interleaving
// concurrent requests) get one process each, started on demand and kept,
// like replicas of a stateless API server. The idle process with the
// lowest number serves the next call, so the choice is deterministic.
type api struct {
	run  *run
	deps ports.Deps

	mu      sync.Mutex
	started int
	idle    []*session // ordered by number
	all     []*session
}

var _ ports.API = (*api)(nil)

func (a *api) start(ctx context.Context) (*session, error) {
	a.mu.Lock()
	a.started++
	n := a.started
	a.mu.Unlock()
	s, err := newSession(ctx, a.run, label(a.deps.Instance, n), wire.RoleAPI, a.deps)
	if err != nil {
		return nil, err
	}
	s.num = n
	a.mu.Lock()
	a.all = append(a.all, s)
	a.mu.Unlock()
	return s, nil
}

// acquire takes the lowest idle process, starting one if none is idle; a
// dead process is dropped and replaced.
func (a *api) acquire(ctx context.Context) (*session, error) {
	a.mu.Lock()
	for len(a.idle) > 0 {
		s := a.idle[0]
		a.idle = a.idle[1:]
		if s.dead == nil {
			a.mu.Unlock()
			return s, nil
		}
	}
	a.mu.Unlock()
	return a.start(ctx)
}

func (a *api) release(s *session) {
	if s.dead != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := 0
	for i < len(a.idle) && a.idle[i].num < s.num {
		i++
	}
	a.idle = append(a.idle[:i], append([]*session{s}, a.idle[i:]...)...)
}

func (a *api) stopAll() {
	a.mu.Lock()
	all := a.all
	a.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
}

// call runs one API call in a child and decodes its value into out.
func (a *api) call(ctx context.Context, method string, args wire.APIArgs, out any) error {
	if err := a.run.stopped(); err != nil {
		return err
	}
	s, err := a.acquire(ctx)
	if err != nil {
		return err
	}
	defer a.release(s)
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("driver: encode %s: %w", method, err)
	}
	req, err := s.request(wire.FromHarness{Type: wire.TAPI, Method: method, Args: raw})
	if err != nil {
		return err
	}
	m, err := s.exchange(ctx, req, wire.TDone)
	if err != nil {
		return err
	}
	if m.Error != nil {
		callErr, invalid := m.Error.Err()
		if invalid != nil {
			return s.fail(fmt.Errorf("%s: done: %w", method, invalid))
		}
		return callErr
	}
	if out == nil {
		return nil
	}
	if len(m.Value) == 0 {
		return s.fail(fmt.Errorf("%s: done without a value", method))
	}
	// Rows in the layout the Go client writes are read by hand, as
	// encoding/json reads them (DR607).
	switch o := out.(type) {
	case *wire.Workspace:
		if w, ok := wire.ParseWorkspace(m.Value); ok {
			*o = w
			return nil
		}
	case *[]wire.Workspace:
		if rows, ok := wire.ParseWorkspaces(m.Value); ok {
			*o = rows
			return nil
		}
	}
	if err := json.Unmarshal(m.Value, out); err != nil {
		return s.fail(fmt.Errorf("%s: done: value: %w", method, err))
	}
	return nil
}

// row runs a call that returns a workspace.
func (a *api) row(ctx context.Context, method string, args wire.APIArgs) (contracts.Workspace, error) {
	var w wire.Workspace
	if err := a.call(ctx, method, args, &w); err != nil {
		return contracts.Workspace{}, err
	}
	ws, err := w.Contracts()
	if err != nil {
		return contracts.Workspace{}, fmt.Errorf("driver: %s: the API returned a bad row: %w", method, err)
	}
	return ws, nil
}

func (a *api) Create(ctx context.Context, user string, req ports.CreateRequest) (contracts.Workspace, error) {
	c := wire.FromCreate(req)
	return a.row(ctx, wire.APICreate, wire.APIArgs{User: user, Create: &c})
}

func (a *api) Get(ctx context.Context, user, id string) (contracts.Workspace, error) {
	return a.row(ctx, wire.APIGet, wire.APIArgs{User: user, ID: id})
}

func (a *api) List(ctx context.Context, user string) ([]contracts.Workspace, error) {
	var rows []wire.Workspace
	if err := a.call(ctx, wire.APIList, wire.APIArgs{User: user}, &rows); err != nil {
		return nil, err
	}
	ws, err := wire.ContractsList(rows)
	if err != nil {
		return nil, fmt.Errorf("driver: list: the API returned a bad row: %w", err)
	}
	return ws, nil
}

func (a *api) Patch(ctx context.Context, user, id string, req ports.PatchRequest) (contracts.Workspace, error) {
	return a.row(ctx, wire.APIPatch, wire.APIArgs{User: user, ID: id, Patch: &req})
}

func (a *api) Delete(ctx context.Context, user, id string) error {
	return a.call(ctx, wire.APIDelete, wire.APIArgs{User: user, ID: id}, nil)
}

func (a *api) Recover(ctx context.Context, admin, id string) error {
	return a.call(ctx, wire.APIRecover, wire.APIArgs{Admin: admin, ID: id}, nil)
}

func (a *api) Wake(ctx context.Context, id string) error {
	return a.call(ctx, wire.APIWake, wire.APIArgs{ID: id}, nil)
}
