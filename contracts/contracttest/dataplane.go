package contracttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/ports"
)

// InstancesTarget is a container runtime and the volumes its containers
// mount.
type InstancesTarget struct {
	Instances ports.Instances
	// Storage provisions the volumes the containers need.
	Storage ports.Storage
	// ImageRef is a workspace image that starts and keeps running.
	ImageRef string
	// Stop makes a running container stop without being removed, as a
	// crash of its workload would. Nil skips the stopped-leftover test.
	Stop func(t *testing.T, id string)
}

// StorageTarget is a volume provider with its archive jobs, the container
// runtime (for a volume in use) and the bucket archives go to.
type StorageTarget struct {
	Storage   ports.Storage
	Instances ports.Instances
	Objects   ports.Objects
	// ImageRef is a workspace image that starts and keeps running.
	ImageRef string
	// WriteFile writes a file into the volume of workspace id, creating
	// its directories; path is relative, slash-separated and clean.
	WriteFile func(t *testing.T, id, path string, data []byte)
	// ReadFiles returns every regular file in the volume of id by path.
	ReadFiles func(t *testing.T, id string) map[string][]byte
}

// CleanupWorkspace removes the container and volume of id when t ends (the data
// plane may be a real Docker engine shared with other tests).
func CleanupWorkspace(t *testing.T, inst ports.Instances, stor ports.Storage, id string) {
	t.Cleanup(func() {
		// A shared engine under load can stall for minutes (DR384).
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := inst.Delete(ctx, id); err != nil {
			t.Logf("cleanup: delete container of %s: %v", id, err)
		}
		if err := stor.DeleteVolume(ctx, id); err != nil {
			t.Logf("cleanup: delete volume of %s: %v", id, err)
		}
	})
}

// ours keeps the listed states of the given workspaces, ordered by id: a
// shared engine may run other tests' containers.
func ours(states []ports.InstanceState, ids ...string) []ports.InstanceState {
	var out []ports.InstanceState
	for _, s := range states {
		if slices.Contains(ids, s.WorkspaceID) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b ports.InstanceState) int { return strings.Compare(a.WorkspaceID, b.WorkspaceID) })
	return out
}

