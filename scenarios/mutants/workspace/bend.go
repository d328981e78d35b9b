package workspace

import (
	"context"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// bend is a mutant: a base system whose coordinators and API see the
// world through wrapped ports, so that the unmodified reference behaves
// as if it had one bug. Nothing of the reference's code changes: a
// mutant bends what the reference reads, or what its calls do.
type bend struct {
	ports.System
	name string
	// coord wraps a coordinator instance's ports (nil: as given).
	coord func(ports.Deps) ports.Deps
	// api wraps the API service layer's ports (nil: as given).
	api func(ports.Deps) ports.Deps
	// wrap wraps each coordinator instance (nil: as built).
	wrap func(ports.Coordinator, ports.Deps) ports.Coordinator
	// wrapAPI wraps the API service layer, given its ports (nil: as
	// built): a request bent on its way in, an endpoint that skips a check.
	wrapAPI func(ports.API, ports.Deps) ports.API
}

func (b *bend) Name() string { return b.name }

func (b *bend) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	if b.coord != nil {
		deps = b.coord(deps)
	}
	c, err := b.System.NewCoordinator(deps)
	if err != nil || b.wrap == nil {
		return c, err
	}
	return b.wrap(c, deps), nil
}

func (b *bend) NewAPI(deps ports.Deps) (ports.API, error) {
	if b.api != nil {
		deps = b.api(deps)
	}
	api, err := b.System.NewAPI(deps)
	if err != nil || b.wrapAPI == nil {
		return api, err
	}
	return b.wrapAPI(api, deps), nil
}

// ---- port wrappers: each embeds the port and overrides what it bends ----

// storeHook bends a Store: list rewrites the rows a listing returns (the
// reader's view only, nothing stored changes); update rewrites a write
// before it reaches the store; mark rewrites the writer of an observation
// pass's stamps (MarkObserved).
type storeHook struct {
	ports.Store
	list   func(f contracts.Filter, rows []contracts.Workspace)
	update func(ctx context.Context, w *contracts.Writer, id string, c *contracts.Cond, p *contracts.Patch)
	mark   func(w *contracts.Writer)
}

func (s storeHook) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	if s.mark != nil {
		s.mark(&w)
	}
	return s.Store.MarkObserved(ctx, w, ids, at)
}

func (s storeHook) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	rows, err := s.Store.List(ctx, f)
	if err == nil && s.list != nil {
		s.list(f, rows)
	}
	return rows, err
}

// Scan bends each row as List bends a listing: the hook sees a listing of
// one row.
func (s storeHook) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	if s.list == nil {
		return s.Store.Scan(ctx, f, fn)
	}
	one := make([]contracts.Workspace, 1)
	return s.Store.Scan(ctx, f, func(w *contracts.Workspace) {
		one[0] = *w
		s.list(f, one)
		fn(&one[0])
	})
}

func (s storeHook) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	if s.update != nil {
		s.update(ctx, &w, id, &c, &p)
	}
	return s.Store.Update(ctx, w, id, c, p)
}

func (s storeHook) UpdateMany(ctx context.Context, w contracts.Writer, u []ports.RowUpdate) error {
	if s.update != nil {
		for i := range u {
			s.update(ctx, &w, u[i].ID, &u[i].Cond, &u[i].Patch)
		}
	}
	return s.Store.UpdateMany(ctx, w, u)
}

// withStore bends deps.Store.
func withStore(d ports.Deps, list func(contracts.Filter, []contracts.Workspace), update func(context.Context, *contracts.Writer, string, *contracts.Cond, *contracts.Patch)) ports.Deps {
	d.Store = storeHook{Store: d.Store, list: list, update: update}
	return d
}

// isClaim reports whether a write claims an operation.
func isClaim(c *contracts.Cond, p *contracts.Patch) bool {
	return p.Operation.Set && p.Operation.V != contracts.OpNone && c.Operation.Set && c.Operation.V == contracts.OpNone
}
