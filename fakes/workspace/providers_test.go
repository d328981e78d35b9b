package workspace

import (
	"errors"
	"testing"

	"github.com/wsconverge/converge/contracts/history"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/ports"
)

func requireCode(t *testing.T, err error, code contracts.ErrorCode) {
	t.Helper()
	var pe *contracts.ProviderError
	require.True(t, errors.As(err, &pe), "want a ProviderError %s, got %v", code, err)
	require.Equal(t, code, pe.Code)
}

func TestInstancesLifecycle(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	requireCode(t, w.Instances.Start(ctx, "a", "img"), contracts.CodeVolumeNotFound)
	require.Empty(t, w.Instances.Snapshot(), "a failed start leaves nothing")

	for _, id := range []string{"b", "a"} {
		require.NoError(t, w.Storage.Provision(ctx, id))
		require.NoError(t, w.Instances.Start(ctx, id, "img"))
	}
	require.NoError(t, w.Instances.Start(ctx, "a", "img"), "running already is success")
	list, err := w.Instances.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []ports.InstanceState{{WorkspaceID: "a", Running: true}, {WorkspaceID: "b", Running: true}}, list)

	w.Instances.Kill("a")
	exists, running := w.Instances.State("a")
	require.True(t, exists)
	require.False(t, running)
	require.NoError(t, w.Instances.Start(ctx, "a", "img:2"), "a stopped leftover is recreated")
	_, running = w.Instances.State("a")
	require.True(t, running)

	require.NoError(t, w.Instances.Delete(ctx, "a"))
	require.NoError(t, w.Instances.Delete(ctx, "a"), "absent is success")
	w.Instances.Remove("b")
	list, err = w.Instances.List(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestStorageVolumes(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.Error(t, w.Storage.WriteFile("a", "f", []byte("x")), "no volume yet")
	for _, id := range []string{"c", "a", "b"} {
		require.NoError(t, w.Storage.Provision(ctx, id))
	}
	require.NoError(t, w.Storage.WriteFile("a", "f", []byte("x")))
	require.NoError(t, w.Storage.Provision(ctx, "a"), "existing is success")
	files, ok := w.Storage.Files("a")
	require.True(t, ok)
	require.Equal(t, map[string][]byte{"f": []byte("x")}, files, "provisioning again keeps the data")

	vols, err := w.Storage.ListVolumes(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, vols)

	require.ErrorIs(t, w.Storage.WriteFile("a", "../x", nil), archive.ErrInvalidPath)
	require.Error(t, w.Storage.WriteFile("a", "f/under-a-file", nil))
	require.NoError(t, w.Storage.WriteFile("a", "d/g", []byte("g")))
	require.Error(t, w.Storage.WriteFile("a", "d", nil), "d is a directory")

	// In use by a container, running or stopped: refused.
	require.NoError(t, w.Instances.Start(ctx, "b", "img"))
	requireCode(t, w.Storage.DeleteVolume(ctx, "b"), contracts.CodeVolumeInUse)
	w.Instances.Kill("b")
	requireCode(t, w.Storage.DeleteVolume(ctx, "b"), contracts.CodeVolumeInUse)
	require.NoError(t, w.Instances.Delete(ctx, "b"))
	require.NoError(t, w.Storage.DeleteVolume(ctx, "b"))
	require.NoError(t, w.Storage.DeleteVolume(ctx, "b"), "absent is success")

	w.Storage.Lose("c")
	require.Equal(t, []string{"a"}, w.Storage.Volumes())
	_, ok = w.Storage.Files("c")
	require.False(t, ok)
}

func TestArchiveAndRestoreRoundTrip(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	want := map[string][]byte{"notes.txt": []byte("hello"), "src/main.go": []byte("package main\n"), "bin/blob": {0, 1, 2, 255}}
	for p, b := range want {
		require.NoError(t, w.Storage.WriteFile("a", p, b))
	}
	key, err := w.Storage.Archive(ctx, "a", "op-1")
	require.NoError(t, err)
	require.Equal(t, contracts.ArchiveKey("a", "op-1"), key)
	require.Equal(t, []string{key, contracts.MetaKey(key)}, w.Objects.Keys())
	data, ok := w.Objects.Peek(key)
	require.True(t, ok)
	meta, _ := w.Objects.Peek(contracts.MetaKey(key))
	wantMeta, err := archive.MetaOf(data)
	require.NoError(t, err)
	require.Equal(t, string(wantMeta.Encode()), string(meta), "the extended .meta, as the storage job writes it")

	// The volume changes, is lost, and comes back empty; restore brings the
	// archived bytes back exactly (the later file is gone).
	require.NoError(t, w.Storage.WriteFile("a", "later.txt", []byte("after the archive")))
	w.Storage.Lose("a")
	_, err = w.Storage.Restore(ctx, "a", key)
	requireCode(t, err, contracts.CodeVolumeNotFound)
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	marker, err := w.Storage.Restore(ctx, "a", key)
	require.NoError(t, err)
	require.Equal(t, key, marker)
	got, ok := w.Storage.Files("a")
	require.True(t, ok)
	require.Equal(t, want, got)
}

func TestArchiveSkipsWhenObjectAndMetaExist(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	require.NoError(t, w.Storage.WriteFile("a", "f", []byte("v1")))
	key, err := w.Storage.Archive(ctx, "a", "op-1")
	require.NoError(t, err)
	first, _ := w.Objects.Peek(key)

	require.NoError(t, w.Storage.WriteFile("a", "f", []byte("v2")))
	again, err := w.Storage.Archive(ctx, "a", "op-1")
	require.NoError(t, err)
	require.Equal(t, key, again)
	second, _ := w.Objects.Peek(key)
	require.Equal(t, first, second, "complete archive not uploaded again")
	var results []string
	for _, e := range w.Rec.Events() {
		if e.Method == "storage.Archive" {
			results = append(results, e.Result)
		}
	}
	require.Equal(t, []string{"uploaded " + key, "skipped " + key}, results, "the history tells an upload from a skip")

	// Without its .meta the archive is incomplete: the job runs again.
	w.Objects.Remove(contracts.MetaKey(key))
	_, err = w.Storage.Archive(ctx, "a", "op-1")
	require.NoError(t, err)
	third, _ := w.Objects.Peek(key)
	require.NotEqual(t, first, third)
	files, err := archive.Unpack(third)
	require.NoError(t, err)
	require.Equal(t, []byte("v2"), files["f"])

	_, err = w.Storage.Archive(ctx, "nope", "op-1")
	requireCode(t, err, contracts.CodeVolumeNotFound)
}

func TestRestoreDataLostCodes(t *testing.T) {
	ctx := t.Context()
	setup := func(t *testing.T) (*World, string) {
		t.Helper()
		w := newWorld(t)
		require.NoError(t, w.Storage.Provision(ctx, "a"))
		require.NoError(t, w.Storage.WriteFile("a", "f", []byte("data")))
		key, err := w.Storage.Archive(ctx, "a", "op-1")
		require.NoError(t, err)
		require.NoError(t, w.Storage.WriteFile("a", "f", []byte("newer")))
		return w, key
	}
	cases := []struct {
		name  string
		spoil func(w *World, key string)
		code  contracts.ErrorCode
	}{
		{"archive missing", func(w *World, key string) { w.Objects.Remove(key) }, contracts.CodeArchiveNotFound},
		{"meta missing", func(w *World, key string) { w.Objects.Remove(contracts.MetaKey(key)) }, contracts.CodeMetaNotFound},
		{"archive corrupted", func(w *World, key string) { w.Objects.Corrupt(key) }, contracts.CodeChecksumMismatch},
		{"meta corrupted", func(w *World, key string) { w.Objects.Corrupt(contracts.MetaKey(key)) }, contracts.CodeChecksumMismatch},
		{"meta declares other counts, with the right checksum", func(w *World, key string) {
			data, _ := w.Objects.Peek(key)
			m, err := archive.MetaOf(data)
			require.NoError(t, err)
			m.Entries++
			require.NoError(t, w.Objects.Put(ctx, contracts.MetaKey(key), m.Encode()))
		}, contracts.CodeChecksumMismatch},
		{"not a tar.zst", func(w *World, key string) {
			junk := []byte("this is not zstd")
			require.NoError(t, w.Objects.Put(ctx, key, junk))
			require.NoError(t, w.Objects.Put(ctx, contracts.MetaKey(key), []byte(archive.Checksum(junk))))
		}, contracts.CodeChecksumMismatch},
		{"an empty archive", func(w *World, key string) {
			require.NoError(t, w.Objects.Put(ctx, key, nil))
			require.NoError(t, w.Objects.Put(ctx, contracts.MetaKey(key), []byte(archive.Checksum(nil))))
		}, contracts.CodeChecksumMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, key := setup(t)
			tc.spoil(w, key)
			_, err := w.Storage.Restore(ctx, "a", key)
			requireCode(t, err, tc.code)
			reason, terminal := contracts.Classify(tc.code)
			if tc.code != contracts.CodeTarExtractFailed {
				require.Equal(t, contracts.ReasonDataLost, reason)
				require.True(t, terminal)
			}
			files, _ := w.Storage.Files("a")
			require.Equal(t, []byte("newer"), files["f"], "a failed restore leaves the volume alone")
		})
	}
}

