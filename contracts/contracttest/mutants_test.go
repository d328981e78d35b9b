package contracttest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/contracttest"
	"github.com/wsconverge/converge/contracts/ports"
)

// The suites must have teeth: each mutant below is a fake broken in one
// way, and running the suite of its port against it must fail. A mutant
// runs in a child process (a failing suite fails its test binary), chosen
// by the environment variable mutantEnv.

const mutantEnv = "CONTRACTTEST_MUTANT"

// mutants maps a name to a run of one suite against one broken fake.
var mutants = map[string]func(t *testing.T){
	// Objects.
	"objects/list-unsorted": func(t *testing.T) {
		contracttest.Objects(t, func(t *testing.T) ports.Objects { return listReversed{newWorld(t).Objects} })
	},
	"objects/get-missing-is-empty": func(t *testing.T) {
		contracttest.Objects(t, func(t *testing.T) ports.Objects { return getMissingEmpty{newWorld(t).Objects} })
	},
	"objects/delete-absent-fails": func(t *testing.T) {
		contracttest.Objects(t, func(t *testing.T) ports.Objects { return deleteAbsentFails{newWorld(t).Objects} })
	},
	"objects/list-without-sizes": func(t *testing.T) {
		contracttest.Objects(t, func(t *testing.T) ports.Objects { return listNoSizes{newWorld(t).Objects} })
	},

	// Advisory locks: the fake lock as it was, a boolean per key.
	"advisory/boolean-lock": func(t *testing.T) {
		contracttest.AdvisoryLocks(t, func(t *testing.T) contracttest.AdvisoryTarget {
			w := newWorld(t)
			n := 0
			return contracttest.AdvisoryTarget{NewSession: func(t *testing.T) contracttest.AdvisorySession {
				n++
				return &booleanLock{AdvisorySession: w.Store.Session("s" + strconv.Itoa(n)), held: map[int64]bool{}}
			}}
		})
	},

	// Bus.
	"bus/ttl-ignored": func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return busTarget(t, func(b ports.Bus) ports.Bus { return ttlIgnored{b} })
		})
	},
	"bus/setnx-overwrites": func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return busTarget(t, func(b ports.Bus) ports.Bus { return setNXOverwrites{b} })
		})
	},
	"bus/close-keeps-delivering": func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return busTarget(t, func(b ports.Bus) ports.Bus { return closeIgnored{b} })
		})
	},
	"bus/decr-increments": func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return busTarget(t, func(b ports.Bus) ports.Bus { return decrIncrements{b} })
		})
	},

	"bus/incr-read-then-write": func(t *testing.T) {
		contracttest.Bus(t, func(t *testing.T) contracttest.BusTarget {
			return busTarget(t, func(b ports.Bus) ports.Bus { return incrReadThenWrite{b} })
		})
	},

	// Store.
	"store/claim-read-then-write": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return claimReadThenWrite{s} }))
	},
	"store/ttl-filter-is-active": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return wrongFilter{s} }))
	},
	"store/list-unordered": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return listUnordered{s} }))
	},
	"store/cond-ignored": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return condIgnored{s} }))
	},
	"store/update-unfenced": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return updateUnfenced{s} }))
	},
	"store/update-many-unfenced": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return updateManyUnfenced{s} }))
	},
	"store/mark-observed-unfenced": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return markObservedUnfenced{s} }))
	},
	"store/update-missing-is-refused-cas": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return missingRefused{s} }))
	},
	"store/error-context-lost": func(t *testing.T) {
		contracttest.Store(t, mutStore(func(s ports.Store) ports.Store { return contextLost{s} }))
	},
	"store/lease-never-lost": func(t *testing.T) {
		contracttest.Store(t, mutSessions(func(l ports.Lease) ports.Lease { return checkAlwaysOK{l} }))
	},
	"store/epoch-skips": func(t *testing.T) {
		contracttest.Store(t, mutSessions(func(l ports.Lease) ports.Lease { return doubledEpoch{l} }))
	},
	"store/feed-duplicates": func(t *testing.T) {
		contracttest.Store(t, func(t *testing.T) contracttest.StoreTarget {
			x := fakeStore(t)
			x.Feed = duplicatingFeed{x.Feed}
			return x
		})
	},

	// Instances and Storage.
	"instances/start-provisions": func(t *testing.T) {
		contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget {
			x := fakeInstances(t)
			x.Instances = startProvisions{x.Instances, x.Storage}
			return x
		})
	},
	"instances/delete-absent-fails": func(t *testing.T) {
		contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget {
			x := fakeInstances(t)
			x.Instances = deleteAbsentContainerFails{x.Instances}
			return x
		})
	},
	"storage/archive-always-uploads": func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			x := fakeStorage(t)
			x.Storage = archiveAlwaysUploads{x.Storage, x.Objects}
			return x
		})
	},
	"storage/delete-volume-in-use": func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			x := fakeStorage(t)
			x.Storage = deleteVolumeEvicts{x.Storage, x.Instances}
			return x
		})
	},
	"instances/list-unordered": func(t *testing.T) {
		contracttest.Instances(t, func(t *testing.T) contracttest.InstancesTarget {
			x := fakeInstances(t)
			x.Instances = containersReversed{x.Instances}
			return x
		})
	},
	"storage/list-volumes-unordered": func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			x := fakeStorage(t)
			x.Storage = volumesReversed{x.Storage}
			return x
		})
	},
	"storage/provision-not-idempotent": func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			x := fakeStorage(t)
			x.Storage = provisionOnce{x.Storage}
			return x
		})
	},
	"storage/restore-without-meta": func(t *testing.T) {
		contracttest.Storage(t, func(t *testing.T) contracttest.StorageTarget {
			x := fakeStorage(t)
			x.Storage = restoreRecommits{x.Storage, x.Objects}
			return x
		})
	},
}

