package realtier

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	"github.com/wsconverge/converge/refimpl/testenv"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/dockerprov"
	"github.com/wsconverge/converge/refimpl/workspace/pgstore"
	"github.com/wsconverge/converge/refimpl/workspace/redisbus"
	"github.com/wsconverge/converge/refimpl/workspace/runner"
	"github.com/wsconverge/converge/refimpl/workspace/s3objects"
	"github.com/wsconverge/converge/sim/workspace/recorded"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// speedup compresses the coordinator's schedule: 2 s periods take 200 ms.
const speedup = 10

// world is one test's real services, coordinators and recorder.
type world struct {
	t      *testing.T
	ctx    context.Context
	clock  *runner.ScaledClock
	rec    *history.Recorder
	store  *pgstore.Store
	bus    *redisbus.Bus
	objs   *s3objects.Objects
	prov   *dockerprov.Provider
	api    *api.Service
	image  string
	mu     sync.Mutex
	coords map[string]*coordProc
}

type coordProc struct {
	coord  ports.Coordinator
	lead   *pgstore.Leadership
	dead   bool
	cancel context.CancelFunc
	done   chan error
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := t.Context()
	dsn := testenv.PostgresDB(t)
	redisURL := testenv.Redis(t)
	endpoint, access, secret := testenv.MinIO(t)
	w := &world{t: t, ctx: ctx, rec: history.NewRecorder(), coords: map[string]*coordProc{}}
	w.clock = runner.NewScaledClock(time.Now(), speedup)
	var err error
	w.store, err = pgstore.Open(ctx, dsn, w.clock)
	require.NoError(t, err)
	t.Cleanup(w.store.Close)
	require.NoError(t, w.store.Migrate(ctx))
	w.bus, err = redisbus.New(ctx, redisURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.bus.Close() })
	bucket := "converge-archives"
	w.objs, err = s3objects.New(ctx, endpoint, access, secret, bucket, false)
	require.NoError(t, err)
	w.image = os.Getenv("CONVERGE_WORKSPACE_AGENT_IMAGE")
	if w.image == "" {
		w.image = "converge/workspace-agent:dev"
	}
	w.prov, err = dockerprov.New(ctx, dockerprov.Config{
		S3:             dockerprov.S3{Endpoint: endpoint, AccessKey: access, SecretKey: secret, Bucket: bucket},
		JobNetwork:     "host",
		ManagedValue:   "realtier-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")),
		StartupTimeout: time.Minute,
		HealthTimeout:  30 * time.Second,
		JobTimeout:     2 * time.Minute,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		w.stopAll()
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = w.prov.Cleanup(cctx)
		w.prov.Close()
	})
	w.api = api.New(w.deps("api"))
	return w
}

// deps gives one process its own view: its own leader session, recorded.
func (w *world) deps(name string) ports.Deps {
	return w.depsWith(name, w.store.Leadership())
}

func (w *world) depsWith(name string, lead *pgstore.Leadership) ports.Deps {
	d := ports.Deps{
		Instance: name, Store: w.store, Leadership: lead, Feed: w.store,
		Instances: w.prov, Storage: w.prov, Objects: w.objs, Bus: w.bus,
		Clock: w.clock, IDs: runner.IDs{}, Limits: contracts.DefaultLimits,
	}
	return recorded.Deps(d, w.rec)
}

// start runs a coordinator instance under the production runner; wrap may
// replace its deps (to crash it at a chosen call).
func (w *world) start(name string, wrap func(ports.Deps) ports.Deps) *coordProc {
	w.t.Helper()
	lead := w.store.Leadership()
	d := w.depsWith(name, lead)
	if wrap != nil {
		d = wrap(d)
	}
	c, err := wsref.NewSystem().NewCoordinator(d)
	require.NoError(w.t, err)
	ctx, cancel := context.WithCancel(w.ctx)
	p := &coordProc{coord: c, lead: lead, cancel: cancel, done: make(chan error, 1)}
	go func() {
		p.done <- runner.Run(ctx, c, w.clock, runner.Config{Speedup: speedup, MaxSleep: 100 * time.Millisecond})
	}()
	w.mu.Lock()
	w.coords[name] = p
	w.mu.Unlock()
	return p
}

// kill ends instance name as a dead process: its runner stops and its DB
// sessions close, so PostgreSQL releases its lock.
func (w *world) kill(name string) {
	w.mu.Lock()
	p := w.coords[name]
	w.mu.Unlock()
	p.cancel()
	<-p.done
	// The harness injected this fault: record it as the fakes would (the
	// process died, its session ended, its lock went with it), before the
	// session closes: once it has, the standby may take the lock at once,
	// and its acquisition must not be recorded ahead of the death that
	// freed it.
	now := w.clock.Now()
	w.rec.Add(history.Event{At: now, Kind: history.KindCrash, Instance: name, Method: "crash", Args: "killed by the test"})
	if e, ok := p.coord.(interface{ Epoch() int64 }); ok && p.coord.IsLeader() {
		w.rec.Add(history.Event{At: now, Kind: history.KindLeader, Instance: name, Method: "lost", Epoch: e.Epoch()})
	}
	require.NoError(w.t, p.lead.Close(context.Background()))
	w.mu.Lock()
	p.dead = true
	w.mu.Unlock()
}

