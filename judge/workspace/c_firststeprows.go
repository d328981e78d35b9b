package workspace

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// firstStepRows: SPEC 3, "Due times": "A leadership begins with every
// component due: the step in which an instance acquires the lock runs all
// five (unless it gives up leadership within that step)", for the two
// components first-step-components cannot see tick (DR561): their ticks
// begin with a read of the rows, which the history records only when it
// fails. They are judged by their effects instead (DR600): a row that, at
// the acquisition instant, owes the component an act whatever else the
// tick does must see that act attempted in the acquisition step.
//
//   - first-step-ttl (SPEC 4.4): a row on which a TTL rule holds at the
//     acquisition instant (specTTL: not soft-deleted, health OK,
//     operation NONE, the rule's desired and observed states, its TTL
//     past, and for the standby rule no ws_conn:{id} above 0 and no live
//     idle_timer:{id}) is owed the TTL Manager's request: a write on
//     behalf of ttl_manager on it, applied, refused by its condition or
//     failed. Not owed on a row whose error_info is terminal (the API
//     service layer answers 409 to a desired-state change before any
//     write, 4.3), nor where the activity keys are not known exactly: a
//     bus call on its keys at that instant, a flush of the bus then, an
//     idle timer expiring at that very instant, a failed read of its keys
//     by the instance.
//   - first-step-reconciler (SPEC 4.2): a row owes the StateReconciler's
//     first tick an act when its first applicable step is one of these,
//     all decided from the row and the leader's own calls: a claim (the
//     operation is NONE and 4.2.1's table gives one the reconciler must
//     claim, TableChoice and optionalClaim as in reconcile-tick-rows) is
//     owed a write setting an operation; a completion or an ERROR entry
//     (owedWrite), a Timeout entry (now − op_started_at past 4.2.3's
//     timeout) or a resume (resumeDue: nothing invoked yet under this
//     leadership; "A leader that sees an operation in progress which it
//     has not itself invoked since it became leader invokes that
//     operation's actuator calls") is owed a write of the reconciler or on
//     its behalf, or an actuator call, on the row.
//
// The acquisition step is the instance's events at the instant of its
// recorded acquisition (DR411). Excused (DR603): the whole step, when it
// ends the lead or is cut short (stepEnds, DR562: a crash, a release, a
// failed lock check, a fenced write, a lost leadership, a fault naming the
// instance, a deposition), or when a read of the instance failed at that
// instant (a failed store call naming no workspace, a failed bus read
// naming no key: the whole tick may be skipped, SPEC 3 "Failures"); a row
// anyone other than the judged component wrote or inserted, or an API
// request or a user's action named, at that instant (the row as the
// component read it is not known); a row a failure of the instance
// concerned (a failed write, call or read on it, a lost answer). Rows are
// taken as they stood at the end of the step (a row nobody wrote then is
// as the step found it), the ones the judged component wrote as they were
// before its first write. Each row owed an act counts once per step: the
// situation (DR600).
type firstStepRows struct {
	base
	ttl bool // first-step-ttl, else first-step-reconciler
	// keys: the activity keys (first-step-ttl).
	keys activityKeys
	// ownFail: instance → workspace → its last failed actuator call
	// (first-step-reconciler: a resume is spaced after it).
	ownFail map[string]map[string]time.Time
	// The instant being read and what happened at it, whoever acted.
	instant time.Time
	// touched: rows written or inserted, or named by an API request or a
	// user's action; keysChanged: workspaces whose activity keys a bus
	// call changed (or tried to); flushed: the bus was flushed.
	touched, keysChanged map[string]bool
	flushed              bool
	cur                  *rowStep
}

// rowStep is an acquisition step being read.
type rowStep struct {
	inst  string
	at    time.Time
	seq   int64
	ended bool
	// readFailed: a read of the instance's failed, naming no workspace.
	readFailed bool
	// failed: rows a failure of the instance concerned; keyFailed:
	// workspaces whose activity keys it failed to read.
	failed, keyFailed map[string]bool
	// acted: rows the judged component acted on in the step; claimed:
	// rows the reconciler tried to claim.
	acted, claimed map[string]bool
	// before: rows the judged component wrote in the step, as they stood
	// before its first write.
	before map[string]contracts.Workspace
}

// own reports whether e is a write of the judged component by the
// instance of the acquisition step.
func (c *firstStepRows) own(st *rowStep, e *history.Event) bool {
	if e.Kind != history.KindWrite || e.Instance != st.inst {
		return false
	}
	if c.ttl {
		return e.Args == onBehalfOf+string(contracts.CompTTLManager) || e.Component == contracts.CompTTLManager
	}
	return reconcilerEvent(e)
}

