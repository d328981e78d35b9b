package workspace

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
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
	// actRecover: an administrator recovers the workspace from ERROR (the
	// user asked for help after giving up on it).
	actRecover
	// actRecoverAgain: the administrator, unsure the recovery took,
	// recovers the workspace again once it no longer shows ERROR (SPEC
	// 4.3: 409 unless its health is ERROR).
	actRecoverAgain
	// actEdit: the owner edits what is theirs to edit at any time (SPEC
	// 4.3: name, description, memo, a TTL), an operation running or not.
	actEdit
	// actSecondThought: moments after asking for RUNNING, the owner asks
	// again (a double click: a no-op) or changes their mind (a lower
	// desired state, refused with 409 while the operation runs).
	actSecondThought
	// actReplace: the owner of a deleted workspace creates a new one.
	actReplace
)

// proxyInstance names the proxy (WebSocket activity) in the history.
const proxyInstance = "proxy"

// adminUser is the administrator who recovers workspaces.
const adminUser = "admin"

var actionNames = [...]string{"create", "wake", "write", "disconnect", "idle-change", "delete", "recover", "recover-again",
	"edit", "second-thought", "replace"}

func (a action) String() string { return actionNames[a] }

// Workload timing. Durations are drawn uniformly between the bounds.
const (
	pollMin, pollMax         = 5 * time.Second, 20 * time.Second
	retryMin, retryMax       = time.Minute, 5 * time.Minute
	sessionMin, sessionMax   = 20 * time.Minute, 3 * time.Hour
	writeMin, writeMax       = 5 * time.Minute, 30 * time.Minute
	idleMin, idleMax         = 30 * time.Minute, 10 * time.Hour
	recoverMin, recoverMax   = 20 * time.Minute, 4 * time.Hour
	recoverPercent           = 70
	recoveredPatience        = 2 * time.Minute
	recoverAgainAfter        = 10 * time.Minute
	wakeGiveUp               = 30 * time.Minute
	standbyTTLMin, ttlMaxSby = 300, 1800
	archiveTTLMin, ttlMaxArc = 3600, 12 * 3600
	createTriesBeforeStandby = 3
	imageRef                 = "registry.local/workspace:1"
)

// The workload's situations of issue 22 (a blind audit found that bugs of
// SPEC C3, C4, C6, 4.2.3 and 4.3 never changed an implementation's
// behaviour under the old workload): deletes that come with a desired
// change and meet the operation it started, edits at any time, second
// thoughts during an operation, requests of a workspace in ERROR, a
// desired change right after a recovery, and a deleted workspace
// replaced. A replay file of version 1 runs the workload without them
// (Workload.Legacy).
const (
	defaultDeletesPerDay   = 0.2
	legacyDeletesPerDay    = 0.02
	editMin, editMax       = time.Hour, 16 * time.Hour
	editSoonPercent        = 15 // an edit moments after asking for RUNNING
	secondThoughtPercent   = 25 // after asking for RUNNING
	stagedDeletePercent    = 40 // a delete preceded by desired PENDING
	errorRequestPercent    = 50 // a desired change tried while in ERROR
	errorDeletePercent     = 15 // a workspace in ERROR deleted instead of recovered
	changeAfterRecoverPct  = 35 // a desired change at once after a recovery
	replaceMin, replaceMax = 10 * time.Minute, 3 * time.Hour
	soonMin, soonMax       = time.Second, 20 * time.Second
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
	// scripted: driven by plan actions, not by the ordinary workload.
	scripted bool
	// recoverPending: an administrator's recovery is scheduled.
	recoverPending bool
	// staleReported: the history sequence of the container stop already
	// reported as observed-but-still-RUNNING (reported once).
	staleReported int64
	// recoveredAt: when an administrator last recovered it (the user, told
	// so, comes back at once and waits a little for it to leave ERROR).
	recoveredAt time.Time
	// staged: the owner asked for PENDING before deleting; the DELETE
	// follows moments later.
	staged bool
	// edits counts the owner's edits (names stay unique).
	edits int
}

