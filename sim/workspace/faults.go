package workspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/history"
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// Fault events the simulator records itself (the fakes record their world
// methods: instances.Kill, storage.Lose, store.KillSession, …).
const (
	evOutage       = "provider.outage"
	evLostResponse = "provider.lost-response"
	evLostWindow   = "provider.lost-responses"
	evDelayStart   = "instances.DelayStart"
	evDepose       = "leader.depose"
	evDropMessages = "bus.DropMessages"
	evFlushRedis   = "bus.FlushAll"
	evDropFeed     = "feed.Drop"
	evBreakFeed    = "feed.Break"
	evSkipped      = "fault.skipped"
	evAPIRace      = "api.race"
	evArmed        = "fault.armed"
)

// faults is the fault engine of a run: the plan's windows in force, the
// armed deposition, and what the judge needs to know about destroyed data
// and stale observations.
type faults struct {
	s *Sim
	// rng draws partial outages, call by call.
	rng *rand.Rand
	// il interleaves concurrent API calls (api-race).
	il      *interleaver
	windows []window
	// depose counts down the leader's single-row writes to the deposing
	// one (nil: not armed); deposing is set while successors step.
	depose   *int
	deposing bool
	// deposeWhere is where the armed deposition strikes (DeposeInWrite,
	// DeposeAfterWrite, DeposeInRead, DeposeInResume).
	deposeWhere int
	// newLeader is, for DeposeInResume, the instance that took the lead
	// after the deposition was armed ("" until one does): only its store
	// calls count down.
	newLeader string
	// delayUntil ends the current delayed-start window.
	delayUntil time.Time
	// holds are armed hold-volume faults: each strikes the next
	// workspace whose volume a coordinator is about to delete.
	holds []Action
	// destroyed are archive keys whose archive or .meta a fault removed or
	// corrupted (a later upload of the same key repairs it).
	destroyed map[string]bool
	// stoppedSeq is, per workspace, the event after which its container
	// has not run (an external kill, or a delayed start); lastPass is the
	// latest HealthMonitor pass (the health.pass note).
	stoppedSeq map[string]int64
	lastPass   int64
	// armed are volume faults waiting for their moment (armedVolume):
	// each strikes the next workspace woken from STANDBY, or whose start
	// attempt just failed.
	armed []Action
	// breakAfter counts down the trigger-column changes to the one right
	// after which an armed feed break strikes (0: none armed).
	breakAfter int
}

// window is one outage or lost-response window.
type window struct {
	method  string // "storage.Archive", or a whole port: "storage"
	code    contracts.ErrorCode
	percent int
	until   time.Time
	after   bool // the effect happens, the response is lost
}

func newFaults(s *Sim) *faults {
	return &faults{
		s:          s,
		rng:        newRand(SubSeed(s.cfg.Seed, streamFaultDraws)),
		il:         newInterleaver(s.cfg.Seed, s.cfg.System),
		destroyed:  map[string]bool{},
		stoppedSeq: map[string]int64{},
	}
}

// matches reports whether the window covers a call of port.method.
func (w *window) matches(port, method string) bool {
	if i := strings.IndexByte(w.method, '.'); i >= 0 {
		return w.method[:i] == port && w.method[i+1:] == method
	}
	return w.method == port
}

func (f *faults) err(w *window, port, method string) error {
	if w.code == "" {
		return fmt.Errorf("%s.%s: injected outage: %w", port, method, contracts.ErrUnavailable)
	}
	return &contracts.ProviderError{Code: w.code, Message: "injected fault on " + port + "." + method}
}

// hit draws whether a call inside a window of percent fails.
func (f *faults) hit(percent int) bool {
	return percent >= 100 || f.rng.IntN(100) < percent
}

// hook sees every port call of the world before it runs (wsfakes.Hook): it
// fails the calls an outage covers and fires an armed deposition.
func (f *faults) hook(c wsfakes.Call) error {
	s := f.s
	if c.Instance == "" || s.quiet {
		return nil
	}
	if c.Port == "store" && (f.deposeWhere == DeposeInWrite && c.Method == "Update" ||
		f.deposeWhere == DeposeInRead && (c.Method == "List" || c.Method == "Get") ||
		f.deposeWhere == DeposeInResume && c.Instance == f.newLeader && !slices.Contains(leaseCalls, c.Method)) {
		f.countDepose(c.Instance)
	}
	if len(f.holds) > 0 && c.Port == "storage" && c.Method == "DeleteVolume" && c.Workspace != "" && s.world.Storage.HasVolume(c.Workspace) {
		a := f.holds[0]
		f.holds = f.holds[1:]
		s.world.Instances.HoldVolume(c.Workspace, a.Delay)
	}
	if len(f.windows) == 0 {
		return nil
	}
	now := s.clock.Now()
	for i := range f.windows {
		w := &f.windows[i]
		if w.after || !now.Before(w.until) || !w.matches(c.Port, c.Method) {
			continue
		}
		if f.hit(w.percent) {
			return f.err(w, c.Port, c.Method)
		}
	}
	return nil
}

