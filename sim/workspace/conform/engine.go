package conform

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// The engine's own record: the Docker events of the run's workspace
// containers (ws-{id}) and home volumes (ws-{id}-home), with the engine's
// times. An event says what took effect and when, not which client asked
// for it (the Docker API has no caller identity), so the events enter the
// history as calls of the engine itself (engineInstance), never of a
// coordinator instance: the checkers that need no caller read them (C8's
// order of archive_key and the volume's deletion), the ones that need the
// caller (C10's fencing, the lease re-check) stay not judgeable.
const engineInstance = "docker-engine"

var (
	containerName = regexp.MustCompile(`^/?ws-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)
	volumeName    = regexp.MustCompile(`^ws-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-home$`)
)

// engineEvent is one Docker event on a workspace's container or volume.
type engineEvent struct {
	wall      time.Time
	workspace string
	typ       events.Type
	action    events.Action
	name      string
}

// ownWindow is one of the run's own commands on the engine (a fault): the
// events of the actions it causes on name while it ran are the run's,
// recorded as its fault. Only those actions: a coordinator acting on the
// same object at the same moment (removing the container a docker kill
// struck) still has its events recorded.
type ownWindow struct {
	name     string
	actions  []events.Action
	from, to time.Time
}

// engineWatch follows the engine's events for the whole run.
type engineWatch struct {
	cli  *client.Client
	sync string // the volume whose creation and removal mark a sync point

	mu     sync.Mutex
	events []engineEvent
	own    []ownWindow
	synced []chan struct{}
	err    error
	done   chan struct{}
	cancel context.CancelFunc
	// offset is the engine's clock minus PostgreSQL's, measured at the
	// start, and within how much it is known.
	offset, within time.Duration
	clockErr       error
}

// watchEngine subscribes to the engine's container and volume events;
// the subscription is live when it returns.
func (r *run) watchEngine(ctx context.Context) (*engineWatch, error) {
	cli, err := client.New(client.FromEnv, client.WithHost(dockerHost()))
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("ping docker: %w", err)
	}
	ew := &engineWatch{cli: cli, sync: "conform-sync-" + r.managed, done: make(chan struct{})}
	ew.offset, ew.within, ew.clockErr = r.engineOffset(ctx, cli)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ew.cancel = cancel
	f := make(client.Filters).Add("type", string(events.ContainerEventType), string(events.VolumeEventType)).
		Add("event", string(events.ActionCreate), string(events.ActionStart), string(events.ActionDie), string(events.ActionDestroy))
	res := cli.Events(wctx, client.EventsListOptions{Filters: f})
	go ew.follow(wctx, res)
	return ew, nil
}

// follow records the events until the watch is closed or the stream
// breaks (then the run's engine evidence is incomplete, and said so).
func (ew *engineWatch) follow(ctx context.Context, res client.EventsResult) {
	defer close(ew.done)
	for {
		select {
		case m := <-res.Messages:
			ew.record(m)
		case err := <-res.Err:
			if ctx.Err() == nil {
				if err == nil {
					err = errors.New("the stream ended")
				}
				ew.mu.Lock()
				ew.err = err
				ew.mu.Unlock()
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

func (ew *engineWatch) record(m events.Message) {
	name := m.Actor.Attributes["name"]
	if m.Type == events.VolumeEventType {
		name = m.Actor.ID
	}
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if name == ew.sync && m.Action == events.ActionDestroy {
		for _, ch := range ew.synced {
			close(ch)
		}
		ew.synced = nil
		return
	}
	var id []string
	switch m.Type {
	case events.ContainerEventType:
		id = containerName.FindStringSubmatch(name)
	case events.VolumeEventType:
		id = volumeName.FindStringSubmatch(name)
	}
	if id == nil {
		return
	}
	ew.events = append(ew.events, engineEvent{wall: time.Unix(0, m.TimeNano), workspace: id[1], typ: m.Type, action: m.Action, name: name})
}

// syncEvents returns once every event the engine emitted before it was called
// has been recorded: it creates and removes a volume of its own and waits
// for its removal's event (the engine delivers a subscription's events in
// order).
func (ew *engineWatch) syncEvents(ctx context.Context) error {
	ch := make(chan struct{})
	ew.mu.Lock()
	ew.synced = append(ew.synced, ch)
	ew.mu.Unlock()
	if _, err := ew.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: ew.sync}); err != nil {
		return fmt.Errorf("create %s: %w", ew.sync, err)
	}
	if _, err := ew.cli.VolumeRemove(ctx, ew.sync, client.VolumeRemoveOptions{Force: true}); err != nil {
		return fmt.Errorf("remove %s: %w", ew.sync, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	select {
	case <-ch:
		return nil
	case <-ew.done:
		return errors.New("the engine's event stream ended")
	case <-wctx.Done():
		return fmt.Errorf("the removal of %s never came through the engine's event stream: %w", ew.sync, wctx.Err())
	}
}

// mine marks the run's own command on the engine object name, from its
// start to its end, and the actions it causes there.
func (ew *engineWatch) mine(name string, actions []events.Action, from, to time.Time) {
	if ew == nil {
		return
	}
	ew.mu.Lock()
	ew.own = append(ew.own, ownWindow{name: name, actions: actions, from: from, to: to})
	ew.mu.Unlock()
}

func (ew *engineWatch) close() {
	ew.cancel()
	<-ew.done
	_ = ew.cli.Close()
}

// clockTolerance is how far apart the engine's clock and PostgreSQL's may
// be measured, beyond the measurement's own uncertainty, for the order of
// an engine event and an audit row to be read from their times.
const clockTolerance = 2 * time.Millisecond

// sameClock reports whether the engine's events and the audit trail's
// times can be ordered against each other, and why not.
func (ew *engineWatch) sameClock() (bool, string) {
	switch {
	case ew.clockErr != nil:
		return false, "the engine's clock could not be compared with PostgreSQL's: " + ew.clockErr.Error()
	case ew.offset.Abs() > ew.within+clockTolerance:
		return false, fmt.Sprintf("the engine's clock and PostgreSQL's differ by %s (±%s): an engine event and an audit row cannot be ordered by their times", ew.offset, ew.within)
	}
	return true, ""
}

// engineOffset measures the engine's clock (its /info SystemTime) against
// PostgreSQL's (clock_timestamp()), each against this process's clock
// around the call: the difference, and the sum of the halves of the two
// round trips it is known within.
func (r *run) engineOffset(ctx context.Context, cli *client.Client) (offset, within time.Duration, err error) {
	t0 := time.Now()
	info, err := cli.Info(ctx, client.InfoOptions{})
	t1 := time.Now()
	if err != nil {
		return 0, 0, err
	}
	engine, err := time.Parse(time.RFC3339Nano, info.Info.SystemTime)
	if err != nil {
		return 0, 0, fmt.Errorf("the engine's SystemTime %q: %w", info.Info.SystemTime, err)
	}
	var pg time.Time
	var t2, t3 time.Time
	err = r.admin(ctx, func(q querier) error {
		t2 = time.Now()
		err := q.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&pg)
		t3 = time.Now()
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	engineOff := engine.Sub(t0.Add(t1.Sub(t0) / 2))
	pgOff := pg.Sub(t2.Add(t3.Sub(t2) / 2))
	return engineOff - pgOff, t1.Sub(t0)/2 + t3.Sub(t2)/2, nil
}

// history turns the recorded events of the run's workspaces (ids) into
// history events of the engine, leaving out the run's own commands (its
// faults record them): a container's start and removal and a volume's
// creation and removal as the calls the checkers know (instances.Start,
// instances.Delete, storage.Provision, storage.DeleteVolume) made by the
// engine, a container's creation and end as notes.
func (ew *engineWatch) history(ids map[string]bool) (out []stamped, dropped int) {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	for _, ev := range ew.events {
		if !ids[ev.workspace] {
			continue
		}
		if ew.ownsLocked(ev) {
			dropped++
			continue
		}
		e := history.Event{Kind: history.KindCall, Instance: engineInstance, Workspace: ev.workspace,
			Args: "docker event: " + string(ev.typ) + " " + string(ev.action) + " " + ev.name}
		switch {
		case ev.typ == events.ContainerEventType && ev.action == events.ActionStart:
			e.Method = wsjudge.MStart
		case ev.typ == events.ContainerEventType && ev.action == events.ActionDestroy:
			e.Method = wsjudge.MDelete
		case ev.typ == events.VolumeEventType && ev.action == events.ActionCreate:
			e.Method = wsjudge.MProvision
		case ev.typ == events.VolumeEventType && ev.action == events.ActionDestroy:
			e.Method = wsjudge.MDeleteVolume
		default:
			e.Kind, e.Method = history.KindNote, "docker."+string(ev.typ)+"."+string(ev.action)
		}
		out = append(out, stamped{wall: ev.wall, e: e})
	}
	return out, dropped
}

func (ew *engineWatch) ownsLocked(ev engineEvent) bool {
	for _, w := range ew.own {
		if w.name == ev.name && slices.Contains(w.actions, ev.action) && !ev.wall.Before(w.from) && !ev.wall.After(w.to) {
			return true
		}
	}
	return false
}

// streamErr is what broke the event stream during the run, if anything.
func (ew *engineWatch) streamErr() error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.err
}
