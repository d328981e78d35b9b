package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/coordinator"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// sseEvent is one event read off a stream.
type sseEvent struct {
	name string
	data map[string]any
}

// stream is an open event stream; events arrive on ch, which is closed
// when the stream ends.
type stream struct {
	ch     chan sseEvent
	cancel context.CancelFunc
}

// openStream opens GET …/events and waits until the server has subscribed
// (its opening comment has arrived).
func (e *env) openStream(token, id string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.t.Context())
	e.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/api/v1/workspaces/"+id+"/events", nil)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	require.Equal(e.t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	require.True(e.t, sc.Scan())
	require.Equal(e.t, ": events of workspace "+id, sc.Text())
	s := &stream{ch: make(chan sseEvent, 64), cancel: cancel}
	go func() {
		defer close(s.ch)
		defer resp.Body.Close()
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					s.ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					ev.data = map[string]any{"undecodable": line}
				}
			}
		}
	}()
	return s
}

// next returns the next event, failing after a while.
func (s *stream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.ch:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// quiet checks that no event arrives for a moment.
func (s *stream) quiet(t *testing.T) {
	t.Helper()
	select {
	case ev, ok := <-s.ch:
		require.False(t, ok, "unexpected event %+v", ev)
	case <-time.After(100 * time.Millisecond):
	}
}

func (e *env) publish(ch ports.Change) {
	e.t.Helper()
	b, err := json.Marshal(ch)
	require.NoError(e.t, err)
	require.NoError(e.t, e.world.Bus.Publish(e.t.Context(), contracts.WorkspaceChannel(ch.WorkspaceID), string(b)))
}

func TestEventsFollowPublishedChanges(t *testing.T) {
	e := newEnv(t)
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	s := e.openStream(alice, id)

	// The coordinator claims PROVISIONING; the change is published.
	e.setRow(id, contracts.CompStateReconciler, contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(t0)})
	row := e.row(id)
	e.publish(ports.ChangeOf(&row, t0.Add(time.Second)))
	require.Equal(t, sseEvent{EventStateChanged, map[string]any{
		"workspace_id": id, "display_state": "PENDING", "operation": "PROVISIONING",
		"desired_state": "RUNNING", "deleted": false, "at": "2026-03-02T09:00:01Z",
	}}, s.next(t))

	// The same state again (an observed_at-only change, say) says nothing;
	// a malformed payload or another workspace's change is ignored.
	e.publish(ports.ChangeOf(&row, t0.Add(2*time.Second)))
	require.NoError(t, e.world.Bus.Publish(t.Context(), contracts.WorkspaceChannel(id), "{not json"))
	other := row
	other.ID = "00000000-0000-4000-8000-000000000000"
	other.Operation = contracts.OpNone
	e.publish(ports.ChangeOf(&other, t0))
	s.quiet(t)

	// A retryable failure is recorded: an error event, no state change.
	p, terminal := decide.FailurePatch(&row, contracts.CodeVolumeCreateFailed, "volume create failed", nil, t0.Add(3*time.Second))
	require.False(t, terminal)
	e.setRow(id, contracts.CompStateReconciler, p)
	row = e.row(id)
	e.publish(ports.ChangeOf(&row, t0.Add(3*time.Second)))
	require.Equal(t, sseEvent{EventError, map[string]any{
		"workspace_id": id, "error_message": "volume create failed", "error_count": 1.0, "at": "2026-03-02T09:00:03Z",
	}}, s.next(t))

	// Completion: STANDBY observed, operation NONE.
	e.setRow(id, contracts.CompHealthMonitor, contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})
	e.setRow(id, contracts.CompStateReconciler, decide.CompletePatch(&row))
	row = e.row(id)
	e.publish(ports.ChangeOf(&row, t0.Add(4*time.Second)))
	ev := s.next(t)
	require.Equal(t, EventStateChanged, ev.name)
	require.Equal(t, "STANDBY", ev.data["display_state"])
	require.Equal(t, "NONE", ev.data["operation"])

	// Deleted: the last event, then the stream ends.
	row.ObservedStatus = contracts.ObservedDeleted
	row.DeletedAt = t0
	e.publish(ports.ChangeOf(&row, t0.Add(5*time.Second)))
	ev = s.next(t)
	require.Equal(t, "DELETED", ev.data["display_state"])
	require.Equal(t, true, ev.data["deleted"])
	_, open := <-s.ch
	require.False(t, open, "the stream ends at DELETED")
}