func sortedIDs(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// Instances runs the ports.Instances suite.
func Instances(t *testing.T, newInstances func(t *testing.T) InstancesTarget) {
	list := func(t *testing.T, x InstancesTarget, ids ...string) []ports.InstanceState {
		t.Helper()
		states, err := x.Instances.List(t.Context())
		require.NoError(t, err)
		for i := 1; i < len(states); i++ {
			require.Less(t, states[i-1].WorkspaceID, states[i].WorkspaceID, "List names each container once, ordered by workspace id")
		}
		return ours(states, ids...)
	}

	t.Run("StartWithoutVolumeFails", func(t *testing.T) {
		x := newInstances(t)
		id := randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		requireCode(t, x.Instances.Start(t.Context(), id, x.ImageRef), contracts.CodeVolumeNotFound)
		require.Empty(t, list(t, x, id), "no container was left behind")
	})

	t.Run("StartIsIdempotentDeleteAbsentIsSuccess", func(t *testing.T) {
		x := newInstances(t)
		ctx := t.Context()
		a, b := randomID(t), randomID(t)
		for _, id := range []string{a, b} {
			CleanupWorkspace(t, x.Instances, x.Storage, id)
			require.NoError(t, x.Storage.Provision(ctx, id))
		}
		require.NoError(t, x.Instances.Delete(ctx, a), "deleting a container that never existed")

		require.NoError(t, x.Instances.Start(ctx, a, x.ImageRef))
		require.Equal(t, []ports.InstanceState{{WorkspaceID: a, Running: true}}, list(t, x, a, b))
		require.NoError(t, x.Instances.Start(ctx, a, x.ImageRef), "starting a running container")
		require.NoError(t, x.Instances.Start(ctx, b, x.ImageRef))
		want := []ports.InstanceState{{WorkspaceID: a, Running: true}, {WorkspaceID: b, Running: true}}
		require.Equal(t, ours(want, a, b), list(t, x, a, b), "one container each, running")

		require.NoError(t, x.Instances.Delete(ctx, a))
		require.Equal(t, []ports.InstanceState{{WorkspaceID: b, Running: true}}, list(t, x, a, b))
		require.NoError(t, x.Instances.Delete(ctx, a), "deleting twice")
		require.NoError(t, x.Instances.Delete(ctx, b))
		require.Empty(t, list(t, x, a, b))
	})

	t.Run("StoppedLeftoverIsRecreated", func(t *testing.T) {
		x := newInstances(t)
		if x.Stop == nil {
			t.Skip("the target cannot stop a container behind the provider's back")
		}
		ctx := t.Context()
		id := randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		require.NoError(t, x.Storage.Provision(ctx, id))
		require.NoError(t, x.Instances.Start(ctx, id, x.ImageRef))
		x.Stop(t, id)
		require.Equal(t, []ports.InstanceState{{WorkspaceID: id, Running: false}}, list(t, x, id),
			"a stopped container is listed, not running")
		require.NoError(t, x.Instances.Start(ctx, id, x.ImageRef))
		require.Equal(t, []ports.InstanceState{{WorkspaceID: id, Running: true}}, list(t, x, id))
		require.NoError(t, x.Instances.Delete(ctx, id), "deleting a running container")
		require.Empty(t, list(t, x, id))
	})
}

// Storage runs the ports.Storage suite.
func Storage(t *testing.T, newStorage func(t *testing.T) StorageTarget) {
	volumes := func(t *testing.T, x StorageTarget, ids ...string) []string {
		t.Helper()
		all, err := x.Storage.ListVolumes(t.Context())
		require.NoError(t, err)
		for i := 1; i < len(all); i++ {
			require.Less(t, all[i-1], all[i], "ListVolumes lists each volume once, in ascending order")
		}
		var out []string
		for _, id := range all {
			if slices.Contains(ids, id) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}

	t.Run("ProvisionIsIdempotent", func(t *testing.T) {
		x := newStorage(t)
		ctx := t.Context()
		a, b := randomID(t), randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, a)
		CleanupWorkspace(t, x.Instances, x.Storage, b)
		require.Empty(t, volumes(t, x, a, b))
		require.NoError(t, x.Storage.Provision(ctx, a))
		x.WriteFile(t, a, "keep.txt", []byte("kept"))
		require.NoError(t, x.Storage.Provision(ctx, a), "provisioning an existing volume")
		require.Equal(t, map[string][]byte{"keep.txt": []byte("kept")}, x.ReadFiles(t, a),
			"provisioning again leaves the data alone")
		require.NoError(t, x.Storage.Provision(ctx, b))
		require.Equal(t, sortedIDs(a, b), volumes(t, x, a, b))
	})

	t.Run("DeleteVolume", func(t *testing.T) {
		x := newStorage(t)
		ctx := t.Context()
		id := randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		require.NoError(t, x.Storage.DeleteVolume(ctx, id), "deleting a volume that never existed")
		require.NoError(t, x.Storage.Provision(ctx, id))
		require.NoError(t, x.Instances.Start(ctx, id, x.ImageRef))
		requireCode(t, x.Storage.DeleteVolume(ctx, id), contracts.CodeVolumeInUse, "a volume a container holds")
		require.Equal(t, []string{id}, volumes(t, x, id), "the volume in use is still there")
		require.NoError(t, x.Instances.Delete(ctx, id))
		require.NoError(t, x.Storage.DeleteVolume(ctx, id))
		require.Empty(t, volumes(t, x, id))
		require.NoError(t, x.Storage.DeleteVolume(ctx, id), "deleting twice")
		requireCode(t, x.Instances.Start(ctx, id, x.ImageRef), contracts.CodeVolumeNotFound, "the volume is gone")
	})

	t.Run("ArchiveRestoreRoundTrip", func(t *testing.T) {
		x := newStorage(t)
		ctx := t.Context()
		id, other := randomID(t), randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		CleanupWorkspace(t, x.Instances, x.Storage, other)
		require.NoError(t, x.Storage.Provision(ctx, id))
		files := map[string][]byte{
			"notes.txt":             []byte("hello\n"),
			"empty":                 {},
			"project/src/main.go":   []byte("package main\n\nfunc main() {}\n"),
			"project/bin/blob":      binaryData(70_000),
			".config/app/settings":  []byte(`{"theme":"dark"}`),
			"dir with spaces/ü.txt": []byte("unicode"),
		}
		for p, b := range files {
			x.WriteFile(t, id, p, b)
		}
		require.Equal(t, files, x.ReadFiles(t, id), "the target writes and reads files")

		op := randomID(t)
		key, err := x.Storage.Archive(ctx, id, op)
		require.NoError(t, err)
		require.Equal(t, contracts.ArchiveKey(id, op), key, "the expected key of the op id")
		data, err := x.Objects.Get(ctx, key)
		require.NoError(t, err, "the archive is uploaded")
		meta, err := x.Objects.Get(ctx, contracts.MetaKey(key))
		require.NoError(t, err, "the checksum is uploaded")
		sum := sha256.Sum256(data)
		require.True(t, strings.HasPrefix(string(meta), "sha256:"+hex.EncodeToString(sum[:])), "the .meta begins with the archive's checksum")
		wantMeta, err := archive.MetaOf(data)
		require.NoError(t, err)
		require.Equal(t, string(wantMeta.Encode()), string(meta), "and declares what the archive unpacks to")
		require.Equal(t, files, x.ReadFiles(t, id), "archiving leaves the volume alone")

		// Restore into a changed volume makes it equal to the archive.
		x.WriteFile(t, id, "notes.txt", []byte("changed after the archive"))
		x.WriteFile(t, id, "new/extra.txt", []byte("written after the archive"))
		marker, err := x.Storage.Restore(ctx, id, key)
		require.NoError(t, err)
		require.Equal(t, key, marker, "the marker is the key")
		require.Equal(t, files, x.ReadFiles(t, id), "restored byte for byte, extra files removed")

		// …and into another workspace's empty volume.
		require.NoError(t, x.Storage.Provision(ctx, other))
		marker, err = x.Storage.Restore(ctx, other, key)
		require.NoError(t, err)
		require.Equal(t, key, marker)
		require.Equal(t, files, x.ReadFiles(t, other))
	})

	t.Run("ArchiveSkipsWhenComplete", func(t *testing.T) {
		x := newStorage(t)
		ctx := t.Context()
		id := randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		require.NoError(t, x.Storage.Provision(ctx, id))
		x.WriteFile(t, id, "a.txt", []byte("first"))
		op := randomID(t)
		key, err := x.Storage.Archive(ctx, id, op)
		require.NoError(t, err)
		first, err := x.Objects.Get(ctx, key)
		require.NoError(t, err)

		x.WriteFile(t, id, "b.txt", []byte("second"))
		again, err := x.Storage.Archive(ctx, id, op)
		require.NoError(t, err)
		require.Equal(t, key, again, "the same op id gives the same key")
		now, err := x.Objects.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, first, now, "a complete archive is not uploaded again")

		// Without its .meta the archive is incomplete: archived again.
		require.NoError(t, x.Objects.Delete(ctx, contracts.MetaKey(key)))
		again, err = x.Storage.Archive(ctx, id, op)
		require.NoError(t, err)
		require.Equal(t, key, again)
		ok, err := x.Objects.Head(ctx, contracts.MetaKey(key))
		require.NoError(t, err)
		require.True(t, ok, "the .meta is uploaded again")
		x.WriteFile(t, id, "c.txt", []byte("after the second archive"))
		_, err = x.Storage.Restore(ctx, id, key)
		require.NoError(t, err)
		require.Equal(t, map[string][]byte{"a.txt": []byte("first"), "b.txt": []byte("second")}, x.ReadFiles(t, id),
			"the second archive holds the volume as it was then")
	})

	t.Run("RestoreDataLost", func(t *testing.T) {
		x := newStorage(t)
		ctx := t.Context()
		id := randomID(t)
		CleanupWorkspace(t, x.Instances, x.Storage, id)
		require.NoError(t, x.Storage.Provision(ctx, id))
		x.WriteFile(t, id, "data.bin", binaryData(4096))
		key, err := x.Storage.Archive(ctx, id, randomID(t))
		require.NoError(t, err)
		current := map[string][]byte{"data.bin": binaryData(4096), "later.txt": []byte("unarchived")}
		x.WriteFile(t, id, "later.txt", []byte("unarchived"))

		restore := func(key string, code contracts.ErrorCode, why string) {
			t.Helper()
			_, err := x.Storage.Restore(ctx, id, key)
			requireCode(t, err, code, why)
			reason, terminal := contracts.Classify(code)
			require.Equal(t, contracts.ReasonDataLost, reason)
			require.True(t, terminal)
			require.Equal(t, current, x.ReadFiles(t, id), "%s: a failed restore leaves the volume alone", why)
		}
		restore(contracts.ArchiveKey(id, randomID(t)), contracts.CodeArchiveNotFound, "no archive under that key")

		data, err := x.Objects.Get(ctx, key)
		require.NoError(t, err)
		bad := slices.Clone(data)
		bad[len(bad)/2] ^= 0xff
		require.NoError(t, x.Objects.Put(ctx, key, bad))
		restore(key, contracts.CodeChecksumMismatch, "corrupted archive")

		require.NoError(t, x.Objects.Put(ctx, key, data))
		require.NoError(t, x.Objects.Put(ctx, contracts.MetaKey(key), []byte("sha256:"+hex.EncodeToString(make([]byte, 32)))))
		restore(key, contracts.CodeChecksumMismatch, "wrong checksum")

		declared, err := archive.MetaOf(data)
		require.NoError(t, err)
		lying := declared
		lying.Bytes--
		require.NoError(t, x.Objects.Put(ctx, contracts.MetaKey(key), lying.Encode()))
		restore(key, contracts.CodeChecksumMismatch, "an archive holding more than its .meta declares")

		require.NoError(t, x.Objects.Delete(ctx, contracts.MetaKey(key)))
		restore(key, contracts.CodeMetaNotFound, "no .meta")

		require.NoError(t, x.Objects.Put(ctx, contracts.MetaKey(key), []byte(archive.Checksum(data))))
		marker, err := x.Storage.Restore(ctx, id, key)
		require.NoError(t, err, "a .meta of the original format, the checksum alone, still restores")
		require.Equal(t, key, marker)
		require.Equal(t, map[string][]byte{"data.bin": binaryData(4096)}, x.ReadFiles(t, id))
	})
}

// binaryData is n bytes of every value, in a pattern that does not
// repeat quickly.
func binaryData(n int) []byte {
	b := make([]byte, n)
	var x uint32 = 2463534242
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
