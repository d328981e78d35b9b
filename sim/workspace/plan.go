package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/sim/engine"
)

// Kind names one kind of plan action: a fault, a scripted user or
// administrator action, or (in step-by-step drivers) a time advance.
type Kind string

// Fault kinds (ARCHITECTURE principle 4: a seed decides which are on, then
// their timing). Each is recorded as a history.KindFault event when it
// strikes.
const (
	// FaultCrash: a coordinator instance crashes (fail-stop) at its N-th
	// port call from now; a supervisor restarts it For later.
	FaultCrash Kind = "crash"
	// FaultDepose: the leader's DB session is killed at its N-th store
	// call of a kind from now, and every other live instance runs a Step
	// to completion inside that call before the deposed leader goes on:
	// the successor acts first, deterministically. Pick chooses the call
	// (modulo 4): DeposeInWrite, inside a single-row write before it runs
	// (the write is then fenced); DeposeAfterWrite, once such a write has
	// returned (the gap between a claim and its actuator calls, which no
	// fenced write covers); DeposeInRead, inside a read (a List or a Get:
	// the reconciler's selection); DeposeInResume, inside a read or write
	// of the next instance to take the lead, N calls into its takeover
	// (the resume path of a new leader).
	FaultDepose Kind = "depose"
	// FaultKillSession: the leader's DB session is killed between two
	// events (pg_terminate_backend).
	FaultKillSession Kind = "kill-session"
	// FaultOutage: calls of Method (a method or a port) fail with Code for
	// For, each with probability Percent: no effect, an error returned.
	FaultOutage Kind = "outage"
	// FaultLostResponse: calls of Method succeed in the world but return
	// Code to the caller for For (the response is lost after the effect).
	FaultLostResponse Kind = "lost-response"
	// FaultDelayStart: for For, containers started run only Delay after
	// Start returned.
	FaultDelayStart Kind = "delay-start"
	// FaultKillContainer: a running container stops (OOM kill).
	FaultKillContainer Kind = "kill-container"
	// FaultRemoveContainer: a container vanishes (docker rm -f).
	FaultRemoveContainer Kind = "remove-container"
	// FaultLoseVolume: a volume vanishes with its data.
	FaultLoseVolume Kind = "lose-volume"
	// FaultCorruptObject: an archive (or, with Meta, its .meta) named by a
	// workspace's archive_key has a byte flipped.
	FaultCorruptObject Kind = "corrupt-object"
	// FaultRemoveObject: such an object vanishes.
	FaultRemoveObject Kind = "remove-object"
	// FaultDropMessages: the next N bus messages are lost.
	FaultDropMessages Kind = "drop-messages"
	// FaultFlushRedis: Redis loses every key (a restart without
	// persistence): connection counts, idle timers, GC orphan timers.
	FaultFlushRedis Kind = "flush-redis"
	// FaultDropFeed: the next N change notifications are lost.
	FaultDropFeed Kind = "drop-feed"
	// FaultBreakFeed: every change-feed listener loses its session: now
	// (N 0), or armed, right after the N-th change of a trigger column
	// from now, before a listener has polled it (a gap around a
	// publication: its notification is lost with the session, SPEC 4.6).
	FaultBreakFeed Kind = "break-feed"
	// FaultDBError: calls of a store method (Method: "store.Update", or
	// the whole "store" port, leader lock calls included) fail for For,
	// each with probability Percent: the DB answers with an error and
	// nothing is written (a failed statement, a dropped connection).
	FaultDBError Kind = "db-error"
	// FaultDBLostResponse: a coordinator's store calls of Method commit in
	// the DB but the caller gets an error for For (the connection broke
	// after COMMIT, before the answer arrived).
	FaultDBLostResponse Kind = "db-lost-response"
	// FaultRemoveVolume: an operator runs `docker volume rm` on a
	// workspace's volume. The volume provider refuses while a container
	// holds it (VOLUME_IN_USE, volume kept); otherwise the volume and its
	// data are gone.
	FaultRemoveVolume Kind = "remove-volume"
	// FaultStorageJobCrash: the next N archive jobs that upload are killed
	// after uploading the archive object and before its .meta (the
	// commit marker): the object is left without its .meta and Archive
	// fails (STORAGE_JOB_FAILED).
	FaultStorageJobCrash Kind = "storage-job-crash"
	// FaultAPIRace: N owners' requests for RUNNING arrive at the same
	// instant and run concurrently, their store reads and writes
	// interleaved in an order drawn from the seed (a race, not a failure:
	// every request is served); then, when a workspace is in ERROR, N
	// administrators recover it at the same instant, interleaved the same
	// way (SPEC 4.3: exactly one of them resets it).
	FaultAPIRace Kind = "api-race"
	// FaultNoAnswer: calls of Method (a provider method or port) get no
	// answer for For, each with probability Percent: the provider's API
	// did not answer at all (a refused connection, a timeout, a reset),
	// so the call fails with no SPEC 1.5 code, a transport error, which
	// SPEC 1.5 makes Unreachable. N 0: the request never reached the
	// provider (nothing done); N 1: the provider acted and only its
	// answer was lost.
	FaultNoAnswer Kind = "no-answer"
	// FaultHoldVolume: something other than the workspace's container
	// (an operator's backup or debugging container) mounts a
	// workspace's volume for Delay. Armed: it strikes the next workspace
	// whose volume a coordinator is about to delete (ARCHIVING's or
	// DELETING's delete_volume), so that call, and any other within
	// Delay, fails with VOLUME_IN_USE and keeps the volume (SPEC 4.2.2:
	// "something else holds the volume"; 1.5: a retried ActionFailed).
	FaultHoldVolume Kind = "hold-volume"
)

