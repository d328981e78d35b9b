package sim

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
)

// action is one step of a simulated user's life with one workspace.
type action uint8

const (
	// actCreate: POST the workspace (retried on 429 and other errors).
	actCreate action = iota
	// actWake: the user wants to work: make the workspace run, then connect.
	actWake
	// actWrite: write a file into the running workspace's volume.
	actWrite
	// actDisconnect: the work session ends.
	actDisconnect
	// actIdleChange: an explicit desired STANDBY or PENDING while idle.
	actIdleChange
	// actDelete: DELETE the workspace.
	actDelete
)

// proxyInstance names the proxy (WebSocket activity) in the history.
const proxyInstance = "proxy"

var actionNames = [...]string{"create", "wake", "write", "disconnect", "idle-change", "delete"}

func (a action) String() string { return actionNames[a] }

// Workload timing. Durations are drawn uniformly between the bounds.
const (
	pollMin, pollMax         = 5 * time.Second, 20 * time.Second
	retryMin, retryMax       = time.Minute, 5 * time.Minute
	sessionMin, sessionMax   = 20 * time.Minute, 3 * time.Hour
	writeMin, writeMax       = 5 * time.Minute, 30 * time.Minute
	idleMin, idleMax         = 30 * time.Minute, 10 * time.Hour
	wakeGiveUp               = 30 * time.Minute
	standbyTTLMin, ttlMaxSby = 300, 1800
	archiveTTLMin, ttlMaxArc = 3600, 12 * 3600
	createTriesBeforeStandby = 3
	imageRef                 = "registry.local/workspace:1"
)

// userState is where a simulated user is with one workspace.
type userState uint8

const (
	stCreating userState = iota
	stIdle
	stWaking
	stWorking
	stGone
)

// userWorkspace is one workspace as its owner sees and uses it.
type userWorkspace struct {
	idx        int
	owner      string
	name       string
	id         string
	rng        *rand.Rand
	standbyTTL int
	archiveTTL int
	state      userState
	// session counts work sessions; stale write events of an earlier
	// session carry an older number and are ignored.
	session   int
	wakeSince time.Time
	tries     int
	writes    int
	// deleted: the user's DELETE was accepted.
	deleted bool
}

// workload is the ordinary user workload. Each workspace draws from its own
// random stream, so users do not perturb one another.
type workload struct {
	s *Sim
	// proxy is the bus as the proxy in front of the workspaces uses it
	// (attributed to "proxy" in the history, and subject to faults).
	proxy ports.Bus
	ws    []*userWorkspace
	byI   map[string]*userWorkspace
	// model is the durability model: per workspace id, the files the user
	// has written (path → bytes, last write wins).
	model map[string]map[string][]byte
}

func newWorkload(s *Sim) *workload {
	w := &workload{s: s, proxy: s.world.Deps(proxyInstance).Bus, byI: map[string]*userWorkspace{}, model: map[string]map[string][]byte{}}
	if s.cfg.Workload.Disabled {
		return w
	}
	seed := SubSeed(s.cfg.Seed, streamWorkload)
	users := s.cfg.Workload.Users
	for i := 0; i < s.cfg.Workspaces; i++ {
		u := &userWorkspace{
			idx:   i,
			owner: "user-" + strconv.Itoa(i%users+1),
			name:  "ws-" + strconv.Itoa(i+1),
			rng:   newRand(SubSeed(seed, uint64(i))),
		}
		u.standbyTTL = standbyTTLMin + u.rng.IntN(ttlMaxSby-standbyTTLMin+1)
		u.archiveTTL = archiveTTLMin + u.rng.IntN(ttlMaxArc-archiveTTLMin+1)
		w.ws = append(w.ws, u)
		w.at(u, uniform(u.rng, 0, s.cfg.Workload.CreateWindow), actCreate)
	}
	return w
}

// uniform draws a duration in [lo, hi).
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

func (w *workload) at(u *userWorkspace, d time.Duration, a action) {
	w.s.q.push(event{at: w.s.clock.Now().Add(d).UnixNano(), kind: evUser, ws: u, act: a, gen: u.session})
}

// note records a user action outside the API.
func (w *workload) note(u *userWorkspace, method, args, result, errText string) {
	w.s.record(history.Event{Kind: history.KindUser, Instance: u.owner, Workspace: u.id,
		Method: method, Args: args, Result: result, Err: errText})
}