// lostResponse is asked by a coordinator's gate after a world-changing call
// succeeded: inside a lost-response window it returns the error the caller
// gets instead of the success, and records the fault.
func (f *faults) lostResponse(instance, port, method, id string) error {
	s := f.s
	if s.quiet || len(f.windows) == 0 {
		return nil
	}
	now := s.clock.Now()
	for i := range f.windows {
		w := &f.windows[i]
		if !w.after || !now.Before(w.until) || !w.matches(port, method) || !f.hit(w.percent) {
			continue
		}
		err := f.err(w, port, method)
		s.record(history.Event{Kind: history.KindFault, Instance: instance, Workspace: id, Method: evLostResponse,
			Args: port + "." + method, Err: err.Error()})
		return err
	}
	return nil
}

// leaseCalls are the store's calls on the leader lock, not on the data.
var leaseCalls = []string{"TryAcquire", "Check", "Release"}

// Where an armed deposition strikes (Action.Pick modulo 4).
const (
	DeposeInWrite    = 0
	DeposeAfterWrite = 1
	DeposeInRead     = 2
	// DeposeInResume waits for the next instance to take the lead and
	// strikes at its N-th data call of the store (a read or a write) from
	// then: the path on which a new leader takes over its predecessor's
	// operations.
	DeposeInResume = 3
)

// countDepose counts a call of instance toward an armed deposition and
// fires it at the N-th call made while instance leads.
func (f *faults) countDepose(instance string) {
	s := f.s
	if f.depose == nil || f.deposing || s.quiet {
		return
	}
	if in := s.byName[instance]; in != nil && in.alive && in.coord.IsLeader() {
		*f.depose--
		if *f.depose <= 0 {
			f.depose = nil
			f.fireDepose(in)
		}
	}
}

// afterCall sees every store call of a coordinator instance that returned
// without error: a deposition armed to strike after a write fires here,
// between the write (a claim, say) and whatever the leader does next.
func (f *faults) afterCall(instance, port, method string) {
	if f.deposeWhere == DeposeAfterWrite && port == "store" && method == "Update" {
		f.countDepose(instance)
	}
}

// fireDepose kills leader's DB session from inside its own write, then runs
// a Step of every other live instance to completion before the write goes
// on: the successor takes over and acts first. An instance that stepped
// less than MinStepInterval ago is not stepped again (SPEC 3 "Steps"): it
// keeps its own next Step, and the leader's write goes on first (DR503).
func (f *faults) fireDepose(leader *instance) {
	s := f.s
	f.deposing = true
	defer func() { f.deposing = false }()
	s.record(history.Event{Kind: history.KindFault, Instance: leader.name, Method: evDepose,
		Args: "session killed " + [...]string{"inside its write", "after its write", "inside its read", "inside a store call of its takeover"}[f.deposeWhere] + "; successors step first"})
	s.world.Store.KillSession(leader.name)
	for _, in := range s.insts {
		if in != leader && in.alive && in.mayStepAt(s.clock.Now()) {
			s.step(in, in.gen)
		}
	}
}