// User kinds: scripted user and administrator actions on the workspaces a
// plan creates (rapid's state machine; the ordinary workload acts on its
// own). Pick chooses among the plan's workspaces in creation order.
const (
	// UserCreate: user N creates a workspace with Desired.
	UserCreate Kind = "user.create"
	// UserDesire: the owner asks for Desired.
	UserDesire Kind = "user.desire"
	// UserConnect: the owner connects, if the workspace runs (and checks
	// their data: a user.verify event).
	UserConnect Kind = "user.connect"
	// UserDisconnect: the owner's connection closes.
	UserDisconnect Kind = "user.disconnect"
	// UserWrite: the connected owner writes a file.
	UserWrite Kind = "user.write"
	// UserDelete: the owner deletes the workspace.
	UserDelete Kind = "user.delete"
	// AdminRecover: an administrator recovers the workspace from ERROR.
	AdminRecover Kind = "admin.recover"
	// Advance: time passes (For); only step-by-step drivers use it, a plan
	// times its actions with At.
	Advance Kind = "advance"
)

// FaultKinds lists every fault kind, in a stable order.
func FaultKinds() []Kind {
	return []Kind{
		FaultCrash, FaultDepose, FaultKillSession, FaultOutage, FaultLostResponse, FaultDelayStart,
		FaultKillContainer, FaultRemoveContainer, FaultLoseVolume, FaultCorruptObject, FaultRemoveObject,
		FaultDropMessages, FaultFlushRedis, FaultDropFeed, FaultBreakFeed,
		FaultDBError, FaultDBLostResponse, FaultRemoveVolume, FaultStorageJobCrash, FaultAPIRace,
		FaultNoAnswer, FaultHoldVolume,
	}
}

// laterFaultKinds are the kinds drawn from their own stream
// (streamLaterFaults), after the others (DR496): a seed in which they are
// all off draws its plan exactly as before they existed.
var laterFaultKinds = []Kind{FaultNoAnswer, FaultHoldVolume}

// OptInFaultKinds are the kinds a mix names explicitly: neither the default
// mix, "all" nor the rapid machine draws them. There are none left:
// api-race joined the default mix (issue 22, docs/choices.md 340); an
// implementation in a child process (a system with SerialAPI) has its
// racing requests run one after another instead of interleaved.
func OptInFaultKinds() []Kind { return []Kind{} }

// UserKinds lists every scripted user kind, in a stable order.
func UserKinds() []Kind {
	return []Kind{UserCreate, UserDesire, UserConnect, UserDisconnect, UserWrite, UserDelete, AdminRecover}
}

// IsFault reports whether k is a fault kind (opt-in kinds included).
func (k Kind) IsFault() bool {
	return slices.Contains(FaultKinds(), k) || slices.Contains(OptInFaultKinds(), k)
}

// Action is one step of a plan. Only the fields its Kind uses are set.
type Action struct {
	// At is when it happens, from the start of the run.
	At   time.Duration
	Kind Kind
	// Pick chooses the target among the candidates when the action runs
	// (candidates sorted; Pick modulo their number), so a plan stays valid
	// whatever ids the run issues.
	Pick int
	// N: the crash's call count, the deposing write's count, the number of
	// messages or notifications dropped, the creating user's number.
	N int
	// For: a window's length, a crashed instance's restart delay, or an
	// advance.
	For time.Duration
	// Delay: a delayed start's delay.
	Delay time.Duration
	// Method and Code: an outage's or lost response's method (or port) and
	// provider error code ("" for a plain unavailability).
	Method string
	Code   contracts.ErrorCode
	// Percent: the share of matching calls an outage fails.
	Percent int
	// Meta: an object fault hits the .meta rather than the archive.
	Meta bool
	// Desired: a user's desired state.
	Desired contracts.DesiredState
}

