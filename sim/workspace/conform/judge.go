package conform

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// The evidence a black-box run cannot have, and the checkers that need
// it. A checker listed here is reported "not judgeable black-box" with
// the reason, never as a pass.
const (
	whyListings = "needs the HealthMonitor's container and volume listings as the implementation received them (instances.List, storage.ListVolumes) and its observed_at stamps; a black-box run sees the engine, not what each listing answered, and the audit trail does not record observed_at-only stamps"
	whyStorage  = "needs the implementation's storage and object calls (archive, restore, object put/delete/list) with their callers and results; a black-box run sees the bucket and the engine's events (a storage job's container, not whether it archived or restored, uploaded or skipped, nor its answer), not which instance called what, or what a call returned"
	whyCalls    = "needs every actuator call with the calling instance, its epoch, and its error or lost answer; a black-box run sees their effects in the engine's events, which name no client (the Docker API has no caller identity), not the calls"
	whyBus      = "needs the bus calls (publishes on workspace:{id}, the activity keys ws_conn:/idle_timer:) with the instance that made them; Redis does not say which client published"
	whyExact    = "needs the exact writer of every write (SPEC 1.6: component, instance, epoch, on_behalf in the transaction-local settings), which this implementation does not set; writers were only inferred"
	whyChecks   = "needs every check of the leader lock with its instance and epoch, and every world-changing call beside them; the audit trail records acquisitions and releases, not checks, and the engine's events name no client"
	whyFailures = "needs the writing instance's failed writes and lost answers (a completion whose last-access stamp failed in a step excuses the Timeout entry of that step); the audit trail records only the writes that committed"
	whyRequests = "needs each request beside the rows as they stood while it ran, and the API's own publishes: a request over HTTP spans real time in which other writes land, and Redis does not say which client published"
	whySteps    = "needs the instants of the implementation's steps on virtual time (SPEC 3: a step takes no time there, so a step is the events of one instant); a real runtime's step spans real time, which the audit trail does not delimit"
	whyFailover = "needs when the leader's session ended: on a real PostgreSQL it ends at a TCP timeout the audit trail does not record, so the failover time cannot be told from the time the lock was free"
	whyMismatch = "its situation is the HealthMonitor's container-without-volume Mismatch, and a real Docker engine never leaves a container without its volume: it refuses to remove a volume a container holds (SPEC 5.2, VOLUME_IN_USE), so a black-box run has nothing to judge"
)

// notJudgeable maps each checker that no black-box run can judge to why;
// the checkers whose bounds assume steps that take no time
// (wsjudge.StepTimed) are not judgeable either, for the reason they give.
var notJudgeable = map[string]string{
	"c1-observation-truth":  whyListings,
	"observed-at":           whyListings,
	"c6-container-volume":   whyListings,
	"adaptive-periods":      whyListings,
	"c7-archive-idempotent": whyStorage,
	"restore-marker":        whyStorage,
	"c9-gc-protection":      whyStorage,
	"gc-meta-with-archive":  whyStorage,
	"gc-deletes-orphans":    whyStorage,
	"gc-deletes-when-due":   whyStorage,
	"c10-fencing":           whyCalls,
	"lease-recheck":         whyChecks,
	"invoke-once":           whyCalls,
	"retry-policy":          whyCalls,
	"timeouts":              whyCalls,
	"error-entry":           whyCalls,
	"error-reason":          whyCalls,
	"error-reason-no-code":  whyCalls,
	"error-reason-in-use":   whyCalls,
	"error-context-code":    whyCalls,
	"timeout-entry":         whyFailures,
	"api-answers":           whyRequests,
	"ttl":                   whyBus,
	"events":                whyBus,
	"monitor-trigger":       whyBus,
	"c10-holder-acts":       whySteps,
	"reconcile-tick-rows":   whySteps,
	"trigger-pass":          whyBus,
	"recovery-trigger":      whyBus,
	"gives-up-at-once":      whyChecks,
	"step-bound":            whyChecks,
	"c10-takeover":          whyFailover,
	"ttl-period":            whyBus,
	"release-cause":         whyChecks,
	"claim-executes":        whySteps,
	"reconcile-period":      whySteps,
	"component-order":       whySteps,
	"step-check":            whyChecks,
	"gc-period":             whyStorage,
	"pass-listing":          whyListings,
	"drops-listener":        whyBus,
	"skips-workspace":       whySteps,
	"reconcile-one-step":    whySteps,
	"skips-tick":            whyChecks,
	"gc-timer-no-expiry":    whyBus,
	"health-rules":          whyListings,
	"health-mismatch-info":  whyMismatch,
	"reconcile-id-order":    whySteps,
	"first-step-components": whySteps,
	"first-step-reconciler": whySteps,
	"first-step-ttl":        whySteps,
	"gc-hourly":             whyStorage,
	"gives-up-releases":     whyChecks,
}