// workload is the ordinary user workload and the scripted users of a plan.
// Each workspace draws from its own random stream, so users do not perturb
// one another.
type workload struct {
	s *Sim
	// proxy is the bus as the proxy in front of the workspaces uses it
	// (attributed to "proxy" in the history, and subject to faults).
	proxy ports.Bus
	ws    []*userWorkspace
	byI   map[string]*userWorkspace
	// scripted are the workspaces plan actions created, in order.
	scripted []*userWorkspace
	// model is the durability model: per workspace id, the files the user
	// has written (path → bytes, last write wins), adjusted when a fault
	// or an acknowledged loss destroys data.
	model map[string]map[string][]byte
	// quiet: the quiet phase has begun; users act no more.
	quiet bool
	// seed is the workload's stream; legacy runs the workload of replay
	// files of version 1 (Workload.Legacy).
	seed   uint64
	legacy bool
}

func newWorkload(s *Sim) *workload {
	w := &workload{s: s, proxy: s.world.Deps(proxyInstance).Bus, byI: map[string]*userWorkspace{}, model: map[string]map[string][]byte{}}
	if s.cfg.Workload.Disabled {
		return w
	}
	w.seed = SubSeed(s.cfg.Seed, streamWorkload)
	w.legacy = s.cfg.Workload.Legacy
	users := s.cfg.Workload.Users
	for i := 0; i < s.cfg.Workspaces; i++ {
		u := w.newUser("user-" + strconv.Itoa(i%users+1))
		w.at(u, uniform(u.rng, 0, s.cfg.Workload.CreateWindow), actCreate)
	}
	return w
}

// newUser adds the next workspace of the workload, owned by owner, with
// its own stream.
func (w *workload) newUser(owner string) *userWorkspace {
	i := len(w.ws)
	u := &userWorkspace{
		idx:   i,
		owner: owner,
		name:  "ws-" + strconv.Itoa(i+1),
		rng:   newRand(SubSeed(w.seed, uint64(i))),
	}
	u.standbyTTL = standbyTTLMin + u.rng.IntN(ttlMaxSby-standbyTTLMin+1)
	u.archiveTTL = archiveTTLMin + u.rng.IntN(ttlMaxArc-archiveTTLMin+1)
	w.ws = append(w.ws, u)
	return u
}

// chance draws whether something of percent happens to u (never under the
// legacy workload, which draws nothing for it).
func (w *workload) chance(u *userWorkspace, percent int) bool {
	return !w.legacy && u.rng.IntN(100) < percent
}

// uniform draws a duration in [lo, hi).
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

func (w *workload) at(u *userWorkspace, d time.Duration, a action) {
	w.s.loop.Q.Push(w.s.clock.Now().Add(d).UnixNano(), false, event{kind: evUser, ws: u, act: a, gen: u.session})
}

// note records a user action outside the API.
func (w *workload) note(u *userWorkspace, method, args, result, errText string) {
	w.s.record(history.Event{Kind: history.KindUser, Instance: u.owner, Workspace: u.id,
		Method: method, Args: args, Result: result, Err: errText})
}