// String renders a for timelines and reports.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	switch a.Kind {
	case FaultCrash:
		fmt.Fprintf(&b, " pick=%d at-call=%d restart-after=%s", a.Pick, a.N, a.For)
	case FaultDepose:
		fmt.Fprintf(&b, " %s=%d", deposeWheres[a.Pick%len(deposeWheres)], a.N)
	case FaultOutage, FaultLostResponse, FaultDBError, FaultDBLostResponse:
		fmt.Fprintf(&b, " %s", a.Method)
		if a.Code != "" {
			fmt.Fprintf(&b, " %s", a.Code)
		}
		fmt.Fprintf(&b, " %d%% for %s", a.Percent, a.For)
	case FaultNoAnswer:
		fmt.Fprintf(&b, " %s %d%% for %s", a.Method, a.Percent, a.For)
		if a.N == 1 {
			b.WriteString(" after-effect")
		}
	case FaultDelayStart:
		fmt.Fprintf(&b, " by %s for %s", a.Delay, a.For)
	case FaultHoldVolume:
		fmt.Fprintf(&b, " for %s", a.Delay)
	case FaultKillContainer, FaultRemoveContainer, FaultLoseVolume, FaultRemoveVolume, UserConnect, UserDisconnect, UserWrite, UserDelete, AdminRecover:
		fmt.Fprintf(&b, " pick=%d", a.Pick)
	case FaultCorruptObject, FaultRemoveObject:
		fmt.Fprintf(&b, " pick=%d", a.Pick)
		if a.Meta {
			b.WriteString(" .meta")
		}
	case FaultDropMessages, FaultDropFeed, FaultStorageJobCrash:
		fmt.Fprintf(&b, " n=%d", a.N)
	case FaultBreakFeed:
		if a.N > 0 {
			fmt.Fprintf(&b, " after-changes=%d", a.N)
		}
	case FaultAPIRace:
		fmt.Fprintf(&b, " pick=%d n=%d", a.Pick, a.N)
	case UserCreate:
		fmt.Fprintf(&b, " user=%d desired=%s", a.N, a.Desired)
	case UserDesire:
		fmt.Fprintf(&b, " pick=%d desired=%s", a.Pick, a.Desired)
	case Advance:
		fmt.Fprintf(&b, " %s", a.For)
	}
	return b.String()
}

// actionJSON is Action's file form: durations as Go duration strings.
type actionJSON struct {
	At      string                 `json:"at"`
	Kind    Kind                   `json:"kind"`
	Pick    int                    `json:"pick,omitempty"`
	N       int                    `json:"n,omitempty"`
	For     string                 `json:"for,omitempty"`
	Delay   string                 `json:"delay,omitempty"`
	Method  string                 `json:"method,omitempty"`
	Code    contracts.ErrorCode    `json:"code,omitempty"`
	Percent int                    `json:"percent,omitempty"`
	Meta    bool                   `json:"meta,omitempty"`
	Desired contracts.DesiredState `json:"desired,omitempty"`
}