// judgeableInferred are the checkers that stay judgeable when writers are
// only inferred: they read rows, not writers.
var judgeableInferred = []string{"c12-convergence", "c12-durability", "limits", "last-access-forward", "c8-ordering"}

// engineJudged are the checkers judged on the engine's events (engine.go):
// they need no caller, only what took effect on the engine and when,
// ordered against the audit trail. Without those events (the engine's
// clock not PostgreSQL's, a broken event stream) they are not judgeable.
var engineJudged = []string{"c8-ordering"}

// Detection is how long the system took to react to one fault.
type Detection struct {
	Fault string `json:"fault"`
	// At is when it struck, from the start of the fault phase.
	At time.Duration `json:"at"`
	// After is how long until the system's first reaction the evidence
	// shows (a new leader; a HealthMonitor write on the workspace); 0
	// when none was seen.
	After time.Duration `json:"after"`
	What  string        `json:"what"`
}

// Result is a judged conformance run.
type Result struct {
	System      string      `json:"system"`
	Config      Config      `json:"config"`
	Replay      string      `json:"replay,omitempty"`
	Attribution Attribution `json:"attribution"`
	// LeaderInferred: the leadership was read from pg_locks (the
	// implementation keeps no system_locks row).
	LeaderInferred bool `json:"leader_inferred"`
	Instances      int  `json:"instances"`
	Restarts       int  `json:"restarts"`
	// Faults counts the faults injected, by kind.
	Faults   map[string]int `json:"faults"`
	APICalls int            `json:"api_calls"`
	// Statuses counts the API's answers by status.
	Statuses   map[int]int `json:"statuses"`
	Workspaces int         `json:"workspaces"`
	// Converged maps each workspace at rest at the end to how long after
	// the quiet phase began it came to rest.
	Converged  map[string]time.Duration `json:"converged"`
	Detections []Detection              `json:"detections"`
	Report     *wsjudge.Report          `json:"-"`
	// Claim is the verdict against the judged checkers' obligations;
	// Unreached says why each checker the configuration cannot exercise
	// is on the default allow-list.
	Claim     *judge.Claim      `json:"claim"`
	Unreached map[string]string `json:"unreached,omitempty"`
	// Judged are the checkers run on the evidence; NotJudgeable the
	// others, with why.
	Judged       []string          `json:"judged"`
	NotJudgeable map[string]string `json:"not_judgeable"`
	// EngineEvents counts the engine's events of the run's workspaces in
	// the history (EngineOwn: those of the run's own faults, left out).
	EngineEvents int `json:"engine_events"`
	EngineOwn    int `json:"engine_own"`
	// UserData is what the users wrote and read back through the
	// workspace agent, and the bytes read at the end.
	UserData UserData `json:"user_data"`
	// Problems are the run's own findings no checker covers (an API
	// answer to a bad input, an instance that would not start).
	Problems []string `json:"problems"`
	// Skipped lists replayed actions with no real counterpart.
	Skipped []string `json:"skipped,omitempty"`
	// Evidence holds the timeline around each violation.
	Evidence       [][]string            `json:"-"`
	Events         []history.Event       `json:"-"`
	Start, End     time.Time             `json:"-"`
	Wall           time.Duration         `json:"wall"`
	FaultPhaseWall time.Duration         `json:"fault_phase_wall"`
	QuietWall      time.Duration         `json:"quiet_wall"`
	Dir            string                `json:"dir"`
	Rows           []contracts.Workspace `json:"-"`
}