// observeSink follows the history for the stale-observation check: when a
// container stopped running and when the HealthMonitor last observed.
func (f *faults) observeSink(e *history.Event) {
	if f.depose != nil && f.deposeWhere == DeposeInResume && f.newLeader == "" && e.Kind == history.KindLeader && e.Method == "acquire" {
		f.newLeader = e.Instance
	}
	if f.breakAfter > 0 && !f.s.quiet && triggerChange(e) {
		if f.breakAfter--; f.breakAfter == 0 {
			// After the write's own event, before any listener's next
			// poll: its notification is lost with the session.
			f.s.Schedule(f.s.clock.Now(), "", func(*Sim) {
				if !f.s.quiet {
					f.breakFeed()
				}
			})
		}
	}
	switch {
	case e.Kind == history.KindNote && e.Method == history.NoteHealthPass:
		f.lastPass = e.Seq
	case e.Kind == history.KindFault && e.Method == wsjudge.FKill:
		f.stoppedSeq[e.Workspace] = e.Seq
	case e.Kind == history.KindCall && e.Method == wsjudge.MStart && e.Err == "" && strings.Contains(e.Result, "runs in"):
		f.stoppedSeq[e.Workspace] = e.Seq
	case e.Kind == history.KindCall && e.Method == wsjudge.MStart && e.Err != "" && len(f.armed) > 0 && !f.s.quiet:
		// A failed start attempt: an armed volume fault strikes before
		// the retry (after the call's own event, never inside it).
		id := e.Workspace
		f.s.Schedule(f.s.clock.Now(), "", func(*Sim) {
			if !f.s.quiet {
				f.strikeArmed(id)
			}
		})
	case e.Kind == history.KindCall && e.Method == wsjudge.MArchive && e.Err == "":
		if key, ok := strings.CutPrefix(e.Result, wsjudge.ArchiveUploaded); ok {
			delete(f.destroyed, key)
		}
	}
}

// observedStopped reports whether workspace id's container stopped at an
// event (stopped) that a later HealthMonitor pass (pass) has observed.
func (f *faults) observedStopped(id string) (stopped, pass int64, ok bool) {
	stopped = f.stoppedSeq[id]
	return stopped, f.lastPass, stopped > 0 && f.lastPass > stopped
}

// ---- applying plan actions ----------------------------------------------

// Play is one step of a step-by-step driver (rapid's state machine): an
// Advance runs the simulation for its length; any other action is applied
// now, then whatever it made due now runs. Every action played is kept
// (Played), timed at the moment it was played, so that a run with that
// plan (Config.Plan, Duration the time played) replays it exactly.
func (s *Sim) Play(a Action) error {
	if a.Kind == Advance {
		return s.RunFor(a.For)
	}
	// Everything due now runs first: an action comes after the events of
	// its instant, as a plan's late events do.
	if err := s.RunFor(0); err != nil {
		return err
	}
	a.At = s.Elapsed()
	s.played = append(s.played, a)
	if err := s.Apply(a); err != nil {
		return err
	}
	return s.RunFor(0)
}

// Played is the plan of the actions Play applied so far.
func (s *Sim) Played() *Plan {
	p := &Plan{Faults: []Kind{}, Actions: append([]Action{}, s.played...)}
	for _, a := range s.played {
		if a.Kind.IsFault() && !slices.Contains(p.Faults, a.Kind) {
			p.Faults = append(p.Faults, a.Kind)
		}
	}
	return p
}

// Apply runs one plan action now. Faults strike the world or the
// coordinator instances; user actions act on the plan's workspaces; an
// Advance runs the simulation for its length. Nothing but Advance happens
// once the quiet phase has begun.
func (s *Sim) Apply(a Action) error {
	if a.Kind == Advance {
		return s.RunFor(a.For)
	}
	if s.quiet {
		return nil
	}
	f := s.faults
	switch a.Kind {
	case FaultCrash:
		f.crash(a)
	case FaultDepose:
		n := max(a.N, 1)
		f.depose, f.deposeWhere, f.newLeader = &n, a.Pick%len(deposeWheres), ""
	case FaultKillSession:
		holder := s.world.Store.Holder()
		if holder == "" {
			f.skipped(a, "no leader")
			return nil
		}
		s.world.Store.KillSession(holder)
	case FaultOutage, FaultLostResponse, FaultDBError, FaultDBLostResponse, FaultNoAnswer:
		f.openWindow(a)
	case FaultDelayStart:
		f.delayStarts(a)
	case FaultHoldVolume:
		f.holds = append(f.holds, a)
		s.record(history.Event{Kind: history.KindNote, Method: evArmed, Args: a.String(),
			Result: "strikes the next workspace whose volume a coordinator deletes"})
	case FaultKillContainer, FaultRemoveContainer:
		f.hitContainer(a)
	case FaultLoseVolume, FaultRemoveVolume:
		if f.armedVolume(a) {
			f.armed = append(f.armed, a)
			s.record(history.Event{Kind: history.KindNote, Method: evArmed, Args: a.String(),
				Result: "strikes the next workspace woken from STANDBY or whose start fails"})
			return nil
		}
		f.loseVolume(a)
	case FaultCorruptObject, FaultRemoveObject:
		f.hitObject(a)
	case FaultDropMessages:
		s.world.Bus.DropMessages(max(a.N, 1))
		s.record(history.Event{Kind: history.KindFault, Method: evDropMessages, Args: strconv.Itoa(max(a.N, 1))})
	case FaultStorageJobCrash:
		s.world.Storage.CrashArchiveJobs(max(a.N, 1))
	case FaultAPIRace:
		f.apiRace(a)
	case FaultFlushRedis:
		s.world.Bus.FlushAll()
		s.record(history.Event{Kind: history.KindFault, Method: evFlushRedis})
	case FaultDropFeed:
		s.world.Store.DropFeed(max(a.N, 1))
		s.record(history.Event{Kind: history.KindFault, Method: evDropFeed, Args: strconv.Itoa(max(a.N, 1))})
	case FaultBreakFeed:
		if a.N > 0 {
			// Armed: it strikes right after the N-th change of a trigger
			// column from now, before any listener has polled it.
			f.breakAfter = a.N
			s.record(history.Event{Kind: history.KindNote, Method: evArmed, Args: a.String(),
				Result: "strikes right after the next changes of a trigger column, before they are polled"})
			return nil
		}
		f.breakFeed()
	case UserCreate, UserDesire, UserConnect, UserDisconnect, UserWrite, UserDelete, AdminRecover:
		s.work.script(a)
	default:
		return fmt.Errorf("plan action %q: unknown kind", a.Kind)
	}
	return nil
}