func TestSuitesCatchEveryMutant(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	names := make([]string, 0, len(mutants))
	for name := range mutants {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutant$", "-test.count=1")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the suite passed against mutant %s:\n%s", name, out)
			require.Contains(t, string(out), "--- FAIL: TestMutant/", "mutant %s: a suite's subtest fails:\n%s", name, out)
			require.NotContains(t, string(out), "panic:", "mutant %s: an assertion fails, not a panic:\n%s", name, out)
		})
	}
}

// TestMutant runs the mutant named by mutantEnv (only as a child of
// TestSuitesCatchEveryMutant).
func TestMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run by TestSuitesCatchEveryMutant")
	}
	run, ok := mutants[name]
	require.True(t, ok, "unknown mutant %q", name)
	run(t)
}

// Targets the mutants wrap.

func busTarget(t *testing.T, wrap func(ports.Bus) ports.Bus) contracttest.BusTarget {
	w := newWorld(t)
	return contracttest.BusTarget{Bus: wrap(w.Bus), Advance: func(_ *testing.T, d time.Duration) { w.Clock.Advance(d) }}
}

func mutStore(wrap func(ports.Store) ports.Store) func(t *testing.T) contracttest.StoreTarget {
	return func(t *testing.T) contracttest.StoreTarget {
		x := fakeStore(t)
		x.Store = wrap(x.Store)
		return x
	}
}

func mutSessions(wrap func(ports.Lease) ports.Lease) func(t *testing.T) contracttest.StoreTarget {
	return func(t *testing.T) contracttest.StoreTarget {
		x := fakeStore(t)
		newSession, kill := x.NewSession, x.KillSession
		inner := make(map[ports.Leadership]ports.Leadership)
		x.NewSession = func(t *testing.T) ports.Leadership {
			s := newSession(t)
			w := &wrappedSession{s, wrap}
			inner[w] = s
			return w
		}
		x.KillSession = func(t *testing.T, s ports.Leadership, l ports.Lease) { kill(t, inner[s], l) }
		return x
	}
}

func fakeInstances(t *testing.T) contracttest.InstancesTarget {
	w := newWorld(t)
	return contracttest.InstancesTarget{Instances: w.Instances, Storage: w.Storage, ImageRef: "img",
		Stop: func(_ *testing.T, id string) { w.Instances.Kill(id) }}
}

func fakeStorage(t *testing.T) contracttest.StorageTarget {
	w := newWorld(t)
	return contracttest.StorageTarget{
		Storage: w.Storage, Instances: w.Instances, Objects: w.Objects, ImageRef: "img",
		WriteFile: func(t *testing.T, id, path string, data []byte) {
			require.NoError(t, w.Storage.WriteFile(id, path, data))
		},
		ReadFiles: func(t *testing.T, id string) map[string][]byte {
			files, ok := w.Storage.Files(id)
			require.True(t, ok)
			return files
		},
	}
}

// Broken objects.

type listReversed struct{ ports.Objects }

func (x listReversed) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	out, err := x.Objects.List(ctx, prefix)
	slices.Reverse(out)
	return out, err
}

type getMissingEmpty struct{ ports.Objects }

