package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// Storage is the volume provider with its archive and restore jobs
// (ports.Storage). A volume is a map of file paths to contents; archives go
// to the world's Objects in the real format (package archive).
type Storage struct {
	w    *World
	vols map[string]map[string][]byte
	ids  []string // sorted ids of vols
	// crashJobs is how many of the next uploading archive jobs crash
	// between the archive object and its .meta (CrashArchiveJobs).
	crashJobs int
	// packed are the archives this world's jobs packed, by the hex
	// SHA-256 of their bytes: the files each was packed from (a copy of
	// the volume's map; file contents are never changed in place, only
	// replaced) and its .meta. A restore whose archive has a checksum
	// among them, and matches its .meta's, takes a copy of those files
	// instead of unpacking: archive.Pack's bytes unpack to the map they
	// were packed from.
	packed map[string]packedArchive
}

// packedArchive is what an archive job packed.
type packedArchive struct {
	files map[string][]byte
	meta  archive.Meta
}

// packLocked runs archive.PackMeta on the volume files and remembers
// them under the archive's checksum.
func (x *Storage) packLocked(files map[string][]byte) ([]byte, archive.Meta, error) {
	data, meta, err := archive.PackMeta(files)
	if err != nil {
		return nil, meta, err
	}
	if x.packed == nil {
		x.packed = map[string]packedArchive{}
	}
	if _, ok := x.packed[meta.SHA256]; !ok {
		x.packed[meta.SHA256] = packedArchive{files: maps.Clone(files), meta: meta}
	}
	return data, meta, nil
}

// unpackLocked is archive.UnpackWithin(data, Limits{Declared: declared})
// for archive data whose checksum matches declared's.
func (x *Storage) unpackLocked(data []byte, declared *archive.Meta) (map[string][]byte, error) {
	if p, ok := x.packed[declared.SHA256]; ok && (!declared.Sized || declared.Bytes == p.meta.Bytes && declared.Entries == p.meta.Entries) {
		return maps.Clone(p.files), nil
	}
	return archive.UnpackWithin(data, archive.Limits{Declared: declared})
}

// CodeStorageJobFailed is the code of a storage job that died without
// printing one (killed, OOM): what refimpl/workspace/dockerprov reports for it.
const CodeStorageJobFailed contracts.ErrorCode = "STORAGE_JOB_FAILED"

// CrashArchiveJobs makes the next n archive jobs that upload (0: none)
// crash after uploading the archive object and before its .meta, the
// commit marker (world method): the object is left without its .meta, recorded as an
// objects.Put of the caller, and Archive fails with
// CodeStorageJobFailed (exit status 137). A job that finds a complete
// archive uploads nothing and does not crash.
func (x *Storage) CrashArchiveJobs(n int) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	if n == x.crashJobs {
		return
	}
	x.crashJobs = n
	x.w.recordFault("storage.CrashArchiveJobs", "", strconv.Itoa(n))
}

var _ ports.Storage = (*Storage)(nil)

// Provision creates the volume; existing is success (ports.Storage).
func (x *Storage) Provision(ctx context.Context, id string) error { return x.provision(ctx, "", id) }

// ListVolumes returns the ids of every volume, sorted (ports.Storage).
func (x *Storage) ListVolumes(ctx context.Context) ([]string, error) {
	return x.listVolumes(ctx, "")
}

// Archive runs the archive job for (id, opID) (ports.Storage).
func (x *Storage) Archive(ctx context.Context, id, opID string) (string, error) {
	return x.archive(ctx, "", id, opID)
}

// Restore makes the volume equal to archive key (ports.Storage).
func (x *Storage) Restore(ctx context.Context, id, key string) (string, error) {
	return x.restore(ctx, "", id, key)
}

// DeleteVolume removes the volume (ports.Storage).
func (x *Storage) DeleteVolume(ctx context.Context, id string) error {
	return x.deleteVolume(ctx, "", id)
}

// WriteFile writes a file into the volume of id, as the user inside the
// workspace would; path is relative and clean (archive.CheckPath) and may
// not collide with a directory or file of the volume (world method).
func (x *Storage) WriteFile(id, path string, data []byte) error {
	if err := archive.CheckPath(path); err != nil {
		return fmt.Errorf("write %s into volume of %s: %w", path, id, err)
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	vol, ok := x.vols[id]
	if !ok {
		return fmt.Errorf("write %s: volume of %s: %w", path, id, contracts.ErrNotFound)
	}
	if _, isFile := vol[path]; !isFile {
		for i := range len(path) {
			if path[i] == '/' {
				if _, clash := vol[path[:i]]; clash {
					return fmt.Errorf("write %s into volume of %s: %s is a file", path, id, path[:i])
				}
			}
		}
		prefix := path + "/"
		for p := range vol {
			if strings.HasPrefix(p, prefix) {
				return fmt.Errorf("write %s into volume of %s: it is a directory", path, id)
			}
		}
	}
	vol[path] = slices.Clone(data)
	return nil
}

// Files returns a copy of the volume's files; ok is false without a volume
// (world method).
func (x *Storage) Files(id string) (map[string][]byte, bool) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	vol, ok := x.vols[id]
	if !ok {
		return nil, false
	}
	out := make(map[string][]byte, len(vol))
	for p, b := range vol {
		out[p] = slices.Clone(b)
	}
	return out, true
}

