package acme

import (
	"errors"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/ports"
)

// System is acme's control plane as converge plugs it in: coordinator
// instances and API processes built on the ports a harness hands over.
type System struct {
	// Logger receives the coordinator's log (default: discarded, as the
	// simulator runs thousands of instances).
	Logger *slog.Logger
}

var _ ports.System = (*System)(nil)

// NewSystem returns acme's control plane.
func NewSystem() ports.System { return &System{} }

// Name names the system in reports and replay files.
func (s *System) Name() string { return "acme" }

func (s *System) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func checkDeps(d ports.Deps, coordinator bool) error {
	missing := d.Store == nil || d.Clock == nil || d.IDs == nil || d.Bus == nil
	if coordinator {
		missing = missing || d.Leadership == nil || d.Feed == nil || d.Instances == nil || d.Storage == nil || d.Objects == nil
	}
	if missing {
		return errors.New("acme: incomplete ports.Deps")
	}
	if d.Limits.MaxRunningPerUser <= 0 || d.Limits.MaxRunningGlobal <= 0 {
		return errors.New("acme: the running limits must be positive")
	}
	return nil
}

// NewCoordinator builds one coordinator instance. It starts as a standby;
// its first Step tries to take the lead.
func (s *System) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	if err := checkDeps(deps, true); err != nil {
		return nil, err
	}
	return &coordinator{deps: deps, log: s.logger().With("instance", deps.Instance), svc: &service{deps: deps},
		failedAt: map[string]time.Time{}}, nil
}

// NewAPI builds the API service layer of one API process.
func (s *System) NewAPI(deps ports.Deps) (ports.API, error) {
	if err := checkDeps(deps, false); err != nil {
		return nil, err
	}
	return api{&service{deps: deps}}, nil
}