// UserData counts the evidence of c12-durability.
type UserData struct {
	// Writes were acknowledged by the agent; Unanswered were sent and
	// never acknowledged (either content may be found).
	Writes     int `json:"writes"`
	Unanswered int `json:"unanswered"`
	// Verified counts the read-backs after being away; Differed those
	// that did not find what was written.
	Verified int `json:"verified"`
	Differed int `json:"differed"`
	// Owed counts the workspaces whose user is owed data at the end;
	// Volumes and Archives how many volumes and archives were read.
	Owed     int `json:"owed"`
	Volumes  int `json:"volumes"`
	Archives int `json:"archives"`
}

func (u UserData) String() string {
	return fmt.Sprintf("%d writes acknowledged through the agent (%d unanswered), %d read-backs (%d differed); at the end %d workspaces owed data, %d volumes and %d archives read",
		u.Writes, u.Unanswered, u.Verified, u.Differed, u.Owed, u.Volumes, u.Archives)
}

// Failed reports whether a checker found a violation or the run found a
// problem.
func (r *Result) Failed() bool { return r.Report.Failed() || len(r.Problems) > 0 }

// MinExercised is how often each judged checker's obligation must arise
// in a black-box run: once (one run, no seeds to add).
const MinExercised = 1

// Unmet lists the judged checkers whose situation never arose and that
// the allow-list does not name: a run with one is not a pass (the
// checkers not judgeable black-box are not among them: they are
// declared out of reach, and listed apart).
func (r *Result) Unmet() []string {
	if r.Claim == nil {
		return nil
	}
	return r.Claim.Unmet()
}

// Passed: nothing violated, no problem, and every judged checker's
// obligation met or allowed.
func (r *Result) Passed() bool { return !r.Failed() && len(r.Unmet()) == 0 }

// CheckAllow reports the first name of an allow-list that is not a
// checker's.
func CheckAllow(allow []string) error {
	return judge.Rule{Allow: allow}.Check(wsjudge.Names())
}

// claim judges the report against the obligations of the judged
// checkers, like the simulator's runs (judge.Tally.Claim).
func claim(rep *wsjudge.Report, judged, allow []string) *judge.Claim {
	t := judge.NewTally(judged)
	t.AddSeed(1, rep)
	var obs []judge.Obligation
	for _, o := range wsjudge.Obligations() {
		if slices.Contains(judged, o.Checker) {
			obs = append(obs, o)
		}
	}
	return t.Claim(obs, judge.Rule{Min: MinExercised, Allow: allow})
}

// judge runs every judgeable checker, unchanged, on the evidence.
func (r *run) judge(ev *evidence, final *wsjudge.Final, conv map[string]time.Duration, faults []Fault, end time.Time) *Result {
	res := &Result{
		System: r.opts.Command[0], Config: r.cfg, Replay: r.opts.Replay, Attribution: ev.attribution,
		LeaderInferred: ev.leaderInferred, Instances: len(r.instances), Faults: map[string]int{},
		Statuses: map[int]int{}, Workspaces: len(ev.rows), Converged: conv, NotJudgeable: map[string]string{},
		Skipped: r.opts.Skipped, Events: ev.events, Start: r.origin, End: r.vt(end), Dir: r.opts.Dir, Rows: ev.rows,
	}
	r.mu.Lock()
	for k, n := range r.faultCount {
		res.Faults[string(k)] = n
	}
	for s, n := range r.statuses {
		res.Statuses[s] = n
	}
	res.APICalls = r.apiCalls
	res.EngineEvents, res.EngineOwn = ev.engineEvents, r.engineOwn
	res.Problems = append(res.Problems, r.problems...)
	r.mu.Unlock()
	for _, in := range r.instances {
		res.Restarts += in.restarts
	}
	var checkers []wsjudge.Checker
	for _, c := range wsjudge.All() {
		name := c.Name()
		if why, ok := notJudgeable[name]; ok {
			res.NotJudgeable[name] = why
			continue
		}
		if ev.engineWhy != "" && slices.Contains(engineJudged, name) {
			res.NotJudgeable[name] = "needs the engine's events ordered against the audit trail: " + ev.engineWhy
			continue
		}
		if why, ok := wsjudge.InstantStepsOnly(c); ok {
			res.NotJudgeable[name] = "needs the writer's steps: " + why
			continue
		}
		if ev.attribution == AttributionInferred && !slices.Contains(judgeableInferred, name) {
			res.NotJudgeable[name] = whyExact
			continue
		}
		checkers = append(checkers, c)
		res.Judged = append(res.Judged, name)
	}
	limits := contracts.Limits{MaxRunningPerUser: r.cfg.MaxRunningPerUser, MaxRunningGlobal: r.cfg.MaxRunningGlobal}
	for _, e := range ev.events {
		switch {
		case e.Kind != history.KindUser:
		case e.Method == "user.write" && e.Err == "":
			res.UserData.Writes++
		case e.Method == "user.write":
			res.UserData.Unanswered++
		case e.Method == wsjudge.UserVerify:
			res.UserData.Verified++
			if e.Err != "" {
				res.UserData.Differed++
			}
		}
	}
	for _, want := range final.Expected {
		if len(want) > 0 {
			res.UserData.Owed++
		}
	}
	res.UserData.Volumes = len(final.Volumes)
	archives := final.Archives
	final.Archives = func(key string) (map[string][]byte, error) {
		res.UserData.Archives++
		return archives(key)
	}
	final.End, final.Rows = res.End, ev.rows
	res.Report = wsjudge.Check(wsjudge.Input{Events: ev.events, Final: final, Limits: limits}, checkers...)
	res.Unreached = r.cfg.Unreached()
	allow := r.opts.Allow
	if allow == nil {
		for n := range res.Unreached {
			if slices.Contains(res.Judged, n) {
				allow = append(allow, n)
			}
		}
		sort.Strings(allow)
	}
	res.Claim = claim(res.Report, res.Judged, allow)
	for i, v := range res.Report.Violations {
		if i >= 5 {
			break
		}
		res.Evidence = append(res.Evidence, around(ev.events, v.Evidence, r.origin))
	}
	return res
}

