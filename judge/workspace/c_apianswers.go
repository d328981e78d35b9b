package workspace

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// apiAnswers: SPEC 4.3, what the API answers. api-rules and limits judge
// the writes the API lets through; this checker judges the requests it
// turns away, and what a recovery owes after its write:
//
//   - the state rules: "While operation is not NONE: a desired-state
//     change and DELETE answer 409; name, description, memo and TTL edits
//     are accepted"; "A workspace in ERROR by its error_info (terminal)
//     answers 409 to a desired-state change until it is recovered. DELETE
//     is accepted (with operation NONE)"; "A PATCH to the current
//     desired_state is a 200 no-op, even while an operation runs or the
//     workspace is in ERROR"; and "ERROR is judged here by error_info ...
//     health_status may still read ERROR until the HealthMonitor's next
//     pass". So a 409 answers a desired-state change only while an
//     operation runs or error_info is terminal, a DELETE only while an
//     operation runs, and never an edit or a PATCH to the current
//     desired_state;
//   - "A soft-deleted or DELETED workspace is 404 to GET, PATCH, DELETE",
//     and only such a workspace (or another user's) is: the owner's live
//     workspace is found;
//   - recovery "answers 409 unless health_status is ERROR" and applies
//     while error_info is terminal: a workspace with both is recovered;
//   - the running limits: a 429 says the limit was reached ("current is
//     the number that counted", against "max"), and only a write that
//     makes a workspace desired RUNNING is guarded: a 429 while the
//     owner's and the fleet's workspaces that count (leaving the
//     workspace itself out) are both below their limits, or to a request
//     that asks for no new RUNNING, is a refusal the limits do not make;
//   - recovery "then publishes monitor:trigger with the id": the API
//     instance that applied the recovery publishes the id on
//     monitor:trigger after the write, within the step (NowSlack), unless
//     the write's answer was lost (its writer cannot know it applied).
//
// A refusal is judged on the row as it stood while the request ran: the
// request's reads and its answer fall within APIRequestSpan (under the
// simulator, in one instant), so a request is judged only when no write
// changed its row (for a 429, no write changed which rows count) within
// APIRequestSpan before its answer. A concurrent write, a race the
// request lost, answers 409 whatever the row shows after it ("A condition
// that no longer holds answers 409").
//
// Evidence: the harness's record of each API request (history.KindAPI:
// the method, the fields sent, the answer's status and code); the rows
// replayed from the writes; the administrator's applied writes; the API
// instance's bus.Publish calls and the lost answers aimed at it.
type apiAnswers struct {
	Limits contracts.Limits
	// changed: workspace → when an applied write or insert last changed
	// its row.
	changed map[string]time.Time
	// counts: the rows counting toward the running limits (owner of
	// each), and when the counting set of each owner (and of the fleet)
	// last changed.
	counts       map[string]string
	ownerChanged map[string]time.Time
	fleetChanged time.Time
	// owed: instance → workspace → the recovery owing its trigger.
	owed map[string]map[string]triggerOwed
}

// APIRequestSpan bounds how long before its recorded answer a request's
// reads are taken to fall: one step (SPEC 3's now, NowSlack). Under the
// simulator a request runs within one instant.
const APIRequestSpan = NowSlack

func (*apiAnswers) Name() string     { return "api-answers" }
func (*apiAnswers) Contract() string { return "4.3" }

func (c *apiAnswers) useLimits(l contracts.Limits) { c.Limits = l }

func (c *apiAnswers) init() {
	if c.changed == nil {
		c.changed, c.counts, c.ownerChanged = map[string]time.Time{}, map[string]string{}, map[string]time.Time{}
		c.owed = map[string]map[string]triggerOwed{}
	}
}

// AfterApply notes when each row, and which rows count, last changed.
func (c *apiAnswers) AfterApply(s *State, e *history.Event, _ *Report) {
	c.init()
	id, ok := changedRow(e)
	if !ok {
		return
	}
	c.changed[id] = e.At
	w := s.Row(id)
	owner, was := c.counts[id]
	counts := w != nil && specCountsRunning(w)
	if was != counts {
		if counts {
			owner = w.OwnerUserID
			c.counts[id] = owner
		} else {
			delete(c.counts, id)
		}
		c.ownerChanged[owner], c.fleetChanged = e.At, e.At
	}
}