func durString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func parseDur(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// MarshalJSON writes durations as Go duration strings ("1h30m0s").
func (a Action) MarshalJSON() ([]byte, error) {
	return json.Marshal(actionJSON{
		At: a.At.String(), Kind: a.Kind, Pick: a.Pick, N: a.N, For: durString(a.For), Delay: durString(a.Delay),
		Method: a.Method, Code: a.Code, Percent: a.Percent, Meta: a.Meta, Desired: a.Desired,
	})
}

// UnmarshalJSON reads what MarshalJSON writes; an unknown field is an
// error (a replay file is decoded strictly).
func (a *Action) UnmarshalJSON(b []byte) error {
	var j actionJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	at, err := parseDur(j.At)
	if err != nil {
		return fmt.Errorf("action at: %w", err)
	}
	forD, err := parseDur(j.For)
	if err != nil {
		return fmt.Errorf("action for: %w", err)
	}
	delay, err := parseDur(j.Delay)
	if err != nil {
		return fmt.Errorf("action delay: %w", err)
	}
	*a = Action{At: at, Kind: j.Kind, Pick: j.Pick, N: j.N, For: forD, Delay: delay, Method: j.Method,
		Code: j.Code, Percent: j.Percent, Meta: j.Meta, Desired: j.Desired}
	return nil
}

// Bounds of a plan: far above anything a seed draws, far below what would
// exhaust memory.
const (
	MaxPlanActions = 100_000
	maxActionN     = 1_000_000
	maxPick        = 1 << 30
)

// Validate checks every action of p against a run whose fault phase lasts
// d: known kinds and fields in range. Errors wrap engine.ErrBadInput and
// name the action.
func (p *Plan) Validate(d time.Duration) error {
	if p == nil {
		return nil
	}
	if len(p.Actions) > MaxPlanActions {
		return fmt.Errorf("%w: plan has %d actions (at most %d)", engine.ErrBadInput, len(p.Actions), MaxPlanActions)
	}
	for _, k := range p.Faults {
		if !k.IsFault() {
			return fmt.Errorf("%w: plan enables unknown fault kind %q (known: %s)", engine.ErrBadInput, k, kindList(FaultKinds()))
		}
	}
	for i, a := range p.Actions {
		if err := a.validate(d); err != nil {
			return fmt.Errorf("%w: plan action %d (%s): %v", engine.ErrBadInput, i+1, a.Kind, err)
		}
	}
	return nil
}

func (a Action) validate(d time.Duration) error {
	known := a.Kind.IsFault() || slices.Contains(UserKinds(), a.Kind)
	switch {
	case !known:
		return fmt.Errorf("unknown kind (known: %s, %s)", kindList(FaultKinds()), kindList(UserKinds()))
	case a.At < 0 || a.At > d:
		return fmt.Errorf("at %s is outside the fault phase [0, %s]", a.At, d)
	case a.Pick < 0 || a.Pick > maxPick:
		return fmt.Errorf("pick %d out of range [0, %d]", a.Pick, maxPick)
	case a.N < 0 || a.N > maxActionN:
		return fmt.Errorf("n %d out of range [0, %d]", a.N, maxActionN)
	case a.For < 0 || a.For > MaxDuration:
		return fmt.Errorf("for %s out of range [0, %s]", a.For, MaxDuration)
	case a.Delay < 0 || a.Delay > MaxDuration:
		return fmt.Errorf("delay %s out of range [0, %s]", a.Delay, MaxDuration)
	case a.Percent < 0 || a.Percent > 100:
		return fmt.Errorf("percent %d out of range [0, 100]", a.Percent)
	case a.Code != "" && !slices.Contains(contracts.AllErrorCodes, a.Code):
		return fmt.Errorf("unknown error code %q", a.Code)
	case a.Desired != "" && !slices.Contains(desiredStates, a.Desired):
		return fmt.Errorf("unknown desired state %q", a.Desired)
	case a.Method != "" && !validMethod(a.Method):
		return fmt.Errorf("unknown method %q (a port or port.Method of instances, storage, objects, bus, store, feed)", a.Method)
	}
	return nil
}

// outagePorts are the ports an outage or lost response can name.
var outagePorts = []string{"instances", "storage", "objects", "bus", "store", "feed", "leader"}

func validMethod(m string) bool {
	port, method, _ := strings.Cut(m, ".")
	if !slices.Contains(outagePorts, port) {
		return false
	}
	for _, c := range method {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return len(method) <= 64
}

// Plan is the explicit list of timed actions of a run: the faults (and, for
// scripted runs, the user actions) beside the ordinary workload, which
// follows from the seed. A replay file stores it, so a run can be repeated
// or shrunk without regenerating it.
type Plan struct {
	// Faults lists the fault kinds this run enabled (swarm testing: a seed
	// turns each candidate kind on or off).
	Faults []Kind `json:"faults"`
	// Actions, ordered by At.
	Actions []Action `json:"actions"`
}

// Len is the number of actions.
func (p *Plan) Len() int {
	if p == nil {
		return 0
	}
	return len(p.Actions)
}

// Clone returns a copy sharing nothing with p.
func (p *Plan) Clone() *Plan {
	if p == nil {
		return nil
	}
	return &Plan{Faults: slices.Clone(p.Faults), Actions: slices.Clone(p.Actions)}
}

// Source is the randomness a plan is drawn from: a seeded generator for the
// simulator, rapid's draws (which shrink) for property tests. IntN returns
// a value in [0, n); label names the draw for rapid's reports.
type Source interface {
	IntN(label string, n int) int
}

// randSource is a Source over a seeded generator.
type randSource struct{ r *rand.Rand }

func (s randSource) IntN(_ string, n int) int { return s.r.IntN(n) }

// NewSource returns a seeded Source.
func NewSource(seed uint64) Source { return randSource{newRand(seed)} }

// pick draws one element of options; earlier options are the simpler ones
// (rapid shrinks draws toward 0).
func pick[T any](src Source, label string, options []T) T {
	return options[src.IntN(label, len(options))]
}

// outageTarget is a method (or a whole port) an outage or lost response can
// hit, with the error codes it may fail with (SPEC 1.5). The first code is
// the plainest.
type outageTarget struct {
	method string
	codes  []contracts.ErrorCode
}

var outageTargets = []outageTarget{
	{"instances.Start", []contracts.ErrorCode{contracts.CodeContainerStartFailed, contracts.CodeImagePullFailed, contracts.CodeHealthCheckFailed, contracts.CodeDockerUnreachable, contracts.CodeContainerCreate}},
	{"storage.Archive", []contracts.ErrorCode{contracts.CodeS3AccessError, contracts.CodeK8sAPIError, contracts.CodeDiskFull}},
	{"storage.Restore", []contracts.ErrorCode{contracts.CodeS3AccessError, contracts.CodeTarExtractFailed, contracts.CodeK8sAPIError, contracts.CodeDiskFull}},
	{"storage.Provision", []contracts.ErrorCode{contracts.CodeVolumeCreateFailed, contracts.CodeK8sAPIError, contracts.CodeDiskFull}},
	{"instances.Delete", []contracts.ErrorCode{contracts.CodeDockerUnreachable}},
	{"storage.DeleteVolume", []contracts.ErrorCode{contracts.CodeK8sAPIError}},
	{"instances", []contracts.ErrorCode{contracts.CodeDockerUnreachable}},
	{"storage", []contracts.ErrorCode{contracts.CodeK8sAPIError}},
	{"objects", []contracts.ErrorCode{contracts.CodeS3AccessError}},
	{"bus", []contracts.ErrorCode{""}},
	// Observation only: the HealthMonitor's listings fail while the
	// actuator calls succeed, so operations cannot be seen complete and
	// run into their timeouts (SPEC 4.2.3).
	{"instances.List", []contracts.ErrorCode{contracts.CodeDockerUnreachable}},
	{"storage.ListVolumes", []contracts.ErrorCode{contracts.CodeK8sAPIError}},
}

// lostResponseTargets are the world-changing calls whose response can be
// lost after the effect, with transient codes.
var lostResponseTargets = []outageTarget{
	{"storage.Archive", []contracts.ErrorCode{contracts.CodeS3AccessError, contracts.CodeK8sAPIError}},
	{"instances.Start", []contracts.ErrorCode{contracts.CodeDockerUnreachable, contracts.CodeHealthCheckFailed}},
	{"storage.Restore", []contracts.ErrorCode{contracts.CodeS3AccessError, contracts.CodeK8sAPIError}},
	{"storage.Provision", []contracts.ErrorCode{contracts.CodeK8sAPIError}},
	{"storage.DeleteVolume", []contracts.ErrorCode{contracts.CodeK8sAPIError}},
	{"instances.Delete", []contracts.ErrorCode{contracts.CodeDockerUnreachable}},
}

// noAnswerTargets are the provider methods (and ports) whose API can
// fail to answer (FaultNoAnswer): first the whole endpoint (a daemon
// restarting, a network partition: what a transport error usually is),
// then every actuator call and the listings. noAnswerAfter are the
// world-changing ones, whose answer alone can be lost after the effect.
// noAnswerWindows: how long the endpoint stays silent, from a daemon's
// restart to a partition's hours.
var (
	noAnswerTargets = []string{"instances", "storage", "objects", "instances.Start", "storage.Archive", "storage.Restore",
		"storage.Provision", "instances.Delete", "storage.DeleteVolume", "instances.List", "storage.ListVolumes"}
	noAnswerWindows = []time.Duration{15 * time.Minute, 2 * time.Minute, 45 * time.Minute, 2 * time.Hour}
	noAnswerAfter   = []string{"instances.Start", "storage.Archive", "storage.Restore", "storage.Provision",
		"instances.Delete", "storage.DeleteVolume"}
	// holdLengths: how long the other holder keeps the volume
	// (FaultHoldVolume). Each is shorter than the two retry spacings of
	// SPEC 4.2.4 (60 s), so the third attempt at the latest finds the
	// volume free: VOLUME_IN_USE is met, and then outlived.
	holdLengths = []time.Duration{15 * time.Second, 45 * time.Second}
)

// dbTargets are the store methods a DB error can fail (the whole port
// first, then each method, leader-lock calls included); dbLostTargets the
// ones whose answer can be lost after the commit. A DB error has no SPEC
// 1.5 code: it is a plain unavailability.
var (
	dbTargets = []string{"store", "store.Update", "store.List", "store.Get", "store.MarkObserved",
		"store.UpdateMany", "store.Insert", "store.TryAcquire", "store.Check", "store.Release"}
	dbLostTargets = []string{"store", "store.Update", "store.MarkObserved", "store.UpdateMany",
		"store.Insert", "store.List", "store.Get"}
	// dbWindows are shorter than provider windows: a DB blip or a
	// failover lasts seconds to minutes (docs/decisions/simulator-workspace.md, DR116).
	dbWindows = []time.Duration{30 * time.Second, 2 * time.Minute, 5 * time.Minute}
	// longWindows are the outages and DB errors that last as long as real
	// ones do (issue 22): hours, past the GC's orphan grace of 2 h and
	// over several hourly GC passes, every operation's timeout and many
	// HealthMonitor passes. One outage or DB error in longOdds is long.
	longWindows = []time.Duration{2*time.Hour + 30*time.Minute, 4 * time.Hour, 7 * time.Hour}
	longOdds    = 5
	// lockMethods are the targets that take the leader lock's calls down
	// (its own, or the whole store port): they stay short. A lock check
	// failing for hours while acquisition succeeds makes the leader give
	// up and take the lock back at every step (100 ms), millions of
	// events for one situation minutes already show; and a DB that
	// refuses every call for hours while the leader's session keeps its
	// lock is no outage a real PostgreSQL has (its sessions end: that is
	// kill-session and depose). Long DB errors hit the data calls.
	lockMethods = []string{"store", "store.TryAcquire", "store.Check", "store.Release"}
)

// The menus draws choose from, simplest first.
var (
	crashCalls    = []int{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233}
	restartDelays = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute}
	deposeWrites  = []int{1, 2, 3, 4, 6, 10}
	deposeWheres  = []string{"at-write", "after-write", "at-read", "at-resume"}
	windows       = []time.Duration{2 * time.Minute, 30 * time.Second, 5 * time.Minute, 15 * time.Minute, 45 * time.Minute}
	percents      = []int{100, 50, 20}
	// startDelays: the last two land a container's start at STARTING's
	// 5 min timeout (SPEC 4.2.3), so that the HealthMonitor's pass that
	// first sees it running falls in the step that first finds the
	// operation past its timeout ("Completion is checked first"):
	// exactly at it, for a reconciler that times out at 5 min, and just
	// after it, for one that waits until the time exceeds it.
	startDelays = []time.Duration{6 * time.Minute, 20 * time.Second, 90 * time.Second, 40 * time.Minute, 5 * time.Minute, 5*time.Minute + time.Second}
	// breakChanges: a feed break now (0), or armed to strike right after
	// the next change or the third from now.
	breakChanges   = []int{0, 1, 3}
	delayWindows   = []time.Duration{20 * time.Minute, 5 * time.Minute, 2 * time.Hour}
	dropCounts     = []int{1, 3, 10, 50}
	jobCrashes     = []int{1, 2, 3}
	raceSizes      = []int{2, 3, 4}
	desiredStates  = []contracts.DesiredState{contracts.DesiredRunning, contracts.DesiredStandby, contracts.DesiredPending}
	advances       = []time.Duration{30 * time.Second, 2 * time.Second, 5 * time.Minute, 30 * time.Minute, 3 * time.Hour}
	scriptedUsers  = 2
	maxPickTargets = 64
)

// DrawAction draws the parameters of one action of kind k from src (At is
// left zero).
func DrawAction(src Source, k Kind) Action {
	a := Action{Kind: k}
	switch k {
	case FaultCrash:
		a.Pick = src.IntN("crash target", 2)
		a.N = pick(src, "crash at call", crashCalls)
		a.For = pick(src, "restart after", restartDelays)
	case FaultDepose:
		a.N = pick(src, "depose at write", deposeWrites)
		a.Pick = src.IntN("depose where", len(deposeWheres))
	case FaultOutage:
		t := pick(src, "outage method", outageTargets)
		a.Method = t.method
		a.Code = pick(src, "outage code", t.codes)
		a.For = pick(src, "outage length", windows)
		a.Percent = pick(src, "outage percent", percents)
		a.For = longer(src, "outage", a.For)
	case FaultLostResponse:
		t := pick(src, "lost-response method", lostResponseTargets)
		a.Method = t.method
		a.Code = pick(src, "lost-response code", t.codes)
		a.For = pick(src, "lost-response length", windows)
		a.Percent = pick(src, "lost-response percent", percents)
	case FaultDBError:
		a.Method = pick(src, "db-error method", dbTargets)
		a.For = pick(src, "db-error length", dbWindows)
		a.Percent = pick(src, "db-error percent", percents)
		if d := a.For; !slices.Contains(lockMethods, a.Method) {
			if a.For = longer(src, "db-error", d); a.For != d {
				// A long DB error fails some calls, not all, for at
				// most 4 h: every write refused for 7 h keeps each
				// workspace's claim failing every 2 s (a million
				// events and 3 GB of history in one seed).
				a.For, a.Percent = min(a.For, 4*time.Hour), min(a.Percent, 50)
			}
		}
	case FaultDBLostResponse:
		a.Method = pick(src, "db-lost-response method", dbLostTargets)
		a.For = pick(src, "db-lost-response length", dbWindows)
		a.Percent = pick(src, "db-lost-response percent", percents)
	case FaultNoAnswer:
		a.Method = pick(src, "no-answer method", noAnswerTargets)
		a.For = pick(src, "no-answer length", noAnswerWindows)
		a.Percent = pick(src, "no-answer percent", percents)
		if slices.Contains(noAnswerAfter, a.Method) {
			a.N = src.IntN("no-answer after effect", 2)
		}
	case FaultHoldVolume:
		a.Delay = pick(src, "hold length", holdLengths)
	case FaultDelayStart:
		a.Delay = pick(src, "start delay", startDelays)
		a.For = pick(src, "delay window", delayWindows)
	case FaultKillContainer, FaultRemoveContainer, FaultLoseVolume, FaultRemoveVolume:
		a.Pick = src.IntN("target", maxPickTargets)
	case FaultCorruptObject, FaultRemoveObject:
		a.Pick = src.IntN("target", maxPickTargets)
		a.Meta = src.IntN("meta", 3) == 2
	case FaultDropMessages, FaultDropFeed:
		a.N = pick(src, "count", dropCounts)
	case FaultBreakFeed:
		a.N = pick(src, "after changes", breakChanges)
	case FaultStorageJobCrash:
		a.N = pick(src, "jobs", jobCrashes)
	case FaultAPIRace:
		a.Pick = src.IntN("target", maxPickTargets)
		a.N = pick(src, "requests", raceSizes)
	case UserCreate:
		a.N = 1 + src.IntN("user", scriptedUsers)
		a.Desired = pick(src, "desired", desiredStates)
	case UserDesire:
		a.Pick = src.IntN("workspace", maxPickTargets)
		a.Desired = pick(src, "desired", desiredStates)
	case UserConnect, UserDisconnect, UserWrite, UserDelete, AdminRecover:
		a.Pick = src.IntN("workspace", maxPickTargets)
	case Advance:
		a.For = pick(src, "advance", advances)
	}
	return a
}

// longer draws whether a window of kind (drawn as d) is one of the long
// ones, and its length if so; the last value of the coin is the long one,
// so that rapid shrinks toward the short window.
func longer(src Source, kind string, d time.Duration) time.Duration {
	if src.IntN(kind+" long", longOdds) == longOdds-1 {
		return pick(src, kind+" long length", longWindows)
	}
	return d
}

// DrawKind draws one of kinds from src (the earlier, the likelier to be
// what rapid shrinks to).
func DrawKind(src Source, label string, kinds []Kind) Kind {
	return kinds[src.IntN(label, len(kinds))]
}

// FaultMix chooses a run's faults.
type FaultMix struct {
	// Kinds are the candidate fault kinds (none: no faults).
	Kinds []Kind
	// Swarm turns each candidate on with probability 1/2 per seed (swarm
	// testing: fewer kinds per run let rarer interactions surface); false
	// enables every candidate.
	Swarm bool
	// Rate scales every kind's frequency (0: 1).
	Rate float64
	// steered are the kinds coverage steering forced on for this seed
	// (Config.Steering): on whatever the swarm's coin says, and
	// steerBoost times as frequent.
	steered []Kind
}

// DefaultFaults is the default mix: every fault kind, swarm style.
func DefaultFaults() FaultMix { return FaultMix{Kinds: FaultKinds(), Swarm: true} }

// NoFaults is the empty mix.
func NoFaults() FaultMix { return FaultMix{} }

// faultsPerDay is each kind's mean frequency when enabled.
var faultsPerDay = map[Kind]float64{
	FaultCrash:           8,
	FaultDepose:          6,
	FaultKillSession:     4,
	FaultOutage:          14,
	FaultLostResponse:    8,
	FaultDelayStart:      4,
	FaultKillContainer:   10,
	FaultRemoveContainer: 3,
	FaultLoseVolume:      4,
	FaultCorruptObject:   4,
	FaultRemoveObject:    3,
	FaultDropMessages:    4,
	FaultFlushRedis:      2,
	FaultDropFeed:        4,
	FaultBreakFeed:       3,
	FaultDBError:         6,
	FaultDBLostResponse:  4,
	FaultRemoveVolume:    4,
	FaultStorageJobCrash: 4,
	FaultAPIRace:         12,
	FaultNoAnswer:        10,
	FaultHoldVolume:      5,
}

// MaxFaultRate bounds a mix's rate: beyond it a day of faults is faults
// and nothing else.
const MaxFaultRate = 100

// ParseFaultMix reads a mix: "none", "swarm" (every kind, swarm style: the
// default), "all" (every kind, every seed), or a comma-separated list of
// kinds (each on in every seed), optionally followed by "@rate" ("all@2",
// a finite rate in (0, MaxFaultRate]). Errors wrap engine.ErrBadInput.
func ParseFaultMix(s string) (FaultMix, error) {
	rate := 0.0
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		r, err := strconv.ParseFloat(s[i+1:], 64)
		if err != nil || !(r > 0 && r <= MaxFaultRate) {
			return FaultMix{}, fmt.Errorf("%w: fault rate %q: want a number in (0, %d]", engine.ErrBadInput, s[i+1:], MaxFaultRate)
		}
		rate = r
		s = s[:i]
	}
	var m FaultMix
	switch s {
	case "none", "":
		return NoFaults(), nil
	case "swarm", "default":
		m = DefaultFaults()
	case "all":
		m = FaultMix{Kinds: FaultKinds()}
	default:
		for _, part := range strings.Split(s, ",") {
			k := Kind(strings.TrimSpace(part))
			if !k.IsFault() {
				return FaultMix{}, fmt.Errorf("%w: unknown fault kind %q (known: %s)", engine.ErrBadInput, k, kindList(append(FaultKinds(), OptInFaultKinds()...)))
			}
			if !slices.Contains(m.Kinds, k) {
				m.Kinds = append(m.Kinds, k)
			}
		}
	}
	m.Rate = rate
	return m, nil
}