func (w *workload) act(u *userWorkspace, a action, session int) {
	if u.state == stGone && a != actRecover && a != actRecoverAgain && a != actReplace || w.quiet {
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
			w.at(u, uniform(u.rng, writeMin, writeMax), actWrite)
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
	case actRecover:
		u.recoverPending = false
		if !u.deleted {
			w.recover(u)
		}
	case actRecoverAgain:
		if !u.deleted {
			// Answered 409 unless the workspace is in ERROR again.
			_ = w.s.api.Recover(w.s.ctx, adminUser, u.id)
		}
	case actEdit:
		if !u.deleted && u.state != stCreating {
			w.edit(u)
			w.at(u, uniform(u.rng, editMin, editMax), actEdit)
		}
	case actSecondThought:
		if !u.deleted && u.state == stWaking {
			w.secondThought(u)
		}
	case actReplace:
		w.replace(u)
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
	w.created(u, ws.ID)
	u.tries, u.state = 0, stWaking
	u.wakeSince = w.s.clock.Now()
	w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
	if !w.legacy {
		w.at(u, uniform(u.rng, editMin, editMax), actEdit)
	}
	if rate := w.s.cfg.Workload.DeletesPerDay; rate > 0 {
		// Exponential lifetime: a fraction rate of the workspaces is
		// deleted per simulated day.
		days := -math.Log(1-u.rng.Float64()) / rate
		if days < 3650 {
			w.at(u, time.Duration(days*24*float64(time.Hour)), actDelete)
		}
	}
}

// created registers the new workspace id of u.
func (w *workload) created(u *userWorkspace, id string) {
	u.id = id
	w.byI[id] = u
	w.model[id] = map[string][]byte{}
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
		if w.connect(u) {
			w.at(u, uniform(u.rng, writeMin, writeMax), actWrite)
			w.at(u, uniform(u.rng, sessionMin, sessionMax), actDisconnect)
			return
		}
	case ws.HealthStatus == contracts.HealthError || ws.Terminal():
		if !u.recoveredAt.IsZero() && w.s.clock.Now().Sub(u.recoveredAt) < recoveredPatience {
			// Just recovered: the HealthMonitor has yet to see it.
			w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
			return
		}
		if w.chance(u, errorRequestPercent) {
			// The owner tries anyway: SPEC 4.3 refuses a desired
			// change while error_info is terminal (409).
			_, _ = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: otherLevel(ws.DesiredState)})
		}
		if w.chance(u, errorDeletePercent) {
			// The owner starts over: DELETE is accepted in ERROR
			// (4.3), and DELETING is the one operation claimed on it
			// (C11).
			w.note(u, "user.give-up", "workspace in ERROR: deleted", "", "")
			if w.deleteNow(u) {
				return
			}
		}
		w.giveUp(u, "workspace in ERROR")
		w.askRecovery(u)
		return
	}
	if w.s.clock.Now().Sub(u.wakeSince) > wakeGiveUp {
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
		// The user's request reaches the proxy first, which wakes only
		// a STANDBY workspace (SPEC 4.4: an ARCHIVED or PENDING one
		// gets a page saying a restore or a start is needed); the
		// user then asks the API.
		_ = w.s.api.Wake(w.s.ctx, u.id)
		running := string(contracts.DesiredRunning)
		_, err = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &running})
	}
	if err != nil {
		// 409 (an operation in progress) and 429 (limits) are normal:
		// try again a little later.
		w.at(u, uniform(u.rng, retryMin, retryMax), actWake)
		return
	}
	w.s.faults.woken(u.id, ws)
	w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
	// Moments later, while the operation the request started runs: a
	// second thought, an edit.
	if w.chance(u, secondThoughtPercent) {
		w.at(u, uniform(u.rng, soonMin, soonMax), actSecondThought)
	}
	if w.chance(u, editSoonPercent) {
		w.at(u, uniform(u.rng, soonMin, soonMax), actEdit)
	}
}

// otherLevel is a desired state other than d: what a user changing their
// mind asks for.
func otherLevel(d contracts.DesiredState) *string {
	to := string(contracts.DesiredStandby)
	if d != contracts.DesiredRunning {
		to = string(contracts.DesiredRunning)
	}
	return &to
}

// secondThought: the owner who just asked for RUNNING asks again (a
// double click: SPEC 4.3's no-op, even while an operation runs) or asks
// for a lower state after all (409 while the operation runs; accepted
// otherwise, and then the next poll asks for RUNNING again).
func (w *workload) secondThought(u *userWorkspace) {
	to := string(contracts.DesiredRunning)
	switch u.rng.IntN(3) {
	case 1:
		to = string(contracts.DesiredStandby)
	case 2:
		to = string(contracts.DesiredPending)
	}
	_, _ = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &to})
}

// edit changes one of the fields SPEC 4.3 lets an owner edit while an
// operation runs: name, description, memo, or a TTL.
func (w *workload) edit(u *userWorkspace) {
	u.edits++
	var req ports.PatchRequest
	switch u.rng.IntN(5) {
	case 0:
		name := u.name + "-" + strconv.Itoa(u.edits)
		req.Name = &name
	case 1:
		d := "edited " + strconv.Itoa(u.edits) + " at " + history.Offset(w.s.Elapsed())
		req.Description = &d
	case 2:
		m := "memo " + strconv.Itoa(u.edits)
		req.Memo = &m
	case 3:
		ttl := standbyTTLMin + u.rng.IntN(ttlMaxSby-standbyTTLMin+1)
		req.StandbyTTLSeconds = &ttl
	default:
		ttl := archiveTTLMin + u.rng.IntN(ttlMaxArc-archiveTTLMin+1)
		req.ArchiveTTLSeconds = &ttl
	}
	ws, err := w.s.api.Patch(w.s.ctx, u.owner, u.id, req)
	if err != nil {
		return
	}
	u.standbyTTL, u.archiveTTL = ws.StandbyTTLSeconds, ws.ArchiveTTLSeconds
}

// replace has the owner of a deleted workspace create a new one some time
// later, so that deletes do not thin the fleet out.
func (w *workload) replace(u *userWorkspace) {
	n := w.newUser(u.owner)
	w.at(n, 0, actCreate)
}