func (w *workload) act(u *userWorkspace, a action, session int) {
	if u.state == stGone {
		return
	}
	switch a {
	case actCreate:
		w.create(u)
	case actWake:
		w.wake(u)
	case actWrite:
		if u.state == stWorking && session == u.session {
			w.write(u)
		}
	case actDisconnect:
		if u.state == stWorking && session == u.session {
			w.disconnect(u)
			w.at(u, uniform(u.rng, idleMin, idleMax), actWake)
			w.maybeIdleChange(u)
		}
	case actIdleChange:
		if u.state == stIdle {
			w.idleChange(u)
		}
	case actDelete:
		w.delete(u)
	}
}

func apiStatus(err error) int {
	var ae *contracts.APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

func (w *workload) create(u *userWorkspace) {
	req := ports.CreateRequest{Name: u.name, ImageRef: imageRef, StandbyTTLSeconds: &u.standbyTTL, ArchiveTTLSeconds: &u.archiveTTL}
	if u.tries >= createTriesBeforeStandby {
		standby := string(contracts.DesiredStandby)
		req.DesiredState = &standby
	}
	ws, err := w.s.api.Create(w.s.ctx, u.owner, req)
	if err != nil {
		u.tries++
		w.at(u, uniform(u.rng, retryMin, retryMax), actCreate)
		return
	}
	u.id, u.tries, u.state = ws.ID, 0, stWaking
	u.wakeSince = w.s.clock.Now()
	w.byI[u.id] = u
	w.model[u.id] = map[string][]byte{}
	w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
	if rate := w.s.cfg.Workload.DeletesPerDay; rate > 0 {
		// Exponential lifetime: a fraction rate of the workspaces is
		// deleted per simulated day.
		days := -math.Log(1-u.rng.Float64()) / rate
		if days < 3650 {
			w.at(u, time.Duration(days*24*float64(time.Hour)), actDelete)
		}
	}
}

// wake drives the workspace to RUNNING and connects once it runs; it polls
// while the coordinator works and gives the session up after wakeGiveUp.
func (w *workload) wake(u *userWorkspace) {
	switch u.state {
	case stWorking, stCreating:
		return
	case stIdle:
		u.state, u.wakeSince = stWaking, w.s.clock.Now()
	}
	ws, err := w.s.api.Get(w.s.ctx, u.owner, u.id)
	if err != nil {
		if apiStatus(err) == 404 {
			u.state = stGone
			return
		}
		w.at(u, uniform(u.rng, retryMin, retryMax), actWake)
		return
	}
	switch {
	case ws.ObservedStatus == contracts.ObservedRunning && ws.HealthStatus == contracts.HealthOK:
		w.connect(u)
		return
	case ws.HealthStatus == contracts.HealthError || ws.Terminal():
		w.giveUp(u, "workspace in ERROR")
		return
	case w.s.clock.Now().Sub(u.wakeSince) > wakeGiveUp:
		w.giveUp(u, "not running after "+wakeGiveUp.String())
		return
	}
	if ws.DesiredState == contracts.DesiredRunning {
		w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
		return
	}
	if ws.ObservedStatus == contracts.ObservedStandby && ws.Operation == contracts.OpNone {
		// A request through the proxy auto-wakes a STANDBY workspace.
		err = w.s.api.Wake(w.s.ctx, u.id)
	} else {
		running := string(contracts.DesiredRunning)
		_, err = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &running})
	}
	if err != nil {
		// 409 (an operation in progress) and 429 (limits) are normal:
		// try again a little later.
		w.at(u, uniform(u.rng, retryMin, retryMax), actWake)
		return
	}
	w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
}

func (w *workload) giveUp(u *userWorkspace, why string) {
	w.note(u, "user.give-up", why, "", "")
	u.state = stIdle
	w.at(u, uniform(u.rng, idleMin, idleMax), actWake)
}

// connect opens the user's WebSocket through the proxy: INCR ws_conn, DEL
// idle_timer.
func (w *workload) connect(u *userWorkspace) {
	ctx, bus := w.s.ctx, w.proxy
	n, err := bus.Incr(ctx, contracts.ConnKey(u.id))
	if err == nil {
		err = bus.Del(ctx, contracts.IdleTimerKey(u.id))
	}
	if err != nil {
		w.note(u, "user.connect", "", "", err.Error())
		w.at(u, uniform(u.rng, retryMin, retryMax), actWake)
		return
	}
	w.note(u, "user.connect", "", "connections="+strconv.FormatInt(n, 10), "")
	u.session++
	u.state = stWorking
	w.at(u, uniform(u.rng, writeMin, writeMax), actWrite)
	w.at(u, uniform(u.rng, sessionMin, sessionMax), actDisconnect)
}