// breakFeed ends every change-feed listener's session now.
func (f *faults) breakFeed() {
	f.s.world.Store.BreakFeed()
	f.s.record(history.Event{Kind: history.KindFault, Method: evBreakFeed})
}

// triggerChange reports whether e is an applied write setting one of SPEC
// 4.6's trigger columns (the feed notifies after it when a value changes).
func triggerChange(e *history.Event) bool {
	if e.Kind != history.KindWrite || !e.Applied || e.Patch == nil {
		return false
	}
	p := e.Patch
	return p.ObservedStatus.Set || p.HealthStatus.Set || p.Operation.Set || p.DesiredState.Set || p.DeletedAt.Set || p.ErrorInfo.Set
}

func (f *faults) skipped(a Action, why string) {
	f.s.record(history.Event{Kind: history.KindNote, Method: evSkipped, Args: a.String(), Result: why})
}

// pickOf chooses one of candidates by a.Pick ("" when there are none).
func pickOf(a Action, candidates []string) string {
	if len(candidates) == 0 {
		return ""
	}
	return candidates[a.Pick%len(candidates)]
}

// Pick focus: a fault aimed at workspaces hits the interesting ones more
// often than chance would. Pick modulo 3 chooses the focus, the rest of
// Pick the target within it (an empty focus falls back to every
// candidate).
const (
	focusAny       = 0 // any candidate
	focusError     = 1 // workspaces in ERROR
	focusOperation = 2 // workspaces with an operation in progress
)

// pickFocused chooses among workspace ids by a.Pick's focus.
func (f *faults) pickFocused(a Action, ids []string) string {
	focus := a.Pick % 3
	if focus != focusAny && len(ids) > 0 {
		rows := map[string]*contracts.Workspace{}
		snap := f.s.world.Store.Snapshot()
		for i := range snap {
			rows[snap[i].ID] = &snap[i]
		}
		var in []string
		for _, id := range ids {
			w := rows[id]
			switch {
			case w == nil:
			case focus == focusError && (w.HealthStatus == contracts.HealthError || w.Terminal()):
				in = append(in, id)
			case focus == focusOperation && w.Operation != contracts.OpNone:
				in = append(in, id)
			}
		}
		if len(in) > 0 {
			ids = in
		}
	}
	return pickOf(Action{Pick: a.Pick / 3}, ids)
}

// crash plans a crash of the leader (Pick even) or of another live instance
// at its N-th port call from now; it is restarted For after it dies.
func (f *faults) crash(a Action) {
	s := f.s
	var leaders, others []*instance
	for _, in := range s.insts {
		switch {
		case !in.alive:
		case in.coord.IsLeader():
			leaders = append(leaders, in)
		default:
			others = append(others, in)
		}
	}
	candidates := append(leaders, others...)
	if a.Pick%2 == 1 && len(others) > 0 {
		candidates = others
	}
	if len(candidates) == 0 {
		f.skipped(a, "no live instance")
		return
	}
	in := candidates[(a.Pick/2)%len(candidates)]
	in.restartAfter = a.For
	if in.restartAfter <= 0 {
		in.restartAfter = restartDelays[0]
	}
	s.CrashAtCall(in.name, int64(max(a.N, 1)))
}

