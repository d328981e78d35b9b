package realtier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/scenarios"
)

// Scenario 1 on real services: PENDING → PROVISIONING → STANDBY → STARTING
// → RUNNING, with a real container answering on its agent.
func TestRealScenario1NewWorkspace(t *testing.T) {
	w := newWorld(t)
	w.start("coord-a", nil)
	id := w.create(contracts.DesiredRunning)
	w.wait(id, contracts.DisplayRunning, 2*time.Minute)
	tr := scenarios.TraceOf(w.rec.Events(), id)
	require.Equal(t, []string{"claim PROVISIONING", "complete PROVISIONING", "claim STARTING", "complete STARTING"}, tr.OpSummary())
	w.agentPut(id, "hello.txt", []byte("hello from the real tier\n"))
	require.Equal(t, []byte("hello from the real tier\n"), w.agentGet(id, "hello.txt"))
	w.judge()
}

// Scenarios 2 and 4 on real services: an idle STANDBY workspace is
// archived by its archive TTL (a real tar.zst in MinIO), then restored on
// request with the user's bytes back through the agent.
func TestRealScenarios2And4ArchiveTTLAndRestore(t *testing.T) {
	w := newWorld(t)
	w.start("coord-a", nil)
	id := w.create(contracts.DesiredRunning, func(r *ports.CreateRequest) { r.ArchiveTTLSeconds = ptr(120) })
	w.wait(id, contracts.DisplayRunning, 2*time.Minute)
	files := w.userData(id, 3)
	w.setDesired(id, contracts.DesiredStandby)
	w.wait(id, contracts.DisplayStandby, time.Minute)

	// Archive TTL: 120 s of the scaled clock after the stop's stamp.
	w.wait(id, contracts.DisplayArchived, 2*time.Minute)
	r := w.row(id)
	require.NotEmpty(t, r.ArchiveKey)
	objs, err := w.objs.List(w.ctx, contracts.ArchivePrefix+id+"/")
	require.NoError(t, err)
	require.Len(t, objs, 2, "the archive and its .meta")
	meta, err := w.objs.Get(w.ctx, contracts.MetaKey(r.ArchiveKey))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(meta), "sha256:"))
	vols, err := w.prov.ListVolumes(w.ctx)
	require.NoError(t, err)
	require.NotContains(t, vols, id, "the volume is gone once archived")

	mark := len(w.rec.Events())
	w.setDesired(id, contracts.DesiredRunning)
	w.wait(id, contracts.DisplayRunning, 3*time.Minute)
	tr := scenarios.TraceOf(w.rec.Events()[mark:], id)
	require.Equal(t, []string{"claim RESTORING", "complete RESTORING", "claim STARTING", "complete STARTING"}, tr.OpSummary())
	w.requireData(id, files)
	w.judge()
}

// Scenario 3 on real services: the container is killed; the reconciler
// starts it again and the data is still there.
func TestRealScenario3ContainerKilled(t *testing.T) {
	w := newWorld(t)
	w.start("coord-a", nil)
	id := w.create(contracts.DesiredRunning)
	w.wait(id, contracts.DisplayRunning, 2*time.Minute)
	files := w.userData(id, 2)
	mark := len(w.rec.Events())
	dockerKill(t, contracts.ContainerName(id))
	require.Eventually(t, func() bool {
		return len(scenarios.TraceOf(w.rec.Events()[mark:], id).Completed()) > 0
	}, 2*time.Minute, 100*time.Millisecond)
	tr := scenarios.TraceOf(w.rec.Events()[mark:], id)
	require.Equal(t, []string{"claim STARTING", "complete STARTING"}, tr.OpSummary())
	w.requireData(id, files)
	w.judge()
}

// crashAt fails an instance's ports with ErrCrashed from the first call
// that matches (fail-stop), as a process dying there would.
type crashAt struct {
	match   func(method string) bool
	crashed bool
	hit     chan struct{}
}

func (c *crashAt) gate(method string) error {
	if !c.crashed && c.match(method) {
		c.crashed = true
		close(c.hit)
	}
	if c.crashed {
		return fmt.Errorf("crashed by the test at %s: %w", method, contracts.ErrCrashed)
	}
	return nil
}

type crashStorage struct {
	ports.Storage
	c *crashAt
}

func (x crashStorage) Archive(ctx context.Context, id, op string) (string, error) {
	if err := x.c.gate("storage.Archive"); err != nil {
		return "", err
	}
	return x.Storage.Archive(ctx, id, op)
}

func (x crashStorage) DeleteVolume(ctx context.Context, id string) error {
	if err := x.c.gate("storage.DeleteVolume"); err != nil {
		return err
	}
	return x.Storage.DeleteVolume(ctx, id)
}

func (x crashStorage) ListVolumes(ctx context.Context) ([]string, error) {
	if err := x.c.gate("storage.ListVolumes"); err != nil {
		return nil, err
	}
	return x.Storage.ListVolumes(ctx)
}