func (w *workload) giveUp(u *userWorkspace, why string) {
	w.note(u, "user.give-up", why, "", "")
	u.state = stIdle
	w.at(u, uniform(u.rng, idleMin, idleMax), actWake)
}

// askRecovery has an administrator recover u from ERROR some time later
// (most users ask for help).
func (w *workload) askRecovery(u *userWorkspace) {
	if u.recoverPending || u.rng.IntN(100) >= recoverPercent {
		return
	}
	u.recoverPending = true
	w.at(u, uniform(u.rng, recoverMin, recoverMax), actRecover)
}

// recover is the administrator's recovery. Recovering a workspace whose
// data was lost (DataLost) acknowledges the loss: from then on the user is
// owed only what its volume holds.
func (w *workload) recover(u *userWorkspace) {
	row, err := w.s.world.Store.Get(w.s.ctx, u.id)
	if err != nil {
		return
	}
	if err := w.s.api.Recover(w.s.ctx, adminUser, u.id); err != nil {
		return
	}
	u.recoveredAt = w.s.clock.Now()
	w.at(u, recoverAgainAfter, actRecoverAgain)
	if !u.scripted && w.chance(u, changeAfterRecoverPct) {
		// The owner, told, changes the desired state at once, before
		// the HealthMonitor's next pass: SPEC 4.3 accepts it as soon
		// as the reset commits (ERROR is judged by error_info), though
		// health_status may still read ERROR.
		if cur, err := w.s.world.Store.Get(w.s.ctx, u.id); err == nil {
			_, _ = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: otherLevel(cur.DesiredState)})
		}
	}
	if !u.scripted && (u.state == stIdle || u.state == stWaking) {
		// The user, told, comes back to work at once.
		u.state, u.wakeSince = stWaking, u.recoveredAt
		w.at(u, uniform(u.rng, pollMin, pollMax), actWake)
	}
	if row.ErrorInfo != nil && row.ErrorInfo.Reason == contracts.ReasonDataLost {
		files, _ := w.s.world.Storage.Files(u.id)
		if files == nil {
			files = map[string][]byte{}
		}
		w.model[u.id] = files
		w.note(u, "user.data-loss-acknowledged", string(row.ErrorInfo.Reason), strconv.Itoa(len(files))+" files kept", "")
	}
}

// connect opens the user's WebSocket through the proxy to a workspace the
// API shows RUNNING and healthy: INCR ws_conn, DEL idle_timer, then the
// user checks their data (a user.verify event). A container that does not
// really run refuses the connection; if the HealthMonitor has observed it
// stopped since and the workspace still shows RUNNING, the user's data is
// out of reach behind a false observation, and the check fails. A running
// container whose volume vanished refuses the connection too.
func (w *workload) connect(u *userWorkspace) bool {
	exists, running := w.s.world.Instances.State(u.id)
	if !running {
		stopped, pass, stale := w.s.faults.observedStopped(u.id)
		if exists && stale && w.s.world.Storage.HasVolume(u.id) && u.staleReported != stopped {
			u.staleReported = stopped
			w.note(u, wsjudge.UserVerify, "", "", fmt.Sprintf(
				"shown RUNNING and OK, but its container has not run since event #%d, which health pass #%d observed", stopped, pass))
		} else {
			w.note(u, "user.connect", "", "", "connection refused: the container is not running")
		}
		return false
	}
	if !w.s.world.Storage.HasVolume(u.id) {
		// The volume vanished under the running container (lose-volume):
		// the home is gone until the HealthMonitor flags it (C6) and the
		// user's data is owed from the archive, not from this container.
		w.note(u, "user.connect", "", "", "connection refused: the container's volume is gone")
		return false
	}
	ctx, bus := w.s.ctx, w.proxy
	n, err := bus.Incr(ctx, contracts.ConnKey(u.id))
	if err == nil {
		err = bus.Del(ctx, contracts.IdleTimerKey(u.id))
	}
	if err != nil {
		w.note(u, "user.connect", "", "", err.Error())
		return false
	}
	w.note(u, "user.connect", "", "connections="+strconv.FormatInt(n, 10), "")
	u.session++
	u.state = stWorking
	w.verify(u)
	return true
}

