package dockerprov

import (
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// TestWorkspaceLifecycle walks one workspace through provision, start,
// stop and start again, checking that what the user wrote through the
// agent survives in the volume.
func TestWorkspaceLifecycle(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, 3*time.Minute)
	id := newID(t)
	image := agentImage()

	require.NoError(t, tp.Provision(ctx, id))
	require.NoError(t, tp.Provision(ctx, id), "existing volume is success")
	vols, err := tp.ListVolumes(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{id}, vols)

	require.NoError(t, tp.Start(ctx, id, image))
	insts, err := tp.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []ports.InstanceState{{WorkspaceID: id, Running: true}}, insts)
	first := tp.containerID(t, id)

	addr, err := tp.Endpoint(ctx, id)
	require.NoError(t, err)
	content := []byte("written through the agent\n")
	agentPut(t, addr, "projects/notes.txt", content)

	require.NoError(t, tp.Start(ctx, id, image), "running already is success")
	require.Equal(t, first, tp.containerID(t, id), "a running container is kept")

	files, err := tp.ReadFiles(ctx, id)
	require.NoError(t, err, "the volume can be read while the workspace runs")
	require.Equal(t, content, files["projects/notes.txt"])

	require.NoError(t, tp.Delete(ctx, id))
	require.NoError(t, tp.Delete(ctx, id), "absent is success")
	require.Empty(t, tp.containerID(t, id))
	insts, err = tp.List(ctx)
	require.NoError(t, err)
	require.Empty(t, insts)
	require.True(t, tp.volumeExists(t, id), "stopping keeps the volume")

	require.NoError(t, tp.Start(ctx, id, image))
	addr, err = tp.Endpoint(ctx, id)
	require.NoError(t, err)
	require.Equal(t, content, agentGet(t, addr, "projects/notes.txt"))

	// A file written into the volume from outside is what the agent serves.
	require.NoError(t, tp.WriteFile(ctx, id, "from/outside.bin", []byte{0, 1, 2, 255}))
	require.Equal(t, []byte{0, 1, 2, 255}, agentGet(t, addr, "from/outside.bin"))
	agentPut(t, addr, "from/agent.txt", []byte("the agent can write into a directory WriteFile made"))
}

// TestStartRecreatesStoppedLeftover kills the workspace container behind
// the provider's back: List reports it stopped, Start replaces it.
func TestStartRecreatesStoppedLeftover(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, 2*time.Minute)
	id := newID(t)
	require.NoError(t, tp.Provision(ctx, id))
	require.NoError(t, tp.Start(ctx, id, agentImage()))
	first := tp.containerID(t, id)

	tp.stop(t, id)
	insts, err := tp.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []ports.InstanceState{{WorkspaceID: id, Running: false}}, insts,
		"a killed container is listed as existing and not running")

	requireCode(t, tp.DeleteVolume(ctx, id), contracts.CodeVolumeInUse)
	require.True(t, tp.volumeExists(t, id), "a volume a stopped container references is in use")

	require.NoError(t, tp.Start(ctx, id, agentImage()))
	second := tp.containerID(t, id)
	require.NotEqual(t, first, second, "the stopped leftover was replaced")
	insts, err = tp.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []ports.InstanceState{{WorkspaceID: id, Running: true}}, insts)

	requireCode(t, tp.DeleteVolume(ctx, id), contracts.CodeVolumeInUse)
	require.NoError(t, tp.Delete(ctx, id))
	require.NoError(t, tp.DeleteVolume(ctx, id))
	require.NoError(t, tp.DeleteVolume(ctx, id), "absent is success")
	require.False(t, tp.volumeExists(t, id))
	vols, err := tp.ListVolumes(ctx)
	require.NoError(t, err)
	require.Empty(t, vols)
}

// TestStartWithoutVolume: never a container without its volume, and the
// volume is not created by the attempt.
func TestStartWithoutVolume(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, time.Minute)
	id := newID(t)

	pe := requireCode(t, tp.Start(ctx, id, agentImage()), contracts.CodeVolumeNotFound)
	require.Equal(t, "volume_exists=true", pe.Context["expected"])
	require.False(t, tp.volumeExists(t, id), "Start must not create the volume")
	require.Empty(t, tp.containerID(t, id))

	_, err := tp.ReadFiles(ctx, id)
	requireCode(t, err, contracts.CodeVolumeNotFound)
	requireCode(t, tp.WriteFile(ctx, id, "x", []byte("x")), contracts.CodeVolumeNotFound)
	require.False(t, tp.volumeExists(t, id), "the file helpers must not create the volume")
}

func TestStartWithMissingImage(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, time.Minute)
	id := newID(t)
	require.NoError(t, tp.Provision(ctx, id))

	requireCode(t, tp.Start(ctx, id, "converge/no-such-image:never"), contracts.CodeImagePullFailed)
	require.Empty(t, tp.containerID(t, id))
}

// TestFailedHealthCheckRemovesContainer: an agent that never answers 200
// on the health path fails Start, and no container is left to look
// RUNNING.
func TestFailedHealthCheckRemovesContainer(t *testing.T) {
	tp := newProvider(t, func(c *Config) {
		c.HealthPath = "/no-such-endpoint"
		c.HealthTimeout = time.Second
	})
	ctx := ctxFor(t, time.Minute)
	id := newID(t)
	require.NoError(t, tp.Provision(ctx, id))

	pe := requireCode(t, tp.Start(ctx, id, agentImage()), contracts.CodeHealthCheckFailed)
	require.Contains(t, pe.Message, "/no-such-endpoint")
	require.Empty(t, tp.containerID(t, id))
	insts, err := tp.List(ctx)
	require.NoError(t, err)
	require.Empty(t, insts)
}

// TestListingsAreOneCallEach counts the Docker API requests behind List and
// ListVolumes with several workspaces present.
func TestListingsAreOneCallEach(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, 2*time.Minute)
	a, b, c := newID(t), newID(t), newID(t)
	for _, id := range []string{a, b, c} {
		require.NoError(t, tp.Provision(ctx, id))
	}
	require.NoError(t, tp.Start(ctx, a, agentImage()))
	require.NoError(t, tp.Start(ctx, b, agentImage()))
	tp.stop(t, b)
	// A storage job or file helper of c carries the managed label too, but
	// is no workspace container.
	helper, err := tp.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: tp.cfg.StorageJobImage, Labels: tp.labels(c, roleFiles)},
		HostConfig: &container.HostConfig{Mounts: []mount.Mount{volumeMount(c, "/data")}, NetworkMode: "none"},
	})
	require.NoError(t, err)
	require.NotEmpty(t, helper.ID, "removed by the provider's cleanup")

	want := []ports.InstanceState{{WorkspaceID: a, Running: true}, {WorkspaceID: b, Running: false}}
	if b < a {
		want[0], want[1] = want[1], want[0]
	}
	tp.reqs.reset()
	insts, err := tp.List(ctx)
	require.NoError(t, err)
	require.Equal(t, want, insts, "a running and a stopped workspace, no helper")
	require.Equal(t, 1, tp.reqs.count("GET /containers/json"))
	require.Equal(t, 1, tp.reqs.total(), "List is one request")

	tp.reqs.reset()
	vols, err := tp.ListVolumes(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a, b, c}, vols)
	require.IsNonDecreasing(t, vols)
	require.Equal(t, 1, tp.reqs.count("GET /volumes"))
	require.Equal(t, 1, tp.reqs.total(), "ListVolumes is one request")
}