func TestObjects(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	buf := []byte("abc")
	require.NoError(t, w.Objects.Put(ctx, "archives/x/2/home.tar.zst", buf))
	buf[0] = 'X' // the store kept its own copy
	require.NoError(t, w.Objects.Put(ctx, "archives/x/1/home.tar.zst", []byte("12345")))
	require.NoError(t, w.Objects.Put(ctx, "archives/y/1/home.tar.zst", nil))
	require.NoError(t, w.Objects.Put(ctx, "other", nil))

	got, err := w.Objects.Get(ctx, "archives/x/2/home.tar.zst")
	require.NoError(t, err)
	require.Equal(t, []byte("abc"), got)
	_, err = w.Objects.Get(ctx, "missing")
	require.ErrorIs(t, err, contracts.ErrNotFound)
	ok, err := w.Objects.Head(ctx, "other")
	require.NoError(t, err)
	require.True(t, ok)

	list, err := w.Objects.List(ctx, "archives/x/")
	require.NoError(t, err)
	require.Equal(t, []ports.ObjectInfo{{Key: "archives/x/1/home.tar.zst", Size: 5}, {Key: "archives/x/2/home.tar.zst", Size: 3}}, list)
	all, err := w.Objects.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 4)

	require.NoError(t, w.Objects.Delete(ctx, "other"))
	require.NoError(t, w.Objects.Delete(ctx, "other"), "absent is success")
	w.Objects.Corrupt("archives/x/1/home.tar.zst")
	got, _ = w.Objects.Peek("archives/x/1/home.tar.zst")
	require.NotEqual(t, []byte("12345"), got)
	require.Len(t, got, 5)
	require.Equal(t, []string{"archives/x/1/home.tar.zst", "archives/x/2/home.tar.zst", "archives/y/1/home.tar.zst"}, w.Objects.Keys())

	events := w.Rec.Events()
	e := events[len(events)-2]
	require.Equal(t, "objects.Delete", e.Method)
	require.Equal(t, "other", e.Args)
	f := events[len(events)-1]
	require.Equal(t, history.KindFault, f.Kind, "world faults are recorded")
	require.Equal(t, "objects.Corrupt", f.Method)
	require.Equal(t, "x", f.Workspace)
	require.Equal(t, "archives/x/1/home.tar.zst", f.Args)
}