// verify compares the volume with the durability model and records the
// outcome as a user.verify event.
func (w *workload) verify(u *userWorkspace) {
	files, _ := w.s.world.Storage.Files(u.id)
	if d := wsjudge.DiffFiles(w.model[u.id], files); d != "" {
		w.note(u, wsjudge.UserVerify, "", "", d)
		return
	}
	w.note(u, wsjudge.UserVerify, "", strconv.Itoa(len(files))+" files as written", "")
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
	if !u.staged && !u.scripted && w.chance(u, stagedDeletePercent) {
		// The owner first asks for PENDING (archive it), then deletes
		// moments later, while the STOPPING or ARCHIVING that started
		// runs: DELETE answers 409 until it ends (C4).
		u.staged = true
		pending := string(contracts.DesiredPending)
		if u.state == stWorking {
			w.disconnect(u)
		}
		_, _ = w.s.api.Patch(w.s.ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &pending})
		w.at(u, uniform(u.rng, soonMin, soonMax), actDelete)
		return
	}
	if w.deleteNow(u) || u.scripted {
		return
	}
	// 409 while an operation runs: the user tries again.
	w.at(u, uniform(u.rng, retryMin, retryMax), actDelete)
}

// deleteNow sends DELETE, disconnecting first; it reports whether the
// workspace is gone.
func (w *workload) deleteNow(u *userWorkspace) bool {
	if u.state == stWorking {
		w.disconnect(u)
	}
	u.state = stIdle
	err := w.s.api.Delete(w.s.ctx, u.owner, u.id)
	if err == nil || apiStatus(err) == 404 {
		u.state, u.deleted = stGone, true
		if !w.legacy && !u.scripted {
			w.at(u, uniform(u.rng, replaceMin, replaceMax), actReplace)
		}
		return true
	}
	return false
}

// ---- scripted users -----------------------------------------------------

// script runs one scripted user action of a plan.
func (w *workload) script(a Action) {
	if a.Kind == UserCreate {
		w.scriptCreate(a)
		return
	}
	if len(w.scripted) == 0 {
		return
	}
	u := w.scripted[a.Pick%len(w.scripted)]
	if u.state == stGone {
		return
	}
	ctx := w.s.ctx
	switch a.Kind {
	case UserDesire:
		to := string(a.Desired)
		_, _ = w.s.api.Patch(ctx, u.owner, u.id, ports.PatchRequest{DesiredState: &to})
	case UserConnect:
		if u.state == stWorking {
			return
		}
		ws, err := w.s.api.Get(ctx, u.owner, u.id)
		if err == nil && ws.ObservedStatus == contracts.ObservedRunning && ws.HealthStatus == contracts.HealthOK {
			w.connect(u)
		}
	case UserDisconnect:
		if u.state == stWorking {
			w.disconnect(u)
		}
	case UserWrite:
		if u.state == stWorking {
			w.write(u)
		}
	case UserDelete:
		w.deleteNow(u)
	case AdminRecover:
		w.recover(u)
	}
}

func (w *workload) scriptCreate(a Action) {
	i := len(w.scripted)
	u := &userWorkspace{
		idx:      i,
		owner:    "user-" + strconv.Itoa(max(a.N, 1)),
		name:     "script-" + strconv.Itoa(i+1),
		rng:      newRand(SubSeed(w.s.cfg.Seed, streamScripted, uint64(i))),
		scripted: true,
		state:    stIdle,
	}
	u.standbyTTL = standbyTTLMin + u.rng.IntN(ttlMaxSby-standbyTTLMin+1)
	u.archiveTTL = archiveTTLMin + u.rng.IntN(ttlMaxArc-archiveTTLMin+1)
	desired := string(a.Desired)
	req := ports.CreateRequest{Name: u.name, ImageRef: imageRef, StandbyTTLSeconds: &u.standbyTTL, ArchiveTTLSeconds: &u.archiveTTL}
	if desired != "" {
		req.DesiredState = &desired
	}
	ws, err := w.s.api.Create(w.s.ctx, u.owner, req)
	if err != nil {
		return
	}
	w.created(u, ws.ID)
	w.scripted = append(w.scripted, u)
}

// ---- accessors ----------------------------------------------------------

// Model is the durability model of workspace id: every file its user wrote
// (path → bytes, last write wins), a copy; nil for an unknown workspace.
func (s *Sim) Model(id string) map[string][]byte {
	m, ok := s.work.model[id]
	if !ok {
		return nil
	}
	return copyFiles(m)
}

func copyFiles(m map[string][]byte) map[string][]byte {
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

// Scripted lists the ids of the workspaces plan actions created, in order.
func (s *Sim) Scripted() []string {
	out := make([]string, len(s.work.scripted))
	for i, u := range s.work.scripted {
		out[i] = u.id
	}
	return out
}