func (x getMissingEmpty) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := x.Objects.Get(ctx, key)
	if errors.Is(err, contracts.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

type deleteAbsentFails struct{ ports.Objects }

func (x deleteAbsentFails) Delete(ctx context.Context, key string) error {
	if ok, _ := x.Head(ctx, key); !ok {
		return contracts.ErrNotFound
	}
	return x.Objects.Delete(ctx, key)
}

type listNoSizes struct{ ports.Objects }

func (x listNoSizes) List(ctx context.Context, prefix string) ([]ports.ObjectInfo, error) {
	out, err := x.Objects.List(ctx, prefix)
	for i := range out {
		out[i].Size = 0
	}
	return out, err
}

// Broken buses.

type ttlIgnored struct{ ports.Bus }

func (x ttlIgnored) Set(ctx context.Context, key, value string, _ time.Duration) error {
	return x.Bus.Set(ctx, key, value, 0)
}

type setNXOverwrites struct{ ports.Bus }

func (x setNXOverwrites) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	return true, x.Set(ctx, key, value, ttl)
}

type closeIgnored struct{ ports.Bus }

func (x closeIgnored) Subscribe(ctx context.Context, channels ...string) (ports.Subscription, error) {
	s, err := x.Bus.Subscribe(ctx, channels...)
	if err != nil {
		return nil, err
	}
	return neverClosed{s}, nil
}

type neverClosed struct{ ports.Subscription }

func (neverClosed) Close() error { return nil }

type decrIncrements struct{ ports.Bus }

func (x decrIncrements) Decr(ctx context.Context, key string) (int64, error) { return x.Incr(ctx, key) }

// incrReadThenWrite increments by a read and a later write: concurrent
// increments get lost.
type incrReadThenWrite struct{ ports.Bus }

func (x incrReadThenWrite) Incr(ctx context.Context, key string) (int64, error) {
	v, _, err := x.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	time.Sleep(time.Millisecond)
	return n + 1, x.Set(ctx, key, strconv.FormatInt(n+1, 10), 0)
}

// Broken stores.

// claimReadThenWrite checks the condition on a row it read earlier:
// concurrent claims all get in.
type claimReadThenWrite struct{ ports.Store }

func (x claimReadThenWrite) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	row, err := x.Get(ctx, id)
	if err != nil {
		return false, err
	}
	if !c.Holds(&row) {
		return false, nil
	}
	time.Sleep(5 * time.Millisecond)
	return x.Store.Update(ctx, w, id, contracts.Cond{}, p)
}

type wrongFilter struct{ ports.Store }

func (x wrongFilter) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	if f == contracts.FilterTTL {
		f = contracts.FilterActive
	}
	return x.Store.List(ctx, f)
}

type listUnordered struct{ ports.Store }

func (x listUnordered) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	out, err := x.Store.List(ctx, f)
	slices.Reverse(out)
	return out, err
}

type condIgnored struct{ ports.Store }

func (x condIgnored) Update(ctx context.Context, w contracts.Writer, id string, _ contracts.Cond, p contracts.Patch) (bool, error) {
	return x.Store.Update(ctx, w, id, contracts.Cond{}, p)
}

type updateUnfenced struct{ ports.Store }

func (x updateUnfenced) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	w.Epoch = 0
	return x.Store.Update(ctx, w, id, c, p)
}

type updateManyUnfenced struct{ ports.Store }

func (x updateManyUnfenced) UpdateMany(ctx context.Context, w contracts.Writer, u []ports.RowUpdate) error {
	w.Epoch = 0
	return x.Store.UpdateMany(ctx, w, u)
}

type markObservedUnfenced struct{ ports.Store }

func (x markObservedUnfenced) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	w.Epoch = 0
	return x.Store.MarkObserved(ctx, w, ids, at)
}

type missingRefused struct{ ports.Store }

func (x missingRefused) Update(ctx context.Context, w contracts.Writer, id string, c contracts.Cond, p contracts.Patch) (bool, error) {
	applied, err := x.Store.Update(ctx, w, id, c, p)
	if errors.Is(err, contracts.ErrNotFound) {
		return false, nil
	}
	return applied, err
}

type contextLost struct{ ports.Store }

func (x contextLost) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	w, err := x.Store.Get(ctx, id)
	if w.ErrorInfo != nil {
		w.ErrorInfo.Context = nil
	}
	return w, err
}

type wrappedSession struct {
	ports.Leadership
	wrap func(ports.Lease) ports.Lease
}