func TestEventsHeartbeat(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Heartbeat = 20 * time.Millisecond })
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	s := e.openStream(alice, id)
	for range 2 {
		require.Equal(t, sseEvent{EventHeartbeat, map[string]any{"timestamp": "2026-03-02T09:00:00Z"}}, s.next(t))
	}
	// The client goes away: the server's stream ends and is counted closed.
	s.cancel()
	require.Eventually(t, func() bool { return testutil.ToFloat64(e.metrics.streams) == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestStreamsEndOnShutdown(t *testing.T) {
	done := make(chan struct{})
	closed := false
	e := newEnv(t, func(c *Config) { c.StreamsDone = done })
	t.Cleanup(func() {
		if !closed {
			close(done)
		}
	})
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	s := e.openStream(alice, id)
	// The handler counts the stream as it starts serving it, which may be
	// just after the client has its headers.
	require.Eventually(t, func() bool { return testutil.ToFloat64(e.metrics.streams) == 1 }, 5*time.Second, time.Millisecond)
	close(done)
	closed = true
	select {
	case _, open := <-s.ch:
		require.False(t, open)
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// The whole path: a PATCH through HTTP changes the store, the reference
// coordinator's EventListener republishes the notification, the stream
// turns it into events; and the coordinator's writes feed the operation
// metrics through the instrumented store.
func TestEventsFromTheReferenceCoordinator(t *testing.T) {
	e := newEnv(t)
	deps := e.world.Deps("coord")
	deps.IDs = wsfakes.NewIDs(99)
	deps.Store = e.metrics.InstrumentStore(deps.Store)
	coord := coordinator.New(deps, coordinator.Options{})
	step := func() {
		t.Helper()
		_, err := coord.Step(t.Context())
		require.NoError(t, err)
	}
	step()
	require.True(t, coord.IsLeader())

	id := e.create(alice, `{"name":"dev","image_ref":"img","desired_state":"PENDING"}`)
	step()
	s := e.openStream(alice, id)
	r := e.call(http.MethodPatch, "/api/v1/workspaces/"+id, alice, `{"desired_state":"RUNNING"}`)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	var seen []string
	for i := 0; i < 40 && !contains(seen, "RUNNING/NONE"); i++ {
		e.world.Clock.Advance(time.Second)
		step()
	drain:
		for {
			select {
			case ev := <-s.ch:
				require.Equal(t, EventStateChanged, ev.name)
				seen = append(seen, ev.data["display_state"].(string)+"/"+ev.data["operation"].(string))
			case <-time.After(20 * time.Millisecond):
				break drain
			}
		}
	}
	require.Equal(t, []string{"PENDING/NONE", "PENDING/PROVISIONING", "STANDBY/PROVISIONING", "STANDBY/NONE",
		"STANDBY/STARTING", "RUNNING/STARTING", "RUNNING/NONE"}, seen)

	for _, op := range []string{"PROVISIONING", "STARTING"} {
		require.Equal(t, 1.0, testutil.ToFloat64(e.metrics.started.WithLabelValues(op)), op)
		require.Equal(t, 1.0, testutil.ToFloat64(e.metrics.completed.WithLabelValues(op)), op)
	}
	require.Zero(t, testutil.ToFloat64(e.metrics.started.WithLabelValues("ARCHIVING")))
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// An event stream outlives the server's ReadTimeout (serve sets one):
// net/http clears the read deadline once the request is read, and the
// stream sets none of its own.
func TestEventsOutliveTheServersReadTimeout(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Heartbeat = 50 * time.Millisecond })
	srv := httptest.NewUnstartedServer(e.srv.Config.Handler)
	srv.Config.ReadTimeout = 150 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	e.srv = srv
	id := e.create(alice, `{"name":"dev","image_ref":"img"}`)
	s := e.openStream(alice, id)
	deadline := time.Now().Add(600 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.Equal(t, EventHeartbeat, s.next(t).name)
	}
}

// Event streams are bounded per user and in all (issue 23: 20,000 streams
// exhausted the server's file descriptors): beyond either bound the
// stream is refused with 429 and the API's JSON error, /healthz and other
// requests still answer, and a closed stream frees its slot.
func TestEventStreamsAreCapped(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxStreamsPerUser, c.MaxStreams = 2, 3 })
	a := e.create(alice, `{"name":"a","image_ref":"img:1"}`)
	b := e.create(bob, `{"name":"b","image_ref":"img:1"}`)
	first := e.openStream(alice, a)
	e.openStream(alice, a)
	r := e.call(http.MethodGet, "/api/v1/workspaces/"+a+"/events", alice, "")
	msg := r.errorOf(t, http.StatusTooManyRequests, CodeTooManyStreams)["message"]
	require.Contains(t, msg, "2 event streams open")
	require.Equal(t, "5", r.header.Get("Retry-After"))

	e.openStream(bob, b)
	r = e.call(http.MethodGet, "/api/v1/workspaces/"+b+"/events", bob, "")
	require.Contains(t, r.errorOf(t, http.StatusTooManyRequests, CodeTooManyStreams)["message"], "maximum of 3 event streams")

	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/healthz", "", "").status)
	require.Equal(t, http.StatusOK, e.call(http.MethodGet, "/api/v1/workspaces/"+b, bob, "").status)

	// Closing a stream frees its slot once the server has seen it go.
	first.cancel()
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(e.metrics.streams) == 2
	}, 10*time.Second, 5*time.Millisecond)
	e.openStream(bob, b)
}