// HasVolume reports whether workspace id has a volume (world method).
func (x *Storage) HasVolume(id string) bool {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	return x.hasVolumeLocked(id)
}

// Lose makes the volume vanish behind the coordinator's back (world
// method).
func (x *Storage) Lose(id string) {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	x.removeLocked(id)
	x.w.recordFault("storage.Lose", id, "")
}

// Remove is an operator's `docker volume rm` of id's volume, behind the
// coordinator's back (world method). Like Docker, the volume provider
// refuses while a container (running or not) holds the volume: the error
// has code VOLUME_IN_USE and the volume is kept, recorded as a
// "storage.Remove" fault with that error. Otherwise the volume and its
// data are gone, recorded as a lost volume ("storage.Lose"). Removing an
// absent volume is a no-op.
func (x *Storage) Remove(id string) error {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	if !x.hasVolumeLocked(id) {
		return nil
	}
	if x.w.Instances.holdsLocked(id) {
		err := x.inUseLocked(id)
		x.w.Rec.Add(history.Event{At: x.w.Clock.Now(), Kind: history.KindFault, Workspace: id, Method: "storage.Remove",
			Args: "docker volume rm", Err: err.Error()})
		return err
	}
	x.removeLocked(id)
	x.w.recordFault("storage.Lose", id, "docker volume rm")
	return nil
}

// Volumes lists the ids of every volume, sorted (world method).
func (x *Storage) Volumes() []string {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	return slices.Clone(x.ids)
}

func (x *Storage) hasVolumeLocked(id string) bool {
	_, ok := x.vols[id]
	return ok
}

func (x *Storage) removeLocked(id string) {
	if _, ok := x.vols[id]; !ok {
		return
	}
	delete(x.vols, id)
	if i, found := slices.BinarySearch(x.ids, id); found {
		x.ids = slices.Delete(x.ids, i, i+1)
	}
}