func (c *firstStepRows) Name() string {
	if c.ttl {
		return "first-step-ttl"
	}
	return "first-step-reconciler"
}

func (c *firstStepRows) Contract() string { return "3" }

func (c *firstStepRows) Observe(s *State, e *history.Event, r *Report) {
	if c.touched == nil {
		c.touched, c.keysChanged = map[string]bool{}, map[string]bool{}
		c.ownFail = map[string]map[string]time.Time{}
		c.keys.init()
	}
	if c.cur != nil && e.At.After(c.cur.at) {
		c.judge(s, r)
	}
	if !e.At.Equal(c.instant) {
		c.instant, c.flushed = e.At, false
		clear(c.touched)
		clear(c.keysChanged)
	}
	if st := c.cur; st != nil && c.own(st, e) {
		if _, ok := st.before[e.Workspace]; !ok {
			if w := s.Row(e.Workspace); w != nil {
				st.before[e.Workspace] = w.Clone()
			}
		}
	} else {
		c.note(s, e)
	}
	if st := c.cur; st != nil {
		c.read(st, e)
	}
	if e.Kind == history.KindLeader && e.Method == "acquire" && e.Instance != "" {
		c.cur = &rowStep{inst: e.Instance, at: e.At, seq: e.Seq, before: map[string]contracts.Workspace{},
			failed: map[string]bool{}, keyFailed: map[string]bool{}, acted: map[string]bool{}, claimed: map[string]bool{}}
	}
	if e.Kind == history.KindCall && Actuator(e.Method) && e.Err != "" && e.Instance != "" && e.Workspace != "" {
		if c.ownFail[e.Instance] == nil {
			c.ownFail[e.Instance] = map[string]time.Time{}
		}
		c.ownFail[e.Instance][e.Workspace] = e.At
	}
	c.keys.track(e)
}

// note records what e did at the instant, whoever made it (s: the state
// just before it).
func (c *firstStepRows) note(s *State, e *history.Event) {
	switch e.Kind {
	case history.KindWrite:
		if changes(s.Row(e.Workspace), e) {
			c.touched[e.Workspace] = true
		}
	case history.KindInsert:
		c.touched[e.Workspace] = true
		if e.Row != nil {
			c.touched[e.Row.ID] = true
		}
	case history.KindAPI:
		if e.Workspace != "" && e.Method != "api.Get" && e.Method != "api.List" {
			c.touched[e.Workspace] = true // a request that may write it
		}
	case history.KindUser:
		if e.Workspace != "" {
			c.touched[e.Workspace] = true
		}
	case history.KindFault:
		if e.Method == FFlushBus {
			c.flushed = true
		}
	case history.KindCall:
		if id, ok := activityKeyOwner(e); ok && e.Method != MBusGet {
			c.keysChanged[id] = true
		}
	}
}

// changes reports whether the write e may have changed what a reader of
// row before sees: an applied write that changes a column other than
// observed_at and updated_at, or a failed one (whose outcome another
// writer's record does not settle). A write refused by its condition, or
// one that rewrites the values the row holds (a HealthMonitor pass finding
// nothing new), changes nothing.
func changes(before *contracts.Workspace, e *history.Event) bool {
	switch {
	case e.Err != "" || before == nil || e.Patch == nil:
		return true
	case !e.Applied:
		return false
	}
	a := after(before, e.Patch, e.At)
	b := before.Clone()
	a.ObservedAt, a.UpdatedAt, b.ObservedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return !reflect.DeepEqual(a, b)
}

// MBusGet is the bus read of a key.
const MBusGet = "bus.Get"

// activityKeyOwner is the workspace whose activity key (ws_conn:{id},
// idle_timer:{id}) the bus call e names, if any.
func activityKeyOwner(e *history.Event) (string, bool) {
	if !strings.HasPrefix(e.Method, "bus.") {
		return "", false
	}
	for _, key := range strings.Split(e.Args, ",") {
		key, _, _ = strings.Cut(key, "=")
		for _, prefix := range []string{"ws_conn:", "idle_timer:"} {
			if id, ok := strings.CutPrefix(key, prefix); ok {
				return id, true
			}
		}
	}
	return "", false
}