func (c *apiAnswers) Observe(s *State, e *history.Event, r *Report) {
	c.init()
	c.expire(e.At, r)
	switch {
	case e.Kind == history.KindFault && e.Method == FLostResp && e.Workspace != "":
		delete(c.owed[e.Instance], e.Workspace)
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAdmin:
		if c.owed[e.Instance] == nil {
			c.owed[e.Instance] = map[string]triggerOwed{}
		}
		c.owed[e.Instance][e.Workspace] = triggerOwed{at: e.At, seq: e.Seq}
	case e.Kind == history.KindCall && e.Method == MPublish && e.Args == specMonitorTrigger:
		if _, ok := c.owed[e.Instance][e.Result]; ok {
			r.Exercise()
			delete(c.owed[e.Instance], e.Result)
		}
	case e.Kind == history.KindAPI:
		c.judge(s, e, r)
	}
}

// expire flags the recoveries whose step ended without their trigger.
func (c *apiAnswers) expire(now time.Time, r *Report) {
	insts := make([]string, 0, len(c.owed))
	for inst := range c.owed {
		insts = append(insts, inst)
	}
	sort.Strings(insts)
	for _, inst := range insts {
		owed := c.owed[inst]
		for _, id := range stepOver(owed, now) {
			o := owed[id]
			delete(owed, id)
			r.Exercise()
			r.Flag(id, o.at, fmt.Sprintf("the recovery of %s by %s was not followed by a publish of monitor:trigger (payload %s): a recovery resets the error, then publishes monitor:trigger with the id", id, inst, id), o.seq)
		}
		if len(owed) == 0 {
			delete(c.owed, inst)
		}
	}
}

func (c *apiAnswers) Finish(_ *State, f *Final, r *Report) {
	c.init()
	c.expire(f.End.Add(2*NowSlack), r)
}

// apiRequest is what the harness recorded of a request.
type apiRequest struct {
	user, desired string
	// edits: the request sets a field other than desired_state.
	edits bool
}

func parseAPIArgs(args string) apiRequest {
	var q apiRequest
	for _, f := range strings.Fields(args) {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch {
		case name == "user" || name == "admin":
			q.user = value
		case name == "desired":
			q.desired = value
		case strings.HasPrefix(value, `"`):
			// name, description, memo: quoted, and last.
			q.edits = true
			return q
		default:
			q.edits = true
		}
	}
	return q
}

// judge judges one recorded answer.
func (c *apiAnswers) judge(s *State, e *history.Event, r *Report) {
	status, _, _ := strings.Cut(e.Err, " ")
	q := parseAPIArgs(e.Args)
	if status == "429" {
		c.judgeLimit(s, e, q, r)
		return
	}
	w := s.Row(e.Workspace)
	if w == nil || e.Workspace == "" || e.At.Sub(c.changed[e.Workspace]) <= APIRequestSpan {
		return // no row, or it changed while the request ran
	}
	live := !w.Deleted() && w.ObservedStatus != contracts.ObservedDeleted
	owner := q.user == w.OwnerUserID
	switch e.Method {
	case "api.Get", "api.Patch", "api.Delete":
		if !owner {
			return
		}
		switch {
		case live && status == "404":
			r.Exercise()
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s of its owner's live workspace (observed %s, not soft-deleted) answered %s: only another user's, a soft-deleted or a DELETED workspace is 404", e.Method, w.ObservedStatus, e.Err), e.Seq)
			return
		case !live && e.Err == "":
			r.Exercise()
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s of a soft-deleted or DELETED workspace (observed %s, deleted %t) succeeded: it is 404 to GET, PATCH and DELETE", e.Method, w.ObservedStatus, w.Deleted()), e.Seq)
			return
		case !live:
			return
		}
	}
	switch e.Method {
	case "api.Patch":
		c.judgePatch(w, e, q, status, r)
	case "api.Delete":
		r.Exercise()
		if status == "409" && w.Operation == contracts.OpNone {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("DELETE answered %s with no operation in progress (health %s, error_info %s): DELETE is accepted with operation NONE, in ERROR too",
				e.Err, w.HealthStatus, describeInfo(w.ErrorInfo)), e.Seq)
		}
	case "api.Recover":
		if !live {
			return
		}
		r.Exercise()
		if status == "409" && w.HealthStatus == contracts.HealthError && w.Terminal() {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("recovery answered %s on a workspace in ERROR (health ERROR, error_info %s): it resets a terminal error_info, 409 only unless health is ERROR",
				e.Err, describeInfo(w.ErrorInfo)), e.Seq)
		}
	}
}