// disconnect closes the WebSocket: DECR ws_conn and, at 0, SETEX
// idle_timer for the standby TTL.
func (w *workload) disconnect(u *userWorkspace) {
	ctx, bus := w.s.ctx, w.proxy
	u.state = stIdle
	n, err := bus.Decr(ctx, contracts.ConnKey(u.id))
	if err == nil && n <= 0 {
		err = bus.Set(ctx, contracts.IdleTimerKey(u.id), "1", time.Duration(u.standbyTTL)*time.Second)
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	w.note(u, "user.disconnect", "", "connections="+strconv.FormatInt(n, 10), errText)
}

var writePaths = [...]string{"notes.md", "src/main.go", "src/util.go", "data/results.csv", ".bashrc"}

// write puts a file into the volume, only while the container really runs,
// and records it in the durability model.
func (w *workload) write(u *userWorkspace) {
	defer w.at(u, uniform(u.rng, writeMin, writeMax), actWrite)
	if !w.s.containerRunning(u.id) {
		w.note(u, "user.write", "", "skipped: container not running", "")
		return
	}
	u.writes++
	var path string
	if u.rng.IntN(4) == 0 {
		path = "scratch/" + strconv.Itoa(u.writes) + ".txt"
	} else {
		path = writePaths[u.rng.IntN(len(writePaths))]
	}
	data := w.content(u)
	if err := w.s.world.Storage.WriteFile(u.id, path, data); err != nil {
		w.note(u, "user.write", path, "", err.Error())
		return
	}
	w.model[u.id][path] = data
	w.note(u, "user.write", path, strconv.Itoa(len(data))+" bytes", "")
}

// content is a file's new contents: a header naming the write, then 32–512
// random printable bytes.
func (w *workload) content(u *userWorkspace) []byte {
	head := u.name + " write " + strconv.Itoa(u.writes) + " at " + history.Offset(w.s.Elapsed()) + "\n"
	n := 32 + u.rng.IntN(481)
	b := make([]byte, 0, len(head)+n)
	b = append(b, head...)
	for i := 0; i < n; i++ {
		b = append(b, byte(' '+u.rng.IntN(95)))
	}
	return b
}

// maybeIdleChange sometimes schedules an explicit stop (desired STANDBY, 7%)
// or archive (desired PENDING, 3%) shortly after a session ends.
func (w *workload) maybeIdleChange(u *userWorkspace) {
	if u.rng.IntN(100) < 10 {
		w.at(u, uniform(u.rng, time.Minute, 30*time.Minute), actIdleChange)
	}
}

func (w *workload) idleChange(u *userWorkspace) {
	to := string(contracts.DesiredStandby)
	if u.rng.IntN(10) < 3 {
		to = string(contracts.DesiredPending)
	}
	// A 409 (an operation in progress) simply leaves things as they are.
	_, _ = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &to})
}

func (w *workload) delete(u *userWorkspace) {
	if u.state == stCreating {
		return
	}
	if u.state == stWorking {
		w.disconnect(u)
	}
	u.state = stIdle
	err := w.s.api.Delete(w.s.ctx, u.owner, u.id)
	switch {
	case err == nil, apiStatus(err) == 404:
		u.state, u.deleted = stGone, true
	default:
		// 409 while an operation runs: the user tries again.
		w.at(u, uniform(u.rng, retryMin, retryMax), actDelete)
	}
}

// Model is the durability model of workspace id: every file its user wrote
// (path → bytes, last write wins), a copy; nil for an unknown workspace.
func (s *Sim) Model(id string) map[string][]byte {
	m, ok := s.work.model[id]
	if !ok {
		return nil
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// RecordWrite writes a file into workspace id's volume as its user would
// and, when it lands, records it in the durability model (scenario tests
// use it with the workload disabled).
func (s *Sim) RecordWrite(id, path string, data []byte) error {
	if err := s.world.Storage.WriteFile(id, path, data); err != nil {
		return err
	}
	m := s.work.model[id]
	if m == nil {
		m = map[string][]byte{}
		s.work.model[id] = m
	}
	m[path] = append([]byte(nil), data...)
	s.record(history.Event{Kind: history.KindUser, Workspace: id, Method: "user.write", Args: path,
		Result: strconv.Itoa(len(data)) + " bytes"})
	return nil
}

// Deleted reports whether the workload has deleted workspace id (its data
// is then no longer owed to the user).
func (s *Sim) Deleted(id string) bool {
	u, ok := s.work.byI[id]
	return ok && u.deleted
}