func (w *world) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.coords {
		p.cancel()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
		_ = p.lead.Close(context.Background())
	}
}

func (w *world) create(desired contracts.DesiredState, mods ...func(*ports.CreateRequest)) string {
	w.t.Helper()
	d := string(desired)
	req := ports.CreateRequest{Name: "dev", ImageRef: w.image, DesiredState: &d}
	for _, m := range mods {
		m(&req)
	}
	ws, err := w.api.Create(w.ctx, "alice", req)
	require.NoError(w.t, err)
	return ws.ID
}

func (w *world) setDesired(id string, d contracts.DesiredState) {
	w.t.Helper()
	s := string(d)
	require.Eventually(w.t, func() bool {
		_, err := w.api.Patch(w.ctx, "alice", id, ports.PatchRequest{DesiredState: &s})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "PATCH desired %s", d)
}

func (w *world) row(id string) contracts.Workspace {
	w.t.Helper()
	r, err := w.store.Get(w.ctx, id)
	require.NoError(w.t, err)
	return r
}

// wait polls until workspace id shows display state d with no operation.
func (w *world) wait(id string, d contracts.DisplayState, limit time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		r := w.row(id)
		if contracts.Display(&r) == d && r.Operation == contracts.OpNone && w.recordedIdle(id) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := w.row(id)
	w.t.Fatalf("workspace %s did not reach %s within %s: display %s, operation %s, error %+v\n%s",
		id, d, limit, contracts.Display(&r), r.Operation, r.ErrorInfo, strings.Join(history.Timeline(w.rec.Tail(40, nil), w.clock.Start), "\n"))
}

// recordedIdle reports whether the history has caught up with an idle
// row: the row is committed before the recording decorator appends the
// write, so a test that reads the history right after seeing the row
// could miss the completing write.
func (w *world) recordedIdle(id string) bool {
	op := contracts.OpNone
	for _, e := range w.rec.Events() {
		if e.Workspace == id && e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.Operation.Set {
			op = e.Patch.Operation.V
		}
	}
	return op == contracts.OpNone
}

// agentPut and agentGet reach the workspace agent inside the container.
func (w *world) agentPut(id, path string, data []byte) {
	w.t.Helper()
	ep, err := w.prov.Endpoint(w.ctx, id)
	require.NoError(w.t, err)
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPut, "http://"+ep+"/files/"+path, bytes.NewReader(data))
	require.NoError(w.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Less(w.t, resp.StatusCode, 300, "PUT %s: %s", path, body)
}

func (w *world) agentGet(id, path string) []byte {
	w.t.Helper()
	ep, err := w.prov.Endpoint(w.ctx, id)
	require.NoError(w.t, err)
	resp, err := http.Get("http://" + ep + "/files/" + path)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	require.Equal(w.t, http.StatusOK, resp.StatusCode, "GET %s: %s", path, body)
	return body
}

// userData writes n files through the agent and returns them.
func (w *world) userData(id string, n int) map[string][]byte {
	w.t.Helper()
	files := map[string][]byte{}
	for i := range n {
		p := fmt.Sprintf("project/notes-%d.md", i)
		files[p] = bytes.Repeat([]byte(fmt.Sprintf("%s line %d\n", id, i)), 200+i)
		w.agentPut(id, p, files[p])
	}
	return files
}

func (w *world) requireData(id string, files map[string][]byte) {
	w.t.Helper()
	for p, want := range files {
		require.Equal(w.t, want, w.agentGet(id, p), "%s survives byte for byte", p)
	}
}

// harnessUnjudgeable are the checkers this harness's own moves would fail
// with a correct implementation: ttl-period, since the TTL Manager is not
// stepped while the harness moves the clock on; release-cause, since the
// harness shuts instances down and a release at shutdown has no failure
// before it.
var harnessUnjudgeable = map[string]bool{"ttl-period": true, "release-cause": true}

// judge runs every checker over the recorded history, but those whose
// bounds assume steps that take no time (wsjudge.StepTimed): a step's
// Docker and PostgreSQL calls, tens to hundreds of real milliseconds, last
// seconds on a coordinator's clock that runs speedup times faster, so a
// correct implementation could fail them here. The simulator judges them
// on virtual time, where a step takes none. Nor those of
// harnessUnjudgeable.
func (w *world) judge() *wsjudge.Report {
	w.t.Helper()
	var checkers []wsjudge.Checker
	for _, c := range wsjudge.All() {
		if _, stepTimed := wsjudge.InstantStepsOnly(c); !stepTimed && !harnessUnjudgeable[c.Name()] {
			checkers = append(checkers, c)
		}
	}
	r := wsjudge.Check(wsjudge.Input{Events: w.rec.Events()}, checkers...)
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, v.String())
	}
	require.Empty(w.t, lines, "contract violations on real services")
	return r
}

func (w *world) leader() string {
	w.t.Helper()
	var name string
	require.Eventually(w.t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for n, p := range w.coords {
			if !p.dead && p.coord.IsLeader() {
				name = n
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond)
	return name
}

// dockerKill kills a container as the OOM killer would.
func dockerKill(t *testing.T, name string) {
	t.Helper()
	out, err := exec.Command("docker", "kill", name).CombinedOutput()
	require.NoError(t, err, "docker kill %s: %s", name, out)
}

func ptr[T any](v T) *T { return &v }
