package dockerprov

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Roles of the containers the provider makes (the {prefix}role label).
const (
	roleWorkspace = "workspace"
	roleJob       = "storage-job"
	roleFiles     = "files"
)

// cleanupTimeout bounds the removal of a container after its work is done
// (or failed): it runs on a context of its own, so a caller that gave up
// does not leave the container behind.
const cleanupTimeout = 30 * time.Second

// Provider runs workspaces on a Docker engine: ports.Instances (containers
// ws-{id}) and ports.Storage (volumes ws-{id}-home, archive and restore by
// storage-job containers). It is safe for concurrent use.
type Provider struct {
	cfg Config
	cli *client.Client
	log *slog.Logger
}

var (
	_ ports.Instances = (*Provider)(nil)
	_ ports.Storage   = (*Provider)(nil)
)

// New connects to the Docker engine of cfg and checks that it answers (the
// client negotiates the API version down to the engine's).
func New(ctx context.Context, cfg Config) (*Provider, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	opts := []client.Opt{client.FromEnv}
	if cfg.DockerHost != "" {
		opts = append(opts, client.WithHost(cfg.DockerHost))
	}
	opts = append(opts, cfg.ClientOptions...)
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("dockerprov: docker client: %w", err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("dockerprov: ping docker at %s: %w", cli.DaemonHost(), err)
	}
	return &Provider{cfg: cfg, cli: cli, log: cfg.Logger.With("component", "dockerprov")}, nil
}

// Close releases the client's connections.
func (p *Provider) Close() error {
	if err := p.cli.Close(); err != nil {
		return fmt.Errorf("dockerprov: close client: %w", err)
	}
	return nil
}

// Config returns the provider's configuration with its defaults filled in.
func (p *Provider) Config() Config { return p.cfg }

// Label names.
func (p *Provider) labelManaged() string   { return p.cfg.LabelPrefix + "managed" }
func (p *Provider) labelWorkspace() string { return p.cfg.LabelPrefix + "workspace" }
func (p *Provider) labelRole() string      { return p.cfg.LabelPrefix + "role" }

// labels marks an object of workspace id made for role.
func (p *Provider) labels(id, role string) map[string]string {
	return map[string]string{
		p.labelManaged():   p.cfg.ManagedValue,
		p.labelWorkspace(): id,
		p.labelRole():      role,
	}
}

// managedFilter selects the provider's objects. It is the only label
// filter of a listing: the daemon ANDs several, and the rest is sorted out
// in code.
func (p *Provider) managedFilter() client.Filters {
	return make(client.Filters).Add("label", p.labelManaged()+"="+p.cfg.ManagedValue)
}

// jobName is the storage-job container of workspace id: one name, so two
// jobs can never write one volume at once.
func jobName(id string) string { return contracts.ContainerName(id) + "-storage-job" }

// volumeMount mounts the home volume of id at target.
func volumeMount(id, target string) mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: contracts.VolumeName(id), Target: target}
}

// requireVolume fails with VOLUME_NOT_FOUND unless the volume of id
// exists and is the provider's: one of that name without its managed
// label is not the workspace's volume (ListVolumes does not list it, and
// Provision refuses it), such as one the engine's mount made when the
// volume had gone.
func (p *Provider) requireVolume(ctx context.Context, id string) error {
	name := contracts.VolumeName(id)
	res, err := p.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
	switch {
	case err == nil && res.Volume.Labels[p.labelManaged()] == p.cfg.ManagedValue:
		return nil
	case err == nil:
		return providerErr(contracts.CodeVolumeNotFound,
			map[string]any{"expected": "volume_exists=true", "actual": "false", "volume": name,
				"detail": "a volume of that name exists but is not managed by this provider"},
			"volume %s exists but is not managed by this provider (label %s=%q, want %q)",
			name, p.labelManaged(), res.Volume.Labels[p.labelManaged()], p.cfg.ManagedValue)
	case cerrdefs.IsNotFound(err):
		return providerErr(contracts.CodeVolumeNotFound,
			map[string]any{"expected": "volume_exists=true", "actual": "false", "volume": name},
			"volume %s does not exist", name)
	}
	return fail(ctx, contracts.CodeDockerUnreachable, err, "inspect volume %s", name)
}

// mountedOwnVolume checks, once container ref that mounts the volume of
// id has been created, that the mount found the provider's volume. The
// engine creates a named volume a mount asks for when it is missing, so a
// volume removed between requireVolume and the container's creation comes
// back empty and unlabelled. Then ref and that volume are removed and the
// answer is VOLUME_NOT_FOUND: a container never creates its volume (SPEC
// 5.1), and a storage job must not archive an empty stand-in.
func (p *Provider) mountedOwnVolume(ctx context.Context, id, ref string) error {
	err := p.requireVolume(ctx, id)
	var pe *contracts.ProviderError
	if err == nil || !errors.As(err, &pe) || pe.Code != contracts.CodeVolumeNotFound {
		return err
	}
	name := contracts.VolumeName(id)
	p.log.Warn("the volume went before the container mounting it was created; removing what the mount made",
		"volume", name, "container", ref)
	p.cleanupContainer(ctx, ref, "its volume went missing")
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, rerr := p.cli.VolumeRemove(rctx, name, client.VolumeRemoveOptions{}); rerr != nil && !cerrdefs.IsNotFound(rerr) {
		p.log.Warn("could not remove the volume the mount made", "volume", name, "err", rerr)
	}
	return err
}

