package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// reversedScans is the reference on a store whose scans pass rows in
// descending id order: the HealthMonitor joins them by id with the
// provider listings (ordered by id, a guarantee of the ports checked by
// the behaviour suites: docs/decisions/workspaces-1-data-model.md, DR167), and must observe
// exactly what it observes on an ordered store, however the rows come.
type reversedScans struct{ ports.System }

func (s reversedScans) Name() string { return "reference-reversed-scans" }

func (s reversedScans) NewCoordinator(d ports.Deps) (ports.Coordinator, error) {
	d.Store = reversedStore{d.Store}
	return s.System.NewCoordinator(d)
}

type reversedStore struct{ ports.Store }

func (s reversedStore) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	rows, err := s.List(ctx, f)
	if err != nil {
		return err
	}
	for i := len(rows) - 1; i >= 0; i-- {
		fn(&rows[i])
	}
	return nil
}

// The order a store scans in changes nothing the reference does: the same
// seeds pass every checker, with the same operations and final states as
// on the ordered fakes.
func TestHealthJoinDoesNotDependOnScanOrder(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		cfg := wssim.Config{Seed: seed, Workspaces: 12, Duration: 12 * time.Hour, Quiet: wssim.DefaultQuiet, Faults: wssim.DefaultFaults()}
		cfg.System = wsref.NewSystem()
		_, ordered, err := wssim.Execute(context.Background(), cfg)
		require.NoError(t, err)
		cfg.System = reversedScans{wsref.NewSystem()}
		s, reversed, err := wssim.Execute(context.Background(), cfg)
		require.NoError(t, err)
		require.Empty(t, reversed.Failures, "seed %d", seed)
		for _, v := range reversed.Report.Violations {
			require.Failf(t, "violation", "seed %d: %s\n%v", seed, v, s.Evidence(v))
		}
		require.Equal(t, ordered.OpsCompleted, reversed.OpsCompleted, "seed %d", seed)
		require.Equal(t, ordered.Display, reversed.Display, "seed %d", seed)
	}
}
