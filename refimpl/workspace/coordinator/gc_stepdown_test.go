package coordinator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// checkFault is the state of the one failing lock check.
type checkFault int

const (
	idle  checkFault = iota
	armed            // the next check fails
	fired            // it has failed
)

// flakyLeadership hands out leases whose check fails once, with an error
// that is neither a crash nor a fence (a dropped database session), when
// the fault is armed.
type flakyLeadership struct {
	ports.Leadership
	fault *checkFault
}

func (l flakyLeadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	lease, ok, err := l.Leadership.TryAcquire(ctx, holder)
	if lease != nil {
		lease = flakyLease{Lease: lease, fault: l.fault}
	}
	return lease, ok, err
}

type flakyLease struct {
	ports.Lease
	fault *checkFault
}

func (l flakyLease) Check(ctx context.Context) error {
	if *l.fault == armed {
		*l.fault = fired
		return errors.New("lock session: connection reset")
	}
	return l.Lease.Check(ctx)
}

// listingArms arms the lease's next check when the Archive GC lists the
// bucket, so that the check that fails is the GC's re-check before its
// deletion, not the step's own first check.
type listingArms struct {
	ports.Objects
	arm   *bool
	fault *checkFault
}

func (o listingArms) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	if *o.arm && *o.fault == idle {
		*o.fault = armed
	}
	return o.Objects.List(ctx, prefix)
}

// SPEC 3.1: when the lock check before an Archive GC deletion fails, the
// leader stops every component at once and returns to acquisition; it
// does not go on leading with the GC's pass merely skipped.
func TestAFailedCheckBeforeAGCDeletionGivesTheLeadershipUp(t *testing.T) {
	ctx := context.Background()
	clock := wsfakes.NewClock(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	w := wsfakes.NewWorld(clock, nil)
	// An orphaned archive: no row names its workspace.
	key := contracts.ArchiveKey("5b0c6a43-7c29-4c3e-9d55-0f1f3bb0a001", "5b0c6a43-7c29-4c3e-9d55-0f1f3bb0a002")
	require.NoError(t, w.Objects.Put(ctx, key, []byte("archive")))

	var arm bool
	var fault checkFault
	deps := w.Deps("c1")
	deps.IDs = wsfakes.NewIDs(1)
	deps.Leadership = flakyLeadership{Leadership: deps.Leadership, fault: &fault}
	deps.Objects = listingArms{Objects: deps.Objects, arm: &arm, fault: &fault}
	c := New(deps, Options{})

	// Lead and let the GC see the orphan and start its timer; once the
	// next pass owes the deletion (OrphanDelay after the first sighting),
	// arm the failure for that pass's re-check.
	_, err := c.Step(ctx)
	require.NoError(t, err)
	require.True(t, c.leader)
	start := clock.Now()
	for fault != fired {
		require.True(t, clock.Now().Before(start.Add(3*time.Hour)), "the GC's deletion pass never came")
		clock.Advance(30 * time.Second)
		arm = arm || clock.Now().Sub(start) >= decide.OrphanDelay-30*time.Minute
		_, err := c.Step(ctx)
		require.NoError(t, err)
	}
	ok, err := w.Objects.Head(ctx, key)
	require.NoError(t, err)
	require.True(t, ok, "nothing is deleted after a failed check")
	require.False(t, c.leader, "a failed check before a GC deletion gives the leadership up (SPEC 3.1)")
}