func (s *wrappedSession) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	l, ok, err := s.Leadership.TryAcquire(ctx, holder)
	if l != nil {
		l = s.wrap(l)
	}
	return l, ok, err
}

type checkAlwaysOK struct{ ports.Lease }

func (checkAlwaysOK) Check(context.Context) error { return nil }

type doubledEpoch struct{ ports.Lease }

func (l doubledEpoch) Epoch() int64 { return 2 * l.Lease.Epoch() }

type duplicatingFeed struct{ ports.ChangeFeed }

func (f duplicatingFeed) Listen(ctx context.Context) (ports.Listener, error) {
	l, err := f.ChangeFeed.Listen(ctx)
	if err != nil {
		return nil, err
	}
	return duplicatingListener{l}, nil
}

type duplicatingListener struct{ ports.Listener }

func (l duplicatingListener) Poll(ctx context.Context) ([]ports.Change, error) {
	got, err := l.Listener.Poll(ctx)
	var out []ports.Change
	for _, c := range got {
		out = append(out, c, c)
	}
	return out, err
}

// Broken data planes.

type startProvisions struct {
	ports.Instances
	storage ports.Storage
}

func (x startProvisions) Start(ctx context.Context, id, image string) error {
	if err := x.storage.Provision(ctx, id); err != nil {
		return err
	}
	return x.Instances.Start(ctx, id, image)
}

type deleteAbsentContainerFails struct{ ports.Instances }

func (x deleteAbsentContainerFails) Delete(ctx context.Context, id string) error {
	states, err := x.List(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(states, func(s ports.InstanceState) bool { return s.WorkspaceID == id }) {
		return contracts.ErrNotFound
	}
	return x.Instances.Delete(ctx, id)
}

type archiveAlwaysUploads struct {
	ports.Storage
	objects ports.Objects
}

func (x archiveAlwaysUploads) Archive(ctx context.Context, id, opID string) (string, error) {
	if err := x.objects.Delete(ctx, contracts.MetaKey(contracts.ArchiveKey(id, opID))); err != nil {
		return "", err
	}
	return x.Storage.Archive(ctx, id, opID)
}

type deleteVolumeEvicts struct {
	ports.Storage
	instances ports.Instances
}

func (x deleteVolumeEvicts) DeleteVolume(ctx context.Context, id string) error {
	if err := x.instances.Delete(ctx, id); err != nil {
		return err
	}
	return x.Storage.DeleteVolume(ctx, id)
}

type provisionOnce struct{ ports.Storage }

func (x provisionOnce) Provision(ctx context.Context, id string) error {
	vols, err := x.ListVolumes(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(vols, id) {
		return contracts.NewProviderError(contracts.CodeVolumeCreateFailed, "volume exists")
	}
	return x.Storage.Provision(ctx, id)
}

// restoreRecommits writes a fresh .meta for whatever archive is there
// before restoring: a missing or wrong checksum goes unnoticed.
type restoreRecommits struct {
	ports.Storage
	objects ports.Objects
}

func (x restoreRecommits) Restore(ctx context.Context, id, key string) (string, error) {
	if data, err := x.objects.Get(ctx, key); err == nil {
		if err := x.objects.Put(ctx, contracts.MetaKey(key), []byte(archive.Checksum(data))); err != nil {
			return "", err
		}
	}
	return x.Storage.Restore(ctx, id, key)
}

// booleanLock takes a lock it holds again without counting: one unlock
// frees it.
type booleanLock struct {
	contracttest.AdvisorySession
	held map[int64]bool
}

func (b *booleanLock) TryLock(ctx context.Context, key int64) (bool, error) {
	if b.held[key] {
		return true, nil
	}
	ok, err := b.AdvisorySession.TryLock(ctx, key)
	b.held[key] = ok
	return ok, err
}

func (b *booleanLock) Unlock(ctx context.Context, key int64) (bool, error) {
	b.held[key] = false
	return b.AdvisorySession.Unlock(ctx, key)
}

// containersReversed and volumesReversed list in descending order: a
// joiner that walks the listings beside rows in id order would miss
// entries.
type containersReversed struct{ ports.Instances }

func (x containersReversed) List(ctx context.Context) ([]ports.InstanceState, error) {
	out, err := x.Instances.List(ctx)
	slices.Reverse(out)
	return out, err
}

type volumesReversed struct{ ports.Storage }

func (x volumesReversed) ListVolumes(ctx context.Context) ([]string, error) {
	out, err := x.Storage.ListVolumes(ctx)
	slices.Reverse(out)
	return out, err
}
