package dockerprov

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// agentPort is the agent's container port.
func (p *Provider) agentPort() network.Port {
	port, _ := network.PortFrom(uint16(p.cfg.AgentPort), network.TCP)
	return port
}

// Start creates and starts ws-{id} with its volume at /home/coder and
// returns once it runs and, when the image exposes the agent port, once the
// agent's health endpoint answers 200 (ports.Instances, SPEC 5.1).
//
// A running container is success (after the same health check); a stopped
// or never-started leftover is removed and recreated. Without the volume it
// fails with VOLUME_NOT_FOUND and creates nothing. A missing image is
// IMAGE_PULL_FAILED (pulled only when Config.PullMissingImages), a refused
// create CONTAINER_CREATE_FAILED, a refused start or a container that exits
// or is not running within StartupTimeout CONTAINER_START_FAILED, an agent
// that does not answer within HealthTimeout HEALTH_CHECK_FAILED; a daemon
// that does not answer is DOCKER_UNREACHABLE. A container that failed to
// start or to become healthy is removed, so a retry starts afresh.
func (p *Provider) Start(ctx context.Context, id, imageRef string) error {
	name := contracts.ContainerName(id)
	image := imageRef
	if p.cfg.ImageOverride != "" {
		image = p.cfg.ImageOverride
	}
	startCtx, cancel := withTimeout(ctx, contracts.CodeContainerStartFailed, "start of "+name, p.cfg.StartupTimeout)
	defer cancel()

	if err := p.requireVolume(startCtx, id); err != nil {
		return err
	}
	exposed, err := p.ensureImage(startCtx, image)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		info, err := p.cli.ContainerInspect(startCtx, name, client.ContainerInspectOptions{})
		switch {
		case err == nil && isRunning(info.Container.State):
			p.log.Debug("container already running", "container", name)
			return p.awaitHealthy(ctx, name)
		case err == nil:
			p.log.Info("removing stopped leftover container", "container", name, "state", stateOf(info.Container.State))
			if err := p.removeContainer(startCtx, name); err != nil {
				return fail(startCtx, contracts.CodeContainerStartFailed, err, "remove leftover %s", name)
			}
		case !cerrdefs.IsNotFound(err):
			return fail(startCtx, contracts.CodeDockerUnreachable, err, "inspect container %s", name)
		}
		err = p.createWorkspace(startCtx, id, image, exposed)
		if err == nil {
			if err := p.mountedOwnVolume(startCtx, id, name); err != nil {
				return err
			}
			break
		}
		if cerrdefs.IsConflict(err) {
			if attempt == 0 {
				continue // another Start made it in between: look again
			}
			return fail(startCtx, contracts.CodeContainerStartFailed, err, "create %s", name)
		}
		return err
	}
	if err := p.startAndAwaitRunning(startCtx, name); err != nil {
		p.cleanupContainer(ctx, name, "failed start")
		return err
	}
	return p.awaitHealthy(ctx, name)
}

// isRunning reports whether a container can take traffic.
func isRunning(s *container.State) bool {
	return s != nil && s.Running && !s.Paused && !s.Restarting
}

// createWorkspace creates ws-{id}. A name taken meanwhile (a racing
// Start) is returned as the daemon's conflict error; any other failure is a
// ProviderError.
func (p *Provider) createWorkspace(ctx context.Context, id, image string, exposed []string) error {
	name := contracts.ContainerName(id)
	cfg := &container.Config{
		Image:  image,
		Labels: p.labels(id, roleWorkspace),
	}
	hc := &container.HostConfig{
		Mounts:      []mount.Mount{volumeMount(id, contracts.WorkspaceMountPath)},
		NetworkMode: container.NetworkMode(p.cfg.WorkspaceNetwork),
	}
	port := p.agentPort()
	if slices.Contains(exposed, port.String()) {
		cfg.ExposedPorts = network.PortSet{port: {}}
		hc.PortBindings = network.PortMap{port: {{HostIP: netip.MustParseAddr(p.cfg.PublishIP)}}}
	}
	_, err := p.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc})
	switch {
	case err == nil:
		p.log.Info("created container", "container", name, "image", image)
		return nil
	case cerrdefs.IsConflict(err):
		return err
	case cerrdefs.IsNotFound(err):
		return fail(ctx, contracts.CodeImagePullFailed, err, "create %s from %s", name, image)
	}
	return fail(ctx, contracts.CodeContainerCreate, err, "create %s from %s", name, image)
}