// read notes e, an event at the acquisition step's instant, for that step.
func (c *firstStepRows) read(st *rowStep, e *history.Event) {
	if stepEnds(e, st.inst) {
		st.ended = true
	}
	if e.Instance != st.inst {
		return
	}
	switch e.Kind {
	case history.KindFault:
		if e.Workspace != "" {
			st.failed[e.Workspace] = true
		}
	case history.KindWrite:
		if e.Err != "" {
			st.failed[e.Workspace] = true
		}
		if c.ttl {
			if e.Args == onBehalfOf+string(contracts.CompTTLManager) || e.Component == contracts.CompTTLManager {
				st.acted[e.Workspace] = true
			}
			return
		}
		if reconcilerEvent(e) {
			st.acted[e.Workspace] = true
			if e.Patch != nil && e.Patch.Operation.Set && e.Patch.Operation.V != contracts.OpNone {
				st.claimed[e.Workspace] = true
			}
		}
	case history.KindCall:
		if !c.ttl && Actuator(e.Method) {
			st.acted[e.Workspace] = true
		}
		if e.Err == "" {
			return
		}
		if id, ok := activityKeyOwner(e); ok {
			st.keyFailed[id] = true
		}
		switch {
		case e.Workspace != "":
			st.failed[e.Workspace] = true
		case strings.HasPrefix(e.Method, "store."):
			st.readFailed = true // a selection's read, or worse
		case e.Method == MBusGet:
			if _, ok := activityKeyOwner(e); !ok {
				st.readFailed = true // which keys it could not read is not known
			}
		}
	}
}

// judge ends the acquisition step being read, on s, the state at its end.
func (c *firstStepRows) judge(s *State, r *Report) {
	st := c.cur
	c.cur = nil
	if st.ended || st.readFailed {
		return
	}
	ids := make([]string, 0, len(s.Rows))
	for id := range s.Rows {
		if !c.touched[id] && !st.failed[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := s.Rows[id]
		if b, ok := st.before[id]; ok {
			w = &b
		}
		var owed string
		if c.ttl {
			owed = c.ttlOwed(st, w)
		} else {
			owed = c.reconcilerOwed(st, w)
		}
		if owed == "" {
			continue
		}
		r.Exercise()
		done := st.acted[id]
		if owed == "claim" {
			done = st.claimed[id]
			owed = "its row called for a claim of " + string(TableChoice(w))
		}
		if done {
			continue
		}
		component := "StateReconciler"
		if c.ttl {
			component = "TTL Manager"
		}
		r.Flag(id, st.at, fmt.Sprintf("%s acquired the leader lock at %s and its step there showed no act of the %s on %s, which was owed one (%s; observed %s, health %s, operation %s, desired %s): the step in which an instance acquires the lock runs all five components (SPEC 3, \"Due times\")",
			st.inst, stamp(st.at), component, id, owed, w.ObservedStatus, w.HealthStatus, w.Operation, w.DesiredState), st.seq)
	}
}

// ttlOwed is the request SPEC 4.4 has the TTL Manager make on w at the
// step, when it is known exactly ("" when none is owed, or not surely).
func (c *firstStepRows) ttlOwed(st *rowStep, w *contracts.Workspace) string {
	if w.Terminal() {
		return "" // the API answers 409 before any write (4.3)
	}
	act := contracts.Activity{Connections: c.keys.conns[w.ID]}
	exp, timer := c.keys.idle[w.ID]
	if timer {
		if exp.Equal(st.at) {
			return "" // expiring at that very instant
		}
		act.IdleTimerSet = st.at.Before(exp)
	}
	want, ok := specTTL(w, act, st.at)
	if !ok {
		return ""
	}
	ttl := time.Duration(w.ArchiveTTLSeconds) * time.Second
	if want == contracts.DesiredStandby {
		if c.flushed || c.keysChanged[w.ID] || st.keyFailed[w.ID] {
			return "" // its activity keys are not known exactly
		}
		ttl = time.Duration(w.StandbyTTLSeconds) * time.Second
	}
	return fmt.Sprintf("its TTL rule asks for desired %s: last access %s, more than %s before", want, stamp(w.LastAccessAt), ttl)
}

// reconcilerOwed is the act SPEC 4.2 has the StateReconciler's first tick
// take on w, when it is one the history shows ("" when none).
func (c *firstStepRows) reconcilerOwed(st *rowStep, w *contracts.Workspace) string {
	if w.Operation == contracts.OpNone {
		if op := TableChoice(w); op != contracts.OpNone && !optionalClaim(w, op) {
			return "claim"
		}
		return ""
	}
	if step := writeOnly(w, st.at.Sub(w.OpStartedAt)); step != "" {
		return fmt.Sprintf("its first applicable step was to %s its %s (started %s)", step, w.Operation, stamp(w.OpStartedAt))
	}
	at, failed := c.ownFail[st.inst][w.ID]
	if resumeDue(w, st.at, at, failed) {
		return fmt.Sprintf("its %s, started %s, was owed its resume by a leader that had not invoked it", w.Operation, stamp(w.OpStartedAt))
	}
	return ""
}
