package dockerprov

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
)

// Storage-job modes (cmd/storage-job).
const (
	modeArchive = "archive"
	modeRestore = "restore"
)

// Provision creates the volume ws-{id}-home with the provider's labels;
// an existing one is success (ports.Storage). A volume of that name that
// lacks the provider's managed label (made by someone else, so invisible to
// ListVolumes) is VOLUME_CREATE_FAILED rather than a silent success.
func (p *Provider) Provision(ctx context.Context, id string) error {
	name := contracts.VolumeName(id)
	res, err := p.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: p.labels(id, roleWorkspace)})
	if err != nil {
		return fail(ctx, contracts.CodeVolumeCreateFailed, err, "create volume %s", name)
	}
	if got := res.Volume.Labels[p.labelManaged()]; got != p.cfg.ManagedValue {
		return providerErr(contracts.CodeVolumeCreateFailed, map[string]any{"volume": name},
			"volume %s exists but is not managed by this provider (label %s=%q, want %q)",
			name, p.labelManaged(), got, p.cfg.ManagedValue)
	}
	return nil
}

// ListVolumes returns the ids of every workspace with a volume of the
// provider, sorted, from one volume listing (ports.Storage).
func (p *Provider) ListVolumes(ctx context.Context) ([]string, error) {
	res, err := p.cli.VolumeList(ctx, client.VolumeListOptions{Filters: p.managedFilter()})
	if err != nil {
		return nil, fail(ctx, contracts.CodeDockerUnreachable, err, "list volumes")
	}
	ids := make([]string, 0, len(res.Items))
	for _, v := range res.Items {
		id := v.Labels[p.labelWorkspace()]
		if id == "" || v.Name != contracts.VolumeName(id) {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// DeleteVolume removes ws-{id}-home; absent is success; a volume any
// container still references (running or not) is VOLUME_IN_USE, never
// success (ports.Storage).
func (p *Provider) DeleteVolume(ctx context.Context, id string) error {
	name := contracts.VolumeName(id)
	_, err := p.cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{})
	switch {
	case err == nil:
		p.log.Info("deleted volume", "volume", name)
		return nil
	case cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return providerErr(contracts.CodeVolumeInUse, map[string]any{"volume": name},
			"volume %s is in use: %v", name, err)
	}
	return fail(ctx, contracts.CodeDockerUnreachable, err, "remove volume %s", name)
}

// Archive runs the storage job in archive mode on the volume of id and
// returns the expected key of (id, opID); the job itself skips the upload
// when the archive and its .meta already exist (ports.Storage).
func (p *Provider) Archive(ctx context.Context, id, opID string) (string, error) {
	key := contracts.ArchiveKey(id, opID)
	if err := p.runJob(ctx, id, modeArchive, key); err != nil {
		return "", err
	}
	return key, nil
}

// Restore runs the storage job in restore mode: the volume of id becomes
// equal to archive key. It returns the marker (= key) (ports.Storage). A key
// that is not an archive key cannot exist: ARCHIVE_NOT_FOUND.
func (p *Provider) Restore(ctx context.Context, id, key string) (string, error) {
	if _, _, ok := contracts.ParseArchiveKey(key); !ok || contracts.IsMetaKey(key) {
		if err := p.requireVolume(ctx, id); err != nil {
			return "", err
		}
		return "", providerErr(contracts.CodeArchiveNotFound,
			map[string]any{"archive_key": key, "detail": "not an archive key"},
			"%q is not an archive key (archives/{id}/{op_id}/…)", key)
	}
	if err := p.runJob(ctx, id, modeRestore, key); err != nil {
		return "", err
	}
	return key, nil
}

// runJob runs one storage job (SPEC 5.3) on the volume of id and maps its
// exit status to a ProviderError. The volume must exist (VOLUME_NOT_FOUND
// before any job) and the workspace container must not run (VOLUME_IN_USE:
// the job must be the volume's only writer). The job container is named
// after the workspace, so two jobs never share a volume: a leftover of a
// crashed caller is removed first. It is always removed afterwards.
func (p *Provider) runJob(ctx context.Context, id, mode, key string) error {
	if err := p.requireVolume(ctx, id); err != nil {
		return err
	}
	ws := contracts.ContainerName(id)
	info, err := p.cli.ContainerInspect(ctx, ws, client.ContainerInspectOptions{})
	switch {
	case err == nil && isRunning(info.Container.State):
		return providerErr(contracts.CodeVolumeInUse, map[string]any{"volume": contracts.VolumeName(id), "container": ws},
			"refusing the %s job: %s is running on the volume", mode, ws)
	case err != nil && !cerrdefs.IsNotFound(err):
		return fail(ctx, contracts.CodeDockerUnreachable, err, "inspect %s", ws)
	}
	if _, err := p.ensureImage(ctx, p.cfg.StorageJobImage); err != nil {
		return err
	}

	jctx, cancel := withTimeout(ctx, CodeStorageJobFailed, "storage job "+mode+" of "+key, p.cfg.JobTimeout)
	defer cancel()
	name := jobName(id)
	if err := p.createJob(jctx, id, mode, key); err != nil {
		return err
	}
	defer p.cleanupContainer(ctx, name, "storage job")
	if err := p.mountedOwnVolume(jctx, id, name); err != nil {
		return err
	}

	log := p.log.With("container", name, "mode", mode, "archive", key)
	log.Info("storage job starting")
	if _, err := p.cli.ContainerStart(jctx, name, client.ContainerStartOptions{}); err != nil {
		return fail(jctx, contracts.CodeContainerStartFailed, err, "start storage job %s", name)
	}
	status, err := p.wait(jctx, name)
	if err != nil {
		return fail(jctx, CodeStorageJobFailed, err, "storage job %s of %s", mode, key)
	}
	stdout, stderr, logErr := p.containerLogs(jctx, name, 200)
	if logErr != nil {
		log.Warn("could not read the job's output", "err", logErr)
	}
	if perr := jobError(mode, key, status, stdout, archive.CodeOfExit); perr != nil {
		log.Warn("storage job failed", "status", status, "code", perr.Code, "stdout", stdout, "stderr", stderr)
		return perr
	}
	log.Info("storage job done", "result", lastLine(stdout))
	return nil
}

// jobEnv is the storage job's environment for mode on archive key.
func (p *Provider) jobEnv(mode, key string) []string {
	s3 := p.cfg.S3
	env := []string{
		"JOB_MODE=" + mode,
		"ARCHIVE_URL=s3://" + s3.Bucket + "/" + key,
		"S3_ENDPOINT=" + s3.Endpoint,
		"S3_ACCESS_KEY=" + s3.AccessKey,
		"S3_SECRET_KEY=" + s3.SecretKey,
		"S3_SECURE=" + strconv.FormatBool(s3.Secure),
		"DATA_DIR=" + contracts.StorageJobMountPath,
	}
	if n := p.cfg.RestoreMaxBytes; n > 0 {
		env = append(env, "RESTORE_MAX_BYTES="+strconv.FormatInt(n, 10))
	}
	if n := p.cfg.RestoreMaxEntries; n > 0 {
		env = append(env, "RESTORE_MAX_ENTRIES="+strconv.FormatInt(n, 10))
	}
	return env
}

// createJob creates the storage-job container of id, replacing a leftover.
func (p *Provider) createJob(ctx context.Context, id, mode, key string) error {
	name := jobName(id)
	labels := p.labels(id, roleJob)
	labels[p.cfg.LabelPrefix+"job-mode"] = mode
	opts := client.ContainerCreateOptions{
		Name: name,
		Config: &container.Config{
			Image:  p.cfg.StorageJobImage,
			User:   p.cfg.User,
			Env:    p.jobEnv(mode, key),
			Labels: labels,
		},
		HostConfig: &container.HostConfig{
			Mounts:      []mount.Mount{volumeMount(id, contracts.StorageJobMountPath)},
			NetworkMode: container.NetworkMode(p.cfg.JobNetwork),
			ExtraHosts:  slices.Clone(p.cfg.JobExtraHosts),
		},
	}
	for attempt := 0; ; attempt++ {
		_, err := p.cli.ContainerCreate(ctx, opts)
		switch {
		case err == nil:
			return nil
		case cerrdefs.IsConflict(err) && attempt == 0:
			p.log.Warn("removing a leftover storage job", "container", name)
			if err := p.removeContainer(ctx, name); err != nil {
				return fail(ctx, contracts.CodeContainerCreate, err, "remove leftover storage job %s", name)
			}
			continue
		case cerrdefs.IsNotFound(err):
			return fail(ctx, contracts.CodeImagePullFailed, err, "create storage job %s", name)
		}
		return fail(ctx, contracts.CodeContainerCreate, err, "create storage job %s", name)
	}
}

// wait waits for a started container to stop and returns its exit status.
func (p *Provider) wait(ctx context.Context, name string) (int, error) {
	res := p.cli.ContainerWait(ctx, name, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-res.Result:
		if r.Error != nil && r.Error.Message != "" {
			return 0, fmt.Errorf("wait for %s: %s", name, r.Error.Message)
		}
		return int(r.StatusCode), nil
	case err := <-res.Error:
		return 0, fmt.Errorf("wait for %s: %w", name, err)
	}
}
