package contracttest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

func newWorld(t *testing.T) *wsfakes.World {
	t.Helper()
	return wsfakes.NewWorld(wsfakes.NewClock(start), history.NewRecorder())
}

func TestFakeObjects(t *testing.T) {
	contracttest.Objects(t, func(t *testing.T) ports.Objects { return newWorld(t).Objects })
}

func TestFakeObjectsThroughInstanceView(t *testing.T) {
	contracttest.Objects(t, func(t *testing.T) ports.Objects { return newWorld(t).Deps("c1").Objects })
}

func TestFakeBus(t *testing.T) {
	contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
		w := newWorld(t)
		return contracttest.BusTarget{
			Bus:     w.Bus,
			Advance: func(_ *testing.T, d time.Duration) { w.Clock.Advance(d) },
			TTL:     5 * time.Minute,
		}
	})
}

func TestFakeBusThroughInstanceView(t *testing.T) {
	contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
		w := newWorld(t)
		return contracttest.BusTarget{
			Bus:     w.Deps("c1").Bus,
			Advance: func(_ *testing.T, d time.Duration) { w.Clock.Advance(d) },
		}
	})
}

// fakeStore is the StoreTarget of a fresh world: sessions are named, and
// killed by name.
func fakeStore(t *testing.T) contracttest.StoreTarget {
	w := newWorld(t)
	var (
		mu    sync.Mutex
		names = make(map[ports.Leadership]string)
	)
	return contracttest.StoreTarget{
		Store:   w.Store,
		Feed:    w.Store,
		Clock:   w.Clock,
		Advance: func(_ *testing.T, d time.Duration) { w.Clock.Advance(d) },
		NewSession: func(*testing.T) ports.Leadership {
			mu.Lock()
			defer mu.Unlock()
			name := fmt.Sprintf("session-%d", len(names)+1)
			s := w.Store.Session(name)
			names[s] = name
			return s
		},
		KillSession: func(t *testing.T, s ports.Leadership, _ ports.Lease) {
			mu.Lock()
			name, ok := names[s]
			mu.Unlock()
			require.True(t, ok, "a session of this target")
			w.Store.KillSession(name)
		},
	}
}

func TestFakeStore(t *testing.T) {
	contracttest.Store(t, fakeStore)
}

func TestFakeInstances(t *testing.T) {
	contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget {
		w := newWorld(t)
		return contracttest.InstancesTarget{
			Instances: w.Instances,
			Storage:   w.Storage,
			ImageRef:  "converge/workspace-agent:dev",
			Stop:      func(_ *testing.T, id string) { w.Instances.Kill(id) },
		}
	})
}

func TestFakeStorage(t *testing.T) {
	contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
		w := newWorld(t)
		return contracttest.StorageTarget{
			Storage:   w.Storage,
			Instances: w.Instances,
			Objects:   w.Objects,
			ImageRef:  "converge/workspace-agent:dev",
			WriteFile: func(t *testing.T, id, path string, data []byte) {
				t.Helper()
				require.NoError(t, w.Storage.WriteFile(id, path, data))
			},
			ReadFiles: func(t *testing.T, id string) map[string][]byte {
				t.Helper()
				files, ok := w.Storage.Files(id)
				require.True(t, ok, "volume of %s", id)
				return files
			},
		}
	})
}

// TestFakeStorageLeavesNothingBehind checks the suite's own cleanup: the
// data-plane suites may run against a shared Docker engine.
func TestFakeStorageLeavesNothingBehind(t *testing.T) {
	w := newWorld(t)
	t.Run("suite", func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			return contracttest.StorageTarget{
				Storage: w.Storage, Instances: w.Instances, Objects: w.Objects, ImageRef: "img",
				WriteFile: func(t *testing.T, id, path string, data []byte) {
					t.Helper()
					require.NoError(t, w.Storage.WriteFile(id, path, data))
				},
				ReadFiles: func(t *testing.T, id string) map[string][]byte {
					t.Helper()
					files, ok := w.Storage.Files(id)
					require.True(t, ok)
					return files
				},
			}
		})
		contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget {
			return contracttest.InstancesTarget{Instances: w.Instances, Storage: w.Storage, ImageRef: "img"}
		})
	})
	require.Empty(t, w.Storage.Volumes())
	require.Empty(t, w.Instances.Snapshot())
	require.NotEmpty(t, w.Stats().Calls, "the suites ran against this world")
}

func TestFakeAdvisoryLocks(t *testing.T) {
	contracttest.AdvisoryLocks(t, func(t *testing.T) contracttest.AdvisoryTarget {
		w := newWorld(t)
		n := 0
		return contracttest.AdvisoryTarget{NewSession: func(t *testing.T) contracttest.AdvisorySession {
			n++
			s := w.Store.Session(fmt.Sprintf("session-%d", n))
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			return s
		}}
	})
}