// Corrupting an object twice must not restore it (the first version
// flipped the same byte back).
func TestCorruptionsAccumulate(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	orig := []byte("the archive's bytes, long enough to have a middle")
	require.NoError(t, w.Objects.Put(ctx, "archives/x/1/home.tar.zst", orig))
	for i := range 5 {
		w.Objects.Corrupt("archives/x/1/home.tar.zst")
		got, _ := w.Objects.Peek("archives/x/1/home.tar.zst")
		require.NotEqual(t, orig, got, "after %d corruptions", i+1)
		require.Len(t, got, len(orig))
	}
	require.NoError(t, w.Objects.Put(ctx, "archives/x/1/home.tar.zst", orig))
	got, _ := w.Objects.Peek("archives/x/1/home.tar.zst")
	require.Equal(t, orig, got, "a new write replaces a corrupted object")
}

// An operator's `docker volume rm` behind the coordinator's back: refused
// while a container holds the volume (running or stopped), as Docker
// refuses; otherwise the volume and its data are gone.
func TestOperatorVolumeRemovalIsRefusedWhileAContainerHoldsIt(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	require.NoError(t, w.Storage.WriteFile("a", "f", []byte("x")))
	require.NoError(t, w.Instances.Start(ctx, "a", "img"))

	requireCode(t, w.Storage.Remove("a"), contracts.CodeVolumeInUse)
	w.Instances.Kill("a")
	requireCode(t, w.Storage.Remove("a"), contracts.CodeVolumeInUse) // a stopped container holds it too
	files, ok := w.Storage.Files("a")
	require.True(t, ok, "the volume is kept")
	require.Equal(t, map[string][]byte{"f": []byte("x")}, files, "with its data")

	require.NoError(t, w.Instances.Delete(ctx, "a"))
	require.NoError(t, w.Storage.Remove("a"))
	require.Empty(t, w.Storage.Volumes())
	require.NoError(t, w.Storage.Remove("a"), "absent: nothing to do")

	var got []string
	for _, e := range eventsOf(w, history.KindFault) {
		if e.Method != "instances.Kill" {
			got = append(got, e.Method+" "+e.Err)
		}
	}
	require.Len(t, got, 3)
	require.Contains(t, got[0], "storage.Remove "+string(contracts.CodeVolumeInUse))
	require.Contains(t, got[1], "storage.Remove "+string(contracts.CodeVolumeInUse))
	require.Equal(t, "storage.Lose ", got[2])
}

