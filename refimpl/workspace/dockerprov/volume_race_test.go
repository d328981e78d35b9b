package dockerprov

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// volumeThief is a Docker API proxy on loopback in front of the engine: it
// removes the volume of id just before it forwards the first container
// creation after arm, so the volume goes between the provider's check and
// the mount that would make it again. It returns the proxy's DOCKER_HOST.
func volumeThief(t *testing.T, direct *testProvider, id string) (host string, arm func()) {
	t.Helper()
	upstream := os.Getenv("DOCKER_HOST")
	if upstream == "" {
		upstream = "unix:///var/run/docker.sock"
	}
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	var dial func(ctx context.Context) (net.Conn, error)
	switch u.Scheme {
	case "unix":
		dial = func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", u.Path) }
	case "tcp":
		dial = func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "tcp", u.Host) }
	default:
		t.Skipf("DOCKER_HOST %q: the proxy speaks to unix and tcp engines only", upstream)
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}
	t.Cleanup(tr.CloseIdleConnections)
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "docker"}) },
		Transport:     tr,
		FlushInterval: -1,
	}
	var armed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/containers/create") && armed.CompareAndSwap(true, false) {
			_, err := direct.cli.VolumeRemove(r.Context(), contracts.VolumeName(id), client.VolumeRemoveOptions{})
			if err != nil {
				http.Error(w, "volume thief: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return "tcp://" + srv.Listener.Addr().String(), func() { armed.Store(true) }
}

// proxied is a provider of direct's objects (its managed value) that talks
// to the engine through a volume thief for id.
func proxied(t *testing.T, direct *testProvider, id string) (*testProvider, func()) {
	t.Helper()
	host, arm := volumeThief(t, direct, id)
	return newProvider(t, func(c *Config) {
		c.ManagedValue = direct.cfg.ManagedValue
		c.DockerHost = host
	}), arm
}

// TestAVolumeLostBeforeItsMountIsNotMadeAgain: when the volume goes between
// the provider's check and the creation of the container that mounts it,
// the engine's mount makes an empty one; a storage job must not archive
// it, and a workspace must not start on it (SPEC 5.1: start never creates
// a volume). Both end VOLUME_NOT_FOUND with neither the container nor the
// stand-in volume left.
func TestAVolumeLostBeforeItsMountIsNotMadeAgain(t *testing.T) {
	direct := newProvider(t, nil)
	ctx := ctxFor(t, 3*time.Minute)

	t.Run("archive", func(t *testing.T) {
		id := newID(t)
		tp, arm := proxied(t, direct, id)
		require.NoError(t, tp.Provision(ctx, id))
		arm()
		_, err := tp.Archive(ctx, id, "op-"+randomHex(t, 4))
		requireCode(t, err, contracts.CodeVolumeNotFound)
		require.False(t, direct.volumeExists(t, id), "the empty volume the mount made is removed")
		_, err = direct.cli.ContainerInspect(ctx, jobName(id), client.ContainerInspectOptions{})
		require.True(t, cerrdefs.IsNotFound(err), "the job container is removed: %v", err)
	})
	t.Run("start", func(t *testing.T) {
		id := newID(t)
		tp, arm := proxied(t, direct, id)
		require.NoError(t, tp.Provision(ctx, id))
		arm()
		requireCode(t, tp.Start(ctx, id, agentImage()), contracts.CodeVolumeNotFound)
		require.False(t, direct.volumeExists(t, id), "the empty volume the mount made is removed")
		require.Empty(t, direct.containerID(t, id), "no container without its volume")
	})
}

// TestAVolumeNotTheProvidersIsNotTheWorkspaces: a volume of the right name
// without the provider's label (ListVolumes does not list it) is not the
// workspace's: Start, the storage jobs and the file helpers answer
// VOLUME_NOT_FOUND and leave it alone.
func TestAVolumeNotTheProvidersIsNotTheWorkspaces(t *testing.T) {
	tp := newProvider(t, nil)
	ctx := ctxFor(t, 2*time.Minute)
	id := newID(t)
	tp.foreignVolume(t, ctx, id)

	requireCode(t, tp.Start(ctx, id, agentImage()), contracts.CodeVolumeNotFound)
	_, err := tp.Archive(ctx, id, "op-"+randomHex(t, 4))
	requireCode(t, err, contracts.CodeVolumeNotFound)
	_, err = tp.ReadFiles(ctx, id)
	requireCode(t, err, contracts.CodeVolumeNotFound)
	require.Empty(t, tp.containerID(t, id))
	require.True(t, tp.volumeExists(t, id), "a volume that is not the provider's is left alone")
}