// around is the timeline around a violation's evidence: each evidence
// event with the three events before it.
func around(events []history.Event, seqs []int64, start time.Time) []string {
	keep := map[int]bool{}
	for _, s := range seqs {
		for i := int(s) - 4; i < int(s); i++ {
			if i >= 0 && i < len(events) {
				keep[i] = true
			}
		}
	}
	var idx []int
	for i := range keep {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var sel []history.Event
	for _, i := range idx {
		sel = append(sel, events[i])
	}
	return history.Timeline(sel, start)
}

// detections measures, for each fault, the first reaction the evidence
// shows: for a fault aimed at an instance, the lock changing hands; for
// a container or volume fault, the next HealthMonitor write on the
// workspace. The figures are wall time (the evidence's times, on the
// implementation's clock, divided by K).
func (r *run) detections(ev *evidence, faults []Fault, faultStart time.Time) []Detection {
	wall := func(d time.Duration) time.Duration { return time.Duration(float64(d) / r.cfg.TimeScale) }
	var out []Detection
	for _, e := range ev.events {
		if e.Kind != history.KindFault || e.Method == wsjudge.FQuiet {
			continue
		}
		d := Detection{Fault: e.Method + " " + e.Args, At: wall(e.At.Sub(r.vt(faultStart)))}
		for _, e2 := range ev.events {
			if !e2.At.After(e.At) {
				continue
			}
			switch {
			case e.Instance != "" && e2.Kind == history.KindLeader && e2.Method == "acquire":
				d.After, d.What = wall(e2.At.Sub(e.At)), fmt.Sprintf("leader lock taken by %s (epoch %d)", e2.Instance, e2.Epoch)
			case e.Workspace != "" && e2.Workspace == e.Workspace && e2.Kind == history.KindWrite && e2.Component == contracts.CompHealthMonitor:
				d.After, d.What = wall(e2.At.Sub(e.At)), "observed by the HealthMonitor"
			}
			if d.After > 0 {
				break
			}
		}
		if d.After == 0 {
			d.What = "no reaction in the evidence"
		}
		out = append(out, d)
	}
	return out
}

func (d Detection) String() string {
	if d.After == 0 {
		return fmt.Sprintf("%s at +%s: %s", d.Fault, d.At.Round(time.Millisecond), d.What)
	}
	return fmt.Sprintf("%s at +%s: %s after %s", d.Fault, d.At.Round(time.Millisecond), d.What, d.After.Round(time.Millisecond))
}