func (f *faults) openWindow(a Action) {
	s := f.s
	w := window{method: a.Method, code: a.Code, percent: a.Percent, until: s.clock.Now().Add(a.For),
		after: a.Kind == FaultLostResponse || a.Kind == FaultDBLostResponse || a.Kind == FaultNoAnswer && a.N == 1}
	if a.Kind == FaultNoAnswer {
		w.code = "" // no answer, no code: a transport error (SPEC 1.5)
	}
	if w.percent <= 0 {
		w.percent = 100
	}
	// Drop windows that are over.
	now := s.clock.Now()
	kept := f.windows[:0]
	for _, x := range f.windows {
		if now.Before(x.until) {
			kept = append(kept, x)
		}
	}
	f.windows = append(kept, w)
	method := evOutage
	if w.after {
		method = evLostWindow
	}
	s.record(history.Event{Kind: history.KindFault, Method: method, Args: a.String()})
}

func (f *faults) delayStarts(a Action) {
	s := f.s
	until := s.clock.Now().Add(a.For)
	f.delayUntil = until
	s.world.Instances.DelayStarts(a.Delay)
	s.record(history.Event{Kind: history.KindFault, Method: evDelayStart, Args: a.String()})
	s.Schedule(until, "", func(s *Sim) {
		if f.delayUntil.Equal(until) {
			s.world.Instances.DelayStarts(0)
		}
	})
}

func (f *faults) hitContainer(a Action) {
	s := f.s
	var ids []string
	for _, c := range s.world.Instances.Snapshot() {
		if a.Kind == FaultRemoveContainer || c.Running {
			ids = append(ids, c.WorkspaceID)
		}
	}
	id := f.pickFocused(a, ids)
	switch {
	case id == "":
		f.skipped(a, "no container")
	case a.Kind == FaultKillContainer:
		s.world.Instances.Kill(id)
	default:
		s.world.Instances.Remove(id)
	}
}

// armedVolume reports whether volume fault a waits for its moment rather
// than striking now: one remove-volume in four (Pick modulo 4 is 3),
// outside the legacy workload; lose-volume always strikes at once (under
// a running container it makes SPEC C6's container without volume). Its moment is the one SPEC C6 and 4.2.2 speak of: a volume
// gone just before STARTING (the workspace woken from STANDBY, the row
// still showing the volume) or between two attempts of STARTING (the
// table shows no volume: STARTING is neither resumed nor retried).
func (f *faults) armedVolume(a Action) bool {
	return a.Kind == FaultRemoveVolume && !f.s.work.legacy && a.Pick%4 == 3
}

// woken is told that the workload asked for RUNNING on workspace id, whose
// row read before was ws: an armed volume fault strikes it when it was
// STANDBY and at rest.
func (f *faults) woken(id string, ws contracts.Workspace) {
	if len(f.armed) == 0 || f.s.quiet || ws.ObservedStatus != contracts.ObservedStandby || ws.Operation != contracts.OpNone {
		return
	}
	f.strikeArmed(id)
}

// strikeArmed fires the oldest armed volume fault on workspace id.
func (f *faults) strikeArmed(id string) {
	if len(f.armed) == 0 || !f.s.world.Storage.HasVolume(id) {
		return
	}
	a := f.armed[0]
	f.armed = f.armed[1:]
	f.loseVolumeOf(a, id)
}

// loseVolume destroys a volume (lose-volume), or has an operator remove
// it (remove-volume: refused while a container holds it, recorded by the
// world). The user's data survives only in the archive at the workspace's
// archive_key: the durability model becomes that archive's contents (or
// nothing).
func (f *faults) loseVolume(a Action) {
	s := f.s
	id := f.pickFocused(a, s.world.Storage.Volumes())
	if id == "" {
		f.skipped(a, "no volume")
		return
	}
	f.loseVolumeOf(a, id)
}

// loseVolumeOf is loseVolume on workspace id.
func (f *faults) loseVolumeOf(a Action, id string) {
	s := f.s
	if a.Kind == FaultRemoveVolume {
		// SPEC 5.2: a volume that a container holds (its workspace's, or
		// another one's: hold-volume) is kept and the removal fails with
		// VOLUME_IN_USE. The world records the refusal; the data and the
		// durability model stay as they are (DR502).
		if err := s.world.Storage.Remove(id); err != nil {
			if contracts.CodeOf(err) != contracts.CodeVolumeInUse {
				s.Fail("remove-volume: " + err.Error())
			}
			return
		}
	}
	if _, owed := s.work.model[id]; owed {
		kept := map[string][]byte{}
		if row, err := s.world.Store.Get(s.ctx, id); err == nil && row.ArchiveKey != "" {
			if files, err := f.readArchive(row.ArchiveKey); err == nil {
				kept = files
			}
		}
		s.work.model[id] = kept
	}
	if a.Kind == FaultRemoveVolume {
		return // removed above
	}
	s.world.Storage.Lose(id)
}