func (c *apiAnswers) judgePatch(w *contracts.Workspace, e *history.Event, q apiRequest, status string, r *Report) {
	if status != "" && status != "409" {
		return
	}
	r.Exercise()
	if status != "409" {
		return
	}
	switch {
	case q.desired == string(w.DesiredState):
		r.Flag(e.Workspace, e.At, fmt.Sprintf("PATCH to the current desired_state %s answered %s (operation %s, error_info %s): it is a 200 no-op, even while an operation runs or in ERROR",
			q.desired, e.Err, w.Operation, describeInfo(w.ErrorInfo)), e.Seq)
	case q.desired == "" && q.edits:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("PATCH of name, description, memo or a TTL answered %s (operation %s, error_info %s): these edits are accepted while an operation runs and in ERROR",
			e.Err, w.Operation, describeInfo(w.ErrorInfo)), e.Seq)
	case q.desired != "" && w.Operation == contracts.OpNone && !w.Terminal():
		r.Flag(e.Workspace, e.At, fmt.Sprintf("desired-state change to %s answered %s with no operation in progress and error_info %s (health %s): 409 only while an operation runs or error_info is terminal (ERROR is judged by error_info)",
			q.desired, e.Err, describeInfo(w.ErrorInfo), w.HealthStatus), e.Seq)
	}
}

// judgeLimit judges a 429: the limit it claims was reached.
func (c *apiAnswers) judgeLimit(s *State, e *history.Event, q apiRequest, r *Report) {
	owner, self := q.user, e.Workspace
	switch e.Method {
	case MAPICreate:
		if q.desired != "" && q.desired != string(contracts.DesiredRunning) {
			r.Exercise()
			r.Flag(self, e.At, fmt.Sprintf("POST of a workspace desired %s answered %s: only a write that makes a workspace desired RUNNING is guarded by the running limits", q.desired, e.Err), e.Seq)
			return
		}
		self = ""
	case "api.Patch", "api.Wake":
		w := s.Row(self)
		if w == nil {
			return
		}
		owner = w.OwnerUserID
		if e.Method == "api.Patch" && (q.desired != string(contracts.DesiredRunning) || w.DesiredState == contracts.DesiredRunning) &&
			e.At.Sub(c.changed[self]) > APIRequestSpan {
			r.Exercise()
			r.Flag(self, e.At, fmt.Sprintf("PATCH asking desired %q of a workspace desired %s answered %s: only a change to desired RUNNING is guarded by the running limits", q.desired, w.DesiredState, e.Err), e.Seq)
			return
		}
	default:
		return
	}
	if owner == "" {
		return
	}
	mine, all := 0, 0
	for id, o := range c.counts {
		if id == self {
			continue
		}
		all++
		if o == owner {
			mine++
		}
	}
	l := specLimits(c.Limits)
	r.Exercise()
	perUserSteady := e.At.Sub(c.ownerChanged[owner]) > APIRequestSpan
	fleetSteady := e.At.Sub(c.fleetChanged) > APIRequestSpan
	if perUserSteady && fleetSteady && mine < l.MaxRunningPerUser && all < l.MaxRunningGlobal {
		r.Flag(self, e.At, fmt.Sprintf("%s by %s answered %s with %d of the owner's workspaces (limit %d) and %d of the fleet's (limit %d) counting, the workspace itself left out: a refusal says a limit was reached",
			e.Method, owner, e.Err, mine, l.MaxRunningPerUser, all, l.MaxRunningGlobal), e.Seq)
	}
}