// startAndAwaitRunning starts a created container and waits until it runs.
func (p *Provider) startAndAwaitRunning(ctx context.Context, name string) error {
	if _, err := p.cli.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
		return fail(ctx, contracts.CodeContainerStartFailed, err, "start %s", name)
	}
	for {
		info, err := p.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
		if err != nil {
			return fail(ctx, contracts.CodeContainerStartFailed, err, "inspect %s after start", name)
		}
		s := info.Container.State
		if isRunning(s) {
			return nil
		}
		if s != nil && (s.Status == container.StateExited || s.Status == container.StateDead) {
			stdout, stderr, _ := p.containerLogs(ctx, name, 20)
			last := lastLine(stderr)
			if last == "" {
				last = lastLine(stdout)
			}
			return providerErr(contracts.CodeContainerStartFailed,
				map[string]any{"action": "start", "exit_code": s.ExitCode},
				"%s stopped right after start: %s; last output: %q", name, stateOf(s), last)
		}
		if err := sleep(ctx, p.cfg.PollInterval); err != nil {
			return fail(ctx, contracts.CodeContainerStartFailed, err, "wait for %s to run (%s)", name, stateOf(s))
		}
	}
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := outputLines(out)
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// awaitHealthy waits up to HealthTimeout for the agent of a running
// container to answer its health endpoint with 200. A container that does
// not publish the agent port, or a disabled check, is healthy once it
// runs. On failure the container is removed.
func (p *Provider) awaitHealthy(ctx context.Context, name string) error {
	if p.cfg.HealthPath == "-" {
		return nil
	}
	hctx, cancel := withTimeout(ctx, contracts.CodeHealthCheckFailed, "health check of "+name, p.cfg.HealthTimeout)
	defer cancel()
	addr, ok, err := p.agentAddr(hctx, name)
	if err != nil {
		return fail(hctx, contracts.CodeHealthCheckFailed, err, "inspect %s for its agent port", name)
	}
	if !ok {
		return nil
	}
	url := "http://" + addr + p.cfg.HealthPath
	hc := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		last = probe(hctx, hc, url)
		if last == "" {
			p.log.Debug("container healthy", "container", name, "url", url)
			return nil
		}
		info, err := p.cli.ContainerInspect(hctx, name, client.ContainerInspectOptions{})
		if err == nil && !isRunning(info.Container.State) {
			p.cleanupContainer(ctx, name, "failed health check")
			return providerErr(contracts.CodeHealthCheckFailed,
				map[string]any{"url": url, "last_error": last},
				"%s stopped before its agent answered %s: %s", name, url, stateOf(info.Container.State))
		}
		if err := sleep(hctx, p.cfg.PollInterval); err != nil {
			break
		}
	}
	p.cleanupContainer(ctx, name, "failed health check")
	if ownTimeout(hctx) == nil {
		return unreachableErr("health check of %s: %v (last: %s)", name, context.Cause(hctx), last)
	}
	return providerErr(contracts.CodeHealthCheckFailed,
		map[string]any{"url": url, "last_error": last, "timeout_seconds": p.cfg.HealthTimeout.Seconds()},
		"agent of %s did not answer %s within %v: %s", name, url, p.cfg.HealthTimeout, last)
}

// probe GETs url once; it returns "" on 200, else what went wrong.
func probe(ctx context.Context, hc *http.Client, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err.Error()
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "status " + resp.Status
	}
	return ""
}

// agentAddr is the host address the agent port of a container is
// published on; ok is false when it publishes none.
func (p *Provider) agentAddr(ctx context.Context, name string) (addr string, ok bool, err error) {
	info, err := p.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil {
		return "", false, err
	}
	ns := info.Container.NetworkSettings
	if ns == nil {
		return "", false, nil
	}
	for _, b := range ns.Ports[p.agentPort()] {
		if b.HostPort != "" {
			return net.JoinHostPort(p.cfg.healthHost(), b.HostPort), true, nil
		}
	}
	return "", false, nil
}

// Endpoint returns host:port where the agent of workspace id answers (its
// published agent port), for tests and end-to-end checks.
func (p *Provider) Endpoint(ctx context.Context, id string) (string, error) {
	name := contracts.ContainerName(id)
	addr, ok, err := p.agentAddr(ctx, name)
	switch {
	case err != nil:
		return "", fmt.Errorf("endpoint of %s: %w", name, err)
	case !ok:
		return "", fmt.Errorf("endpoint of %s: port %s is not published", name, p.agentPort())
	}
	return addr, nil
}

// Delete kills and removes ws-{id}; absent is success (ports.Instances).
// A daemon that does not answer, or refuses, is DOCKER_UNREACHABLE.
func (p *Provider) Delete(ctx context.Context, id string) error {
	name := contracts.ContainerName(id)
	_, err := p.cli.ContainerKill(ctx, name, client.ContainerKillOptions{Signal: "KILL"})
	switch {
	case err == nil:
	case cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		// Not running (or already being removed): nothing to kill.
	default:
		return fail(ctx, contracts.CodeDockerUnreachable, err, "kill %s", name)
	}
	if err := p.removeContainer(ctx, name); err != nil {
		return fail(ctx, contracts.CodeDockerUnreachable, err, "remove %s", name)
	}
	p.log.Info("deleted container", "container", name)
	return nil
}

// List returns every workspace container of the provider, ordered by
// workspace id, from one container listing filtered on the managed label
// (ports.Instances). Running means the container can take traffic.
func (p *Provider) List(ctx context.Context) ([]ports.InstanceState, error) {
	res, err := p.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: p.managedFilter()})
	if err != nil {
		return nil, fail(ctx, contracts.CodeDockerUnreachable, err, "list containers")
	}
	byID := make(map[string]bool)
	for _, c := range res.Items {
		if c.Labels[p.labelRole()] != roleWorkspace {
			continue
		}
		id := c.Labels[p.labelWorkspace()]
		if id == "" {
			continue
		}
		byID[id] = byID[id] || c.State == container.StateRunning
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]ports.InstanceState, len(ids))
	for i, id := range ids {
		out[i] = ports.InstanceState{WorkspaceID: id, Running: byID[id]}
	}
	return out, nil
}