// hitObject corrupts or removes the archive (or .meta) a workspace's
// archive_key names; without any, any archive object.
func (f *faults) hitObject(a Action) {
	s := f.s
	// Focus: any workspace's archive, an archived workspace's (the next
	// restore reads it), a workspace's in ERROR.
	var keys []string
	focus := a.Pick % 3
	for _, w := range s.world.Store.Snapshot() {
		if w.ArchiveKey == "" || w.Deleted() {
			continue
		}
		if focus == 1 && w.ObservedStatus != contracts.ObservedPending || focus == 2 && w.HealthStatus != contracts.HealthError && !w.Terminal() {
			continue
		}
		k := w.ArchiveKey
		if a.Meta {
			k = contracts.MetaKey(k)
		}
		if _, ok := s.world.Objects.Peek(k); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 && focus != 0 {
		for _, w := range s.world.Store.Snapshot() {
			if k := w.ArchiveKey; k != "" && !w.Deleted() {
				if a.Meta {
					k = contracts.MetaKey(k)
				}
				if _, ok := s.world.Objects.Peek(k); ok {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) == 0 {
		for _, k := range s.world.Objects.Keys() {
			if strings.HasPrefix(k, contracts.ArchivePrefix) && contracts.IsMetaKey(k) == a.Meta {
				keys = append(keys, k)
			}
		}
	}
	key := pickOf(Action{Pick: a.Pick / 3}, keys)
	if key == "" {
		f.skipped(a, "no archive")
		return
	}
	archiveKey := key
	if contracts.IsMetaKey(key) {
		archiveKey = contracts.ArchiveOfMeta(key)
	}
	f.destroyed[archiveKey] = true
	if a.Kind == FaultCorruptObject {
		s.world.Objects.Corrupt(key)
	} else {
		s.world.Objects.Remove(key)
	}
}

// readArchive unpacks the archive at key as a restore would, checking its
// .meta.
func (f *faults) readArchive(key string) (map[string][]byte, error) {
	objs := f.s.world.Objects
	data, ok := objs.Peek(key)
	if !ok {
		return nil, fmt.Errorf("archive %s: %w", key, contracts.ErrNotFound)
	}
	meta, ok := objs.Peek(contracts.MetaKey(key))
	if !ok {
		return nil, fmt.Errorf("archive %s: .meta: %w", key, contracts.ErrNotFound)
	}
	if err := archive.VerifyMeta(data, meta); err != nil {
		return nil, fmt.Errorf("archive %s: %w", key, err)
	}
	files, err := archive.Unpack(data)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", key, err)
	}
	return files, nil
}

// ---- the quiet phase ----------------------------------------------------

// BeginQuiet ends the fault phase: no fault strikes from now on (open
// windows close, delayed starts and planned crashes are cancelled, crashed
// instances restart now), users stop acting, and a `quiet` fault event
// marks where the convergence bound starts (wsjudge.ConvergeBound).
func (s *Sim) BeginQuiet() error {
	if s.quiet {
		return nil
	}
	s.quiet, s.quietAt = true, s.Elapsed()
	s.work.quiet = true
	f := s.faults
	f.windows, f.depose, f.armed, f.holds, f.breakAfter = nil, nil, nil, nil, 0
	s.world.Instances.DelayStarts(0)
	s.world.Storage.CrashArchiveJobs(0)
	s.record(history.Event{Kind: history.KindFault, Method: wsjudge.FQuiet, Result: "bound " + wsjudge.ConvergeBound.String()})
	for _, in := range s.insts {
		if in.alive {
			in.gate.FailFrom = 0
			continue
		}
		if err := s.Restart(in.name); err != nil {
			return err
		}
	}
	return nil
}

// Quiet reports whether the quiet phase has begun.
func (s *Sim) Quiet() bool { return s.quiet }

// QuietAt is when the quiet phase began, from the start (ok false before).
func (s *Sim) QuietAt() (at time.Duration, ok bool) { return s.quietAt, s.quiet }