func (x *Storage) provision(ctx context.Context, inst, id string) error {
	if err := x.w.gate(ctx, mStorProvision, inst, id, ""); err != nil {
		x.w.recordCall(inst, mStorProvision, id, "", "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	result := "exists"
	if !x.hasVolumeLocked(id) {
		x.vols[id] = make(map[string][]byte)
		i, _ := slices.BinarySearch(x.ids, id)
		x.ids = slices.Insert(x.ids, i, id)
		result = "created"
	}
	x.w.recordCall(inst, mStorProvision, id, "", result, nil)
	return nil
}

func (x *Storage) listVolumes(ctx context.Context, inst string) ([]string, error) {
	if err := x.w.gate(ctx, mStorListVolumes, inst, "", ""); err != nil {
		x.w.recordCall(inst, mStorListVolumes, "", "", "", err)
		return nil, err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	out := slices.Clone(x.ids)
	x.w.listings.Record(inst, history.MethodListVolumes, out, func(result string) {
		x.w.recordCall(inst, mStorListVolumes, "", "", result, nil)
	})
	return out, nil
}

func (x *Storage) archive(ctx context.Context, inst, id, opID string) (string, error) {
	key := contracts.ArchiveKey(id, opID)
	if err := x.w.gate(ctx, mStorArchive, inst, id, key); err != nil {
		x.w.recordCall(inst, mStorArchive, id, opID, "", err)
		return "", err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	var (
		uploaded bool
		err      error
	)
	if x.crashJobs > 0 && x.needsUploadLocked(id, key) {
		x.crashJobs--
		data, _, perr := x.packLocked(x.vols[id])
		if perr != nil {
			err = fmt.Errorf("archive job for %s: %w", id, perr)
		} else {
			x.w.Objects.putLocked(key, data)
			x.w.recordCall(inst, mObjPut, id, key, "by the storage job, which then crashed", nil)
			err = &contracts.ProviderError{Code: CodeStorageJobFailed,
				Message: "storage job archive of " + key + " exited with status 137: killed after uploading the archive, before its .meta",
				Context: map[string]any{"action": "archive", "exit_code": 137}}
		}
		x.w.recordCall(inst, mStorArchive, id, opID, "", err)
		return "", err
	}
	key, uploaded, err = x.archiveLocked(id, key)
	result := ""
	switch {
	case err != nil:
	case uploaded:
		result = "uploaded " + key
	default:
		result = "skipped " + key
	}
	x.w.recordCall(inst, mStorArchive, id, opID, result, err)
	return key, err
}

// needsUploadLocked reports whether an archive job for id would upload:
// the volume exists and the object or its .meta is missing.
func (x *Storage) needsUploadLocked(id, key string) bool {
	if _, ok := x.vols[id]; !ok {
		return false
	}
	_, haveArchive := x.w.Objects.data[key]
	_, haveMeta := x.w.Objects.data[contracts.MetaKey(key)]
	return !haveArchive || !haveMeta
}

// archiveLocked runs the archive job; uploaded is false when a complete
// archive was already there.
func (x *Storage) archiveLocked(id, key string) (_ string, uploaded bool, _ error) {
	vol, ok := x.vols[id]
	if !ok {
		return "", false, providerError(contracts.CodeVolumeNotFound, "volume "+contracts.VolumeName(id)+" does not exist")
	}
	objs := x.w.Objects
	_, haveArchive := objs.data[key]
	_, haveMeta := objs.data[contracts.MetaKey(key)]
	if haveArchive && haveMeta {
		return key, false, nil // the job exits 0 without uploading again
	}
	data, meta, err := x.packLocked(vol)
	if err != nil {
		return "", false, fmt.Errorf("archive job for %s: %w", id, err)
	}
	objs.putLocked(key, data)
	objs.putLocked(contracts.MetaKey(key), meta.Encode())
	return key, true, nil
}

func (x *Storage) restore(ctx context.Context, inst, id, key string) (string, error) {
	if err := x.w.gate(ctx, mStorRestore, inst, id, key); err != nil {
		x.w.recordCall(inst, mStorRestore, id, key, "", err)
		return "", err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	marker, err := x.restoreLocked(id, key)
	x.w.recordCall(inst, mStorRestore, id, key, marker, err)
	return marker, err
}

func (x *Storage) restoreLocked(id, key string) (string, error) {
	objs := x.w.Objects
	data, ok := objs.data[key]
	if !ok {
		return "", providerError(contracts.CodeArchiveNotFound, "object "+key+" does not exist")
	}
	meta, ok := objs.data[contracts.MetaKey(key)]
	if !ok {
		return "", providerError(contracts.CodeMetaNotFound, "object "+contracts.MetaKey(key)+" does not exist")
	}
	declared, err := archive.ParseMeta(meta)
	if err == nil {
		err = archive.VerifyMeta(data, meta)
	}
	if err != nil {
		return "", providerError(contracts.CodeChecksumMismatch, err.Error())
	}
	// As the storage job: bounded by what the .meta declares (the fakes
	// have no quota of their own).
	files, err := x.unpackLocked(data, &declared)
	switch {
	case errors.Is(err, archive.ErrMetaMismatch), errors.Is(err, archive.ErrCorrupt):
		return "", providerError(contracts.CodeChecksumMismatch, err.Error())
	case errors.Is(err, archive.ErrQuotaExceeded):
		return "", providerError(contracts.CodeDiskFull, err.Error())
	case err != nil:
		return "", providerError(contracts.CodeTarExtractFailed, err.Error())
	}
	if !x.hasVolumeLocked(id) {
		return "", providerError(contracts.CodeVolumeNotFound, "volume "+contracts.VolumeName(id)+" does not exist")
	}
	x.vols[id] = files
	return key, nil
}

// inUseLocked is the VOLUME_IN_USE error of id's volume, held by its
// container or by another (Instances.HoldVolume).
func (x *Storage) inUseLocked(id string) error {
	if x.w.Instances.ctrs[id] != nil {
		return providerError(contracts.CodeVolumeInUse, "volume "+contracts.VolumeName(id)+" is in use by "+contracts.ContainerName(id))
	}
	return providerError(contracts.CodeVolumeInUse, "volume "+contracts.VolumeName(id)+" is in use by another container")
}

func (x *Storage) deleteVolume(ctx context.Context, inst, id string) error {
	if err := x.w.gate(ctx, mStorDeleteVolume, inst, id, ""); err != nil {
		x.w.recordCall(inst, mStorDeleteVolume, id, "", "", err)
		return err
	}
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	var err error
	result := "absent"
	switch {
	case !x.hasVolumeLocked(id):
	case x.w.Instances.holdsLocked(id):
		err = x.inUseLocked(id)
	default:
		x.removeLocked(id)
		result = "removed"
	}
	x.w.recordCall(inst, mStorDeleteVolume, id, "", result, err)
	return err
}