// ensureImage makes sure image is present: it pulls a missing image only
// when the configuration allows it, else the image is IMAGE_PULL_FAILED.
// It returns the image's exposed ports ("8080/tcp").
func (p *Provider) ensureImage(ctx context.Context, image string) ([]string, error) {
	if image == "" {
		return nil, providerErr(contracts.CodeImagePullFailed, nil, "no image given")
	}
	res, err := p.cli.ImageInspect(ctx, image)
	if err != nil && cerrdefs.IsNotFound(err) && p.cfg.PullMissingImages {
		p.log.Info("pulling image", "image", image)
		if perr := p.pull(ctx, image); perr != nil {
			return nil, fail(ctx, contracts.CodeImagePullFailed, perr, "pull image %s", image)
		}
		res, err = p.cli.ImageInspect(ctx, image)
	}
	switch {
	case err == nil:
	case cerrdefs.IsNotFound(err):
		return nil, providerErr(contracts.CodeImagePullFailed, map[string]any{"image": image},
			"image %s is not present locally (pulling is off)", image)
	default:
		return nil, fail(ctx, contracts.CodeImagePullFailed, err, "inspect image %s", image)
	}
	var exposed []string
	if res.Config != nil {
		for port := range res.Config.ExposedPorts {
			exposed = append(exposed, port)
		}
	}
	slices.Sort(exposed)
	return exposed, nil
}

func (p *Provider) pull(ctx context.Context, image string) error {
	resp, err := p.cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	return resp.Wait(ctx)
}

// removeContainer force-removes a container (killing it if it runs) on a
// context of its own; absent is success.
func (p *Provider) removeContainer(ctx context.Context, ref string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := p.cli.ContainerRemove(ctx, ref, client.ContainerRemoveOptions{Force: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	if cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress") {
		return p.awaitGone(ctx, ref)
	}
	return fmt.Errorf("remove container %s: %w", ref, err)
}

// awaitGone waits until a container that is being removed is gone.
func (p *Provider) awaitGone(ctx context.Context, ref string) error {
	for {
		_, err := p.cli.ContainerInspect(ctx, ref, client.ContainerInspectOptions{})
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		if err := sleep(ctx, p.cfg.PollInterval); err != nil {
			return fmt.Errorf("container %s still being removed: %w", ref, err)
		}
	}
}

// cleanupContainer removes a container and logs a failure to do so.
func (p *Provider) cleanupContainer(ctx context.Context, ref, why string) {
	if err := p.removeContainer(ctx, ref); err != nil {
		p.log.Warn("could not remove container", "container", ref, "after", why, "err", err)
	}
}

// Cleanup removes every container and volume carrying the provider's
// managed label (its ManagedValue): for tests, and for an operator
// resetting a machine. Containers go first, so their volumes are free.
func (p *Provider) Cleanup(ctx context.Context) error {
	ctrs, err := p.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: p.managedFilter()})
	if err != nil {
		return fmt.Errorf("cleanup: list containers: %w", err)
	}
	var errs []error
	ids := make([]string, 0, len(ctrs.Items))
	for _, c := range ctrs.Items {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := p.removeContainer(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	vols, err := p.cli.VolumeList(ctx, client.VolumeListOptions{Filters: p.managedFilter()})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("cleanup: list volumes: %w", err))...)
	}
	names := make([]string, 0, len(vols.Items))
	for _, v := range vols.Items {
		names = append(names, v.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, err := p.cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cleanup: remove volume %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// containerLogs returns the demultiplexed tail of a container's output.
func (p *Provider) containerLogs(ctx context.Context, ref string, tail int) (stdout, stderr string, err error) {
	rc, err := p.cli.ContainerLogs(ctx, ref, client.ContainerLogsOptions{
		ShowStdout: true, ShowStderr: true, Tail: fmt.Sprint(tail),
	})
	if err != nil {
		return "", "", fmt.Errorf("logs of %s: %w", ref, err)
	}
	defer func() { _ = rc.Close() }()
	var out, errOut strings.Builder
	if _, err := stdcopy.StdCopy(&out, &errOut, rc); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("read logs of %s: %w", ref, err)
	}
	return out.String(), errOut.String(), nil
}

// stateOf summarises a container's state for messages.
func stateOf(s *container.State) string {
	if s == nil {
		return "unknown"
	}
	if s.Error != "" {
		return fmt.Sprintf("%s (exit %d, %s)", s.Status, s.ExitCode, s.Error)
	}
	return fmt.Sprintf("%s (exit %d)", s.Status, s.ExitCode)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