type crashStore struct {
	ports.Store
	c *crashAt
}

func (x crashStore) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	m := "store.Update"
	if p.ArchiveKey.Set {
		m = "store.Update(archive_key)"
	}
	if err := x.c.gate(m); err != nil {
		return false, err
	}
	return x.Store.Update(ctx, w, id, cond, p)
}

func (x crashStore) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	if err := x.c.gate("store.List"); err != nil {
		return nil, err
	}
	return x.Store.List(ctx, f)
}

// Scenario 6 on real services: the leader crashes at each of ARCHIVING's
// three points; the standby finishes with one archive key and the data
// restores byte for byte.
func TestRealScenario6ArchivingCrashPoints(t *testing.T) {
	for _, point := range []string{"storage.Archive", "store.Update(archive_key)", "storage.DeleteVolume"} {
		t.Run(point, func(t *testing.T) {
			w := newWorld(t)
			armed := false
			c := &crashAt{match: func(m string) bool { return armed && m == point }, hit: make(chan struct{})}
			w.start("coord-a", func(d ports.Deps) ports.Deps {
				d.Storage, d.Store = crashStorage{d.Storage, c}, crashStore{d.Store, c}
				return d
			})
			require.Equal(t, "coord-a", w.leader())
			w.start("coord-b", nil)
			id := w.create(contracts.DesiredRunning)
			w.wait(id, contracts.DisplayRunning, 2*time.Minute)
			files := w.userData(id, 3)
			w.setDesired(id, contracts.DesiredStandby)
			w.wait(id, contracts.DisplayStandby, time.Minute)

			mark := len(w.rec.Events())
			armed = true
			w.setDesired(id, contracts.DesiredPending)
			select {
			case <-c.hit:
			case <-time.After(2 * time.Minute):
				t.Fatal("the crash point was never reached")
			}
			w.kill("coord-a")
			w.wait(id, contracts.DisplayArchived, 3*time.Minute)
			require.Equal(t, "coord-b", w.leader(), "the standby took over")
			tr := scenarios.TraceOf(w.rec.Events()[mark:], id)
			require.Equal(t, []string{"claim ARCHIVING", "complete ARCHIVING"}, tr.OpSummary())
			require.Equal(t, "coord-a", tr.Ops[0].Instance)
			require.Equal(t, "coord-b", tr.Ops[1].Instance)
			r := w.row(id)
			objs, err := w.objs.List(w.ctx, contracts.ArchivePrefix+id+"/")
			require.NoError(t, err)
			require.Len(t, objs, 2)
			require.Equal(t, r.ArchiveKey, objs[0].Key, "one archive key")

			w.setDesired(id, contracts.DesiredRunning)
			w.wait(id, contracts.DisplayRunning, 3*time.Minute)
			w.requireData(id, files)
			w.judge()
		})
	}
}

// Scenario 7 on real services: delete from RUNNING, then the GC removes the
// unprotected archive, but only after it was orphaned for 2 h (the scaled
// clock jumps ahead an hour at a time).
func TestRealScenario7DeleteAndGC(t *testing.T) {
	w := newWorld(t)
	w.start("coord-a", nil)
	id := w.create(contracts.DesiredRunning)
	w.wait(id, contracts.DisplayRunning, 2*time.Minute)
	w.userData(id, 1)
	require.Eventually(t, func() bool { return w.api.Delete(w.ctx, "alice", id) == nil }, 30*time.Second, 100*time.Millisecond)
	w.wait(id, contracts.DisplayDeleted, 3*time.Minute)
	tr := scenarios.TraceOf(w.rec.Events(), id)
	require.Equal(t, []string{"claim STOPPING", "complete STOPPING", "claim ARCHIVING", "complete ARCHIVING"}, tr.OpSummary()[4:])
	list := func() int {
		objs, err := w.objs.List(w.ctx, contracts.ArchivePrefix+id+"/")
		require.NoError(t, err)
		return len(objs)
	}
	require.Equal(t, 2, list())
	gcPasses := func() int {
		n := 0
		for _, e := range w.rec.Events() {
			if e.Method == "objects.List" {
				n++
			}
		}
		return n
	}
	for hour := 1; hour <= 2; hour++ {
		before := gcPasses()
		w.clock.Advance(time.Hour)
		require.Eventually(t, func() bool { return gcPasses() > before }, 30*time.Second, 50*time.Millisecond, "GC pass %d", hour)
		require.Equal(t, 2, list(), "not deleted before 2 h orphaned (hour %d)", hour)
	}
	before := gcPasses()
	w.clock.Advance(time.Hour)
	require.Eventually(t, func() bool { return gcPasses() > before && list() == 0 }, 30*time.Second, 50*time.Millisecond, "deleted after 2 h")
	r := w.judge()
	require.Positive(t, r.Exercised["c9-gc-protection"])
}