func kindList(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// String renders m as ParseFaultMix reads it.
func (m FaultMix) String() string {
	var s string
	switch {
	case len(m.Kinds) == 0:
		return "none"
	case slices.Equal(m.Kinds, FaultKinds()) && m.Swarm:
		s = "swarm"
	case slices.Equal(m.Kinds, FaultKinds()):
		s = "all"
	default:
		s = kindList(m.Kinds)
		s = strings.ReplaceAll(s, ", ", ",")
	}
	if m.Rate > 0 && m.Rate != 1 {
		s += fmt.Sprintf("@%g", m.Rate)
	}
	return s
}

// GeneratePlan draws the fault plan of a run of length d from seed: which
// kinds are on (swarm), then for each kind a Poisson number of faults at
// uniform times, each with its drawn parameters.
func GeneratePlan(seed uint64, m FaultMix, d time.Duration) *Plan {
	p := &Plan{Faults: []Kind{}, Actions: []Action{}}
	if len(m.Kinds) == 0 || d <= 0 {
		return p
	}
	src := NewSource(SubSeed(seed, streamFaults))
	rate := m.Rate
	if rate <= 0 {
		rate = 1
	}
	// The kinds of laterFaultKinds draw from their own stream, after the
	// others (DR496): the first stream's draws stay where they were.
	later := NewSource(SubSeed(seed, streamLaterFaults))
	for i, src := range []Source{src, later} {
		drawsLater := i == 1
		var on []Kind
		for _, k := range append(FaultKinds(), OptInFaultKinds()...) { // stable order, whatever m lists
			if !slices.Contains(m.Kinds, k) || slices.Contains(laterFaultKinds, k) != drawsLater {
				continue
			}
			// The coin is drawn for a steered kind too: the draws that
			// follow stay where they were.
			if m.Swarm && src.IntN("swarm "+string(k), 2) == 0 && !slices.Contains(m.steered, k) {
				continue
			}
			on = append(on, k)
		}
		p.Faults = append(p.Faults, on...)
		for _, k := range on {
			mean := faultsPerDay[k] * rate * d.Hours() / 24
			if slices.Contains(m.steered, k) {
				mean *= steerBoost
			}
			n := poisson(src, mean)
			for range n {
				a := DrawAction(src, k)
				a.At = time.Duration(src.IntN("at", int(d/time.Second))) * time.Second
				p.Actions = append(p.Actions, a)
			}
		}
	}
	sort.SliceStable(p.Actions, func(i, j int) bool { return p.Actions[i].At < p.Actions[j].At })
	return p
}

// poisson draws a Poisson count of the given mean (Knuth's method; the
// means here are small, and the mean is capped so that the method's
// product never underflows).
func poisson(src Source, mean float64) int {
	if !(mean > 0) {
		return 0
	}
	mean = min(mean, 500)
	const scale = 1 << 30
	limit, prod, n := math.Exp(-mean), 1.0, 0
	for {
		prod *= (float64(src.IntN("poisson", scale)) + 0.5) / scale
		if prod <= limit {
			return n
		}
		n++
	}
}