// A storage job killed between the archive object and its .meta leaves the
// object without its commit marker: a restore of it is META_NOT_FOUND, and
// the archive job run again for the same op_id uploads both.
func TestArchiveJobCrashLeavesTheObjectWithoutItsMeta(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	require.NoError(t, w.Storage.Provision(ctx, "a"))
	require.NoError(t, w.Storage.WriteFile("a", "f", []byte("x")))
	w.Storage.CrashArchiveJobs(1)

	_, err := w.Storage.Archive(ctx, "a", "op1")
	requireCode(t, err, CodeStorageJobFailed)
	key := contracts.ArchiveKey("a", "op1")
	_, ok := w.Objects.Peek(key)
	require.True(t, ok, "the archive object was uploaded")
	_, ok = w.Objects.Peek(contracts.MetaKey(key))
	require.False(t, ok, "its .meta was not")
	_, err = w.Storage.Restore(ctx, "b", key)
	requireCode(t, err, contracts.CodeMetaNotFound)

	got, err := w.Storage.Archive(ctx, "a", "op1")
	require.NoError(t, err, "one crash only")
	require.Equal(t, key, got)
	_, ok = w.Objects.Peek(contracts.MetaKey(key))
	require.True(t, ok, "the retry commits the .meta")
	require.NoError(t, w.Storage.Provision(ctx, "b"))
	_, err = w.Storage.Restore(ctx, "b", key)
	require.NoError(t, err)
	files, _ := w.Storage.Files("b")
	require.Equal(t, map[string][]byte{"f": []byte("x")}, files)

	var calls []string
	for _, e := range eventsOf(w, history.KindCall) {
		if e.Method == "objects.Put" || e.Method == "storage.Archive" {
			calls = append(calls, e.Method+" "+e.Result)
		}
	}
	require.Equal(t, []string{"objects.Put by the storage job, which then crashed", "storage.Archive ", "storage.Archive uploaded " + key}, calls)
}

// A restore of an archive the world packed takes the files it was packed
// from: exactly what unpacking the archive gives, for any volume, and for
// a .meta of the original format too.
func TestRestoreOfAPackedArchiveIsItsUnpacking(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(t)
		ctx := t.Context()
		require.NoError(rt, w.Storage.Provision(ctx, "a"))
		paths := rapid.SliceOfDistinct(rapid.SampledFrom([]string{"f", "notes.md", "src/main.go", "src/util.go", "data/x/y.csv", ".bashrc", "scratch/1.txt"}), rapid.ID[string]).Draw(rt, "paths")
		for _, p := range paths {
			require.NoError(rt, w.Storage.WriteFile("a", p, rapid.SliceOfN(rapid.Byte(), 0, 600).Draw(rt, "data")))
		}
		key, err := w.Storage.Archive(ctx, "a", "op-1")
		require.NoError(rt, err)
		if rapid.Bool().Draw(rt, "checksum-only meta") {
			data, _ := w.Objects.Peek(key)
			require.NoError(rt, w.Objects.Put(ctx, contracts.MetaKey(key), []byte(archive.Checksum(data))))
		}
		require.NoError(rt, w.Storage.WriteFile("a", "later", []byte("after the archive")))
		_, err = w.Storage.Restore(ctx, "a", key)
		require.NoError(rt, err)
		data, _ := w.Objects.Peek(key)
		want, err := archive.Unpack(data)
		require.NoError(rt, err)
		got, ok := w.Storage.Files("a")
		require.True(rt, ok)
		require.Equal(rt, want, got)
	})
}
