package workspace

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// singleLeader: C10. One leader at a time, epochs increasing, every fenced
// write under the current epoch, and no write from a deposed leader once
// its successor acted (its calls to the world: c10-fencing).
type singleLeader struct{ base }

func (*singleLeader) Name() string     { return "c10-single-leader" }
func (*singleLeader) Contract() string { return "C10" }
func (*singleLeader) Observe(s *State, e *history.Event, r *Report) {
	L := &s.Leader
	switch {
	case e.Kind == history.KindLeader && e.Method == "acquire":
		if L.Epoch > 0 {
			r.Exercise()
		}
		if L.Holder != "" && L.Holder != e.Instance {
			r.Flag("", e.At, fmt.Sprintf("%s acquired leadership (epoch %d) while %s still held it", e.Instance, e.Epoch, L.Holder), e.Seq)
		}
		if e.Epoch <= L.Epoch {
			r.Flag("", e.At, fmt.Sprintf("epoch did not increase: %d after %d", e.Epoch, L.Epoch), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied:
		if e.Epoch > 0 && e.Epoch != L.Epoch {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("write by %s under stale epoch %d landed (current %d)", e.Instance, e.Epoch, L.Epoch), e.Seq)
			return
		}
		deposedAct(s, e, r)
	}
}

func deposedAct(s *State, e *history.Event, r *Report) {
	L := &s.Leader
	mine, ok := L.EpochOf[e.Instance]
	if !ok || mine >= L.Epoch {
		return
	}
	if first, acted := L.FirstAct[L.Epoch]; acted {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("deposed leader %s (epoch %d) made a write after its successor (epoch %d) acted", e.Instance, mine, L.Epoch), first, e.Seq)
	}
}

// convergence: C12 (liveness). With faults stopped, every workspace
// reaches its desired state, a terminal ERROR, or DELETED within the bound.
type convergence struct {
	lastDesire map[string]time.Time
}

// ConvergeBound is how long after faults stop (or after its last desired
// change, whichever is later) a workspace must have converged: the longest
// chain of operations a desired change can need (deletion from RUNNING:
// STOPPING, ARCHIVING, DELETING) at their SPEC timeouts, twice, plus the
// slowest period.
var ConvergeBound = 2*(specTimeout(contracts.OpStopping)+specTimeout(contracts.OpArchiving)+specTimeout(contracts.OpDeleting)) + 2*specPeriodIdle

func (*convergence) Name() string     { return "c12-convergence" }
func (*convergence) Contract() string { return "C12" }
func (c *convergence) Observe(s *State, e *history.Event, r *Report) {
	if c.lastDesire == nil {
		c.lastDesire = map[string]time.Time{}
	}
	switch {
	case e.Kind == history.KindInsert:
		c.lastDesire[e.Workspace] = e.At
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && (e.Patch.DesiredState.Set || e.Patch.DeletedAt.Set || (e.Component == contracts.CompAdmin)):
		c.lastDesire[e.Workspace] = e.At
	}
}

// Converged reports whether w is at rest: DELETED; soft-deleted and in
// terminal ERROR; in terminal ERROR with no operation; or healthy, idle and
// at its desired state.
func Converged(w *contracts.Workspace) (bool, string) {
	switch {
	case w.ObservedStatus == contracts.ObservedDeleted:
		return true, ""
	case w.HealthStatus == contracts.HealthError && w.Terminal() && (w.Operation == contracts.OpNone || w.Deleted()):
		return true, ""
	case w.Deleted():
		return false, fmt.Sprintf("soft-deleted but observed %s, operation %s", w.ObservedStatus, w.Operation)
	case w.Operation != contracts.OpNone:
		return false, "operation " + string(w.Operation) + " still in progress"
	case w.HealthStatus != contracts.HealthOK || w.Terminal():
		return false, "health " + string(w.HealthStatus) + " without a terminal error"
	case string(w.ObservedStatus) != string(w.DesiredState):
		return false, fmt.Sprintf("observed %s, desired %s", w.ObservedStatus, w.DesiredState)
	}
	return true, ""
}

func (c *convergence) Finish(s *State, f *Final, r *Report) {
	if s.Quiet.IsZero() || f == nil {
		return
	}
	for _, w := range sortedRows(s) {
		from := s.Quiet
		if t := c.lastDesire[w.ID]; t.After(from) {
			from = t
		}
		if f.End.Sub(from) < ConvergeBound {
			continue
		}
		r.Exercise()
		if ok, why := Converged(w); !ok {
			r.Flag(w.ID, f.End, fmt.Sprintf("not converged %s after faults stopped: %s", f.End.Sub(from), why))
		}
	}
}

// sortedRows is the replayed rows in id order. The slice is the state's
// own: callers read it and keep nothing of it.
func sortedRows(s *State) []*contracts.Workspace { return s.rows }

// durability: C12 (safety). The user's last data is in the volume or in
// the archive at archive_key, or the workspace says DataLost; and every
// check the simulated user made on reconnecting matched.
type durability struct{}

// Recorded user verification: a history.KindUser event with this method;
// Err is set when what the user read back differs from what they wrote.
const UserVerify = "user.verify"

func (*durability) Name() string     { return "c12-durability" }
func (*durability) Contract() string { return "C12" }
func (*durability) Observe(s *State, e *history.Event, r *Report) {
	if e.Kind != history.KindUser || e.Method != UserVerify {
		return
	}
	r.Exercise()
	if e.Err != "" {
		r.Flag(e.Workspace, e.At, "user data lost or stale: "+e.Err, e.Seq)
	}
}

func dataLost(w *contracts.Workspace) bool {
	return w.ErrorInfo != nil && w.ErrorInfo.Reason == contracts.ReasonDataLost
}

func (*durability) Finish(s *State, f *Final, r *Report) {
	if f == nil || f.Expected == nil {
		return
	}
	for _, w := range sortedRows(s) {
		want, ok := f.Expected[w.ID]
		if !ok || len(want) == 0 || w.Deleted() || w.ObservedStatus == contracts.ObservedDeleted || dataLost(w) {
			continue
		}
		if w.Operation != contracts.OpNone {
			continue // mid-operation: judged by convergence, not here
		}
		r.Exercise()
		if files, has := f.Volumes[w.ID]; has && !specUnrestored(w) {
			if diff := DiffFiles(want, files); diff != "" {
				r.Flag(w.ID, f.End, "volume does not hold the user's last data: "+diff)
			}
			continue
		}
		if w.ArchiveKey == "" {
			r.Flag(w.ID, f.End, "user data gone: no volume and no archive, and no DataLost error")
			continue
		}
		if f.Archives == nil {
			continue
		}
		files, err := f.Archives(w.ArchiveKey)
		if err != nil {
			r.Flag(w.ID, f.End, fmt.Sprintf("archive %s unreadable (%v) but no DataLost error", w.ArchiveKey, err))
			continue
		}
		if diff := DiffFiles(want, files); diff != "" {
			r.Flag(w.ID, f.End, "archive "+w.ArchiveKey+" does not hold the user's last data: "+diff)
		}
	}
}

// DiffFiles describes the first difference between the files a user wrote
// (want) and the files found (got), in path order ("" if equal).
func DiffFiles(want, got map[string][]byte) string {
	paths := make([]string, 0, len(want)+len(got))
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		w, inW := want[p]
		g, inG := got[p]
		switch {
		case !inG:
			return fmt.Sprintf("%s missing (%d files written, %d found)", p, len(want), len(got))
		case !inW:
			return "unexpected file " + p
		case !bytes.Equal(w, g):
			return fmt.Sprintf("%s differs from the last write (%d bytes written, %d found)", p, len(w), len(g))
		}
	}
	return ""
}

// retries: SPEC 4.2.4. At most three attempts, failures at least 30 s
// apart, and no actuator call within 30 s of a failure: a failure the DB
// recorded (error_info), or a failed actuator call the same instance saw
// in the same leadership (an attempt made again at once, before any
// failure was recorded, is an attempt all the same). A leadership ends
// with a new epoch, and also where the instance gave it up: a failed lock
// check stops every component (SPEC 3.1) and a release hands the lock
// back, so a later acquisition that finds the lock still held by the
// instance's own session, under the same epoch, begins afresh.
//
// The third failure is the last whatever error_count says: the checker
// counts the failures recorded since the claim itself, each a failure
// write (a non-null error_info) that follows a failed actuator call, or
// one whose answer a fault replaced, since the previous one counted (so a
// failure written again after a lost answer counts once), and the one
// that makes MaxAttempts must be terminal.
//
// And 4.2.4's last sentence: "DataLost and the administrator-only codes of
// 1.5 are terminal at once". A failure write that follows a failed
// actuator call whose error names such a code (and no actuator call
// since) must record a terminal error: a retryable one retries what SPEC
// says needs an administrator (or restores from a broken archive again).
type retries struct {
	base
	// atOnce: the latest actuator call on each workspace, when it failed
	// with a code terminal at once (its record number).
	atOnce      map[string]int64
	lastFailure map[string]time.Time
	failedCall  map[string]failedCall
	// attempts counts the failures recorded on each workspace since its
	// claim; freshFailure notes a failed actuator call since the last.
	attempts     map[string]int
	freshFailure map[string]bool
}

// failedCall is the latest failed actuator call on a workspace, by an
// instance under one leadership epoch (a new leadership resumes the
// operation afresh: SPEC 4.2.2, "Resuming").
type failedCall struct {
	instance string
	epoch    int64
	at       time.Time
	seq      int64
}

// Actuator reports whether method is one of an operation's actuator calls
// (SPEC 4.2.2).
func Actuator(method string) bool {
	switch method {
	case MStart, MDelete, MProvision, MArchive, MRestore, MDeleteVolume:
		return true
	}
	return false
}

func (*retries) Name() string     { return "retry-policy" }
func (*retries) Contract() string { return "4.2.4" }
func (c *retries) Observe(s *State, e *history.Event, r *Report) {
	if c.lastFailure == nil {
		c.lastFailure, c.failedCall = map[string]time.Time{}, map[string]failedCall{}
		c.attempts, c.freshFailure = map[string]int{}, map[string]bool{}
		c.atOnce = map[string]int64{}
	}
	if e.Workspace != "" && e.Kind == history.KindCall && Actuator(e.Method) {
		if e.Err != "" && specTerminalAtOnce(e.Err) {
			c.atOnce[e.Workspace] = e.Seq
		} else {
			delete(c.atOnce, e.Workspace)
		}
	}
	if e.Workspace != "" && ((e.Kind == history.KindCall && Actuator(e.Method) && e.Err != "") ||
		(e.Kind == history.KindFault && e.Method == FLostResp && Actuator(e.Args))) {
		c.freshFailure[e.Workspace] = true
	}
	if leftLead(e) {
		for id, f := range c.failedCall {
			if f.instance == e.Instance {
				delete(c.failedCall, id)
			}
		}
		return
	}
	row := s.Row(e.Workspace)
	if row == nil {
		return
	}
	switch {
	case reconcilerWrite(e):
		p := e.Patch
		switch classify(row, p) {
		case tClaim, tComplete:
			delete(c.atOnce, e.Workspace)
			delete(c.lastFailure, e.Workspace)
			delete(c.failedCall, e.Workspace)
			delete(c.attempts, e.Workspace)
			delete(c.freshFailure, e.Workspace)
			return
		}
		if call, ok := c.atOnce[e.Workspace]; ok && p.ErrorInfo.Set && p.ErrorInfo.V != nil && row.Operation != contracts.OpNone {
			delete(c.atOnce, e.Workspace)
			r.Exercise()
			if !p.ErrorInfo.V.IsTerminal {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("failure of %s recorded as retryable (%s) after call #%d failed with a code SPEC 1.5 makes terminal at once: DataLost and the administrator-only codes are terminal at once",
					row.Operation, p.ErrorInfo.V.Reason, call), call, e.Seq)
			}
		}
		if p.ErrorInfo.Set && p.ErrorInfo.V != nil && row.Operation != contracts.OpNone && c.freshFailure[e.Workspace] {
			delete(c.freshFailure, e.Workspace)
			c.attempts[e.Workspace]++
			if n := c.attempts[e.Workspace]; n >= specMaxAttempts && !p.ErrorInfo.V.IsTerminal {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("failure %d of %s since its claim recorded as retryable (error_count %s): at most %d attempts in all",
					n, row.Operation, countOf(p), specMaxAttempts), e.Seq)
			}
		}
		if !p.ErrorInfo.Set || p.ErrorInfo.V == nil || !p.ErrorCount.Set || p.ErrorCount.V == 0 {
			if p.Operation.Set && p.Operation.V == contracts.OpNone {
				delete(c.lastFailure, e.Workspace)
				delete(c.failedCall, e.Workspace)
			}
			return
		}
		info := p.ErrorInfo.V
		r.Exercise()
		if !info.IsTerminal && p.ErrorCount.V >= specMaxAttempts {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("failure %d of %s recorded as retryable: more than %d attempts allowed", p.ErrorCount.V, row.Operation, specMaxAttempts), e.Seq)
		}
		if p.ErrorCount.V > specMaxAttempts {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("error_count reached %d (max %d attempts)", p.ErrorCount.V, specMaxAttempts), e.Seq)
		}
		if prev, ok := c.lastFailure[e.Workspace]; ok && e.At.Sub(prev) < specRetryInterval {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("attempts only %s apart (min %s)", e.At.Sub(prev), specRetryInterval), e.Seq)
		}
		c.lastFailure[e.Workspace] = e.At
		delete(c.failedCall, e.Workspace)
		if info.IsTerminal || (p.Operation.Set && p.Operation.V == contracts.OpNone) {
			delete(c.lastFailure, e.Workspace)
		}
	case e.Kind == history.KindCall && Actuator(e.Method) && s.Leader.EpochOf[e.Instance] > 0:
		if prev, ok := c.lastFailure[e.Workspace]; ok && e.At.Sub(prev) < specRetryInterval && e.At.After(prev) {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s retried %s after a failure (min %s)", e.Method, e.At.Sub(prev), specRetryInterval), e.Seq)
			delete(c.lastFailure, e.Workspace)
		} else if f, ok := c.failedCall[e.Workspace]; ok && f.instance == e.Instance && f.epoch == s.Leader.EpochOf[e.Instance] && e.At.Sub(f.at) < specRetryInterval {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("%s attempted %s after the failed call #%d by the same instance (min %s)", e.Method, e.At.Sub(f.at), f.seq, specRetryInterval), f.seq, e.Seq)
			delete(c.failedCall, e.Workspace)
			return
		}
		if e.Err != "" {
			c.failedCall[e.Workspace] = failedCall{instance: e.Instance, epoch: s.Leader.EpochOf[e.Instance], at: e.At, seq: e.Seq}
		}
	}
}

// countOf renders the error_count a write sets, or "unchanged".
func countOf(p *contracts.Patch) string {
	if !p.ErrorCount.Set {
		return "unchanged"
	}
	return strconv.Itoa(p.ErrorCount.V)
}

// timeouts: SPEC 4.2.3. No operation stays in progress past its timeout
// (plus TimeoutSlack) while the reconciler is running. "Running" is
// counted from the later of the deadline and the moment the writing
// instance last acquired leadership: a leader that comes back after a gap
// in which nobody reconciled has its first passes to end every overdue
// operation, one row at a time (an operation overdue while no reconciler
// ran is no violation of a rule the reconciler applies on its ticks).
type timeouts struct {
	running map[string]bool
	flagged map[string]time.Time
	// leads is when each instance last acquired leadership, or resumed
	// it (see stepped).
	leads map[string]time.Time
	// stepped marks the instances that gave leadership up at a failed
	// lock check or a release (SPEC 3.1: every component stops), or took
	// the lock with the answer lost on the way. An instance whose own
	// session still held the lock takes it again under the same epoch,
	// which the history does not record: its next action is taken as the
	// moment it resumed. A failed DB call of an instance also starts its
	// grace again (leads): a reconciler whose writes fail cannot end the
	// operations that go overdue meanwhile.
	stepped map[string]bool
	// acted: workspace → instance → its last actuator call on it; began:
	// when each instance's leadership began (leads without the restarts
	// of its DB failures).
	acted map[string]map[string]time.Time
	began map[string]time.Time
	// tick is the latest reconciler write, judged once its instant is
	// over (tickSet: there is one to judge).
	tick    history.Event
	tickSet bool
}

// TimeoutSlack is the grace after an operation's timeout within which the
// reconciler must have ended it: its period while an operation is in
// progress (SPEC 3: "some row has operation other than NONE → 2 s", and
// the overdue row is such a row in every read since its claim) plus the
// tolerance the adaptive periods are judged with (PeriodTolerance: 2 s
// for a 2 s period, which covers SPEC 3's step of at most 2 s and a real
// runtime's step of at most 1 s). It was two idle periods (60 s), which
// let a reconciler on a 30 s period through while operations ran. A
// tick's writes are judged once its instant is over, so that one row's
// Timeout entry written after another row's write of the same tick (rows
// are handled in id order) is not mistaken for a late one.
const TimeoutSlack = specPeriodBusy + 2*time.Second

func (*timeouts) Name() string     { return "timeouts" }
func (*timeouts) Contract() string { return "4.2.3" }
func (c *timeouts) Observe(s *State, e *history.Event, r *Report) {
	if c.running == nil {
		c.running, c.flagged, c.leads, c.stepped = map[string]bool{}, map[string]time.Time{}, map[string]time.Time{}, map[string]bool{}
		c.acted, c.began = map[string]map[string]time.Time{}, map[string]time.Time{}
	}
	if c.tickSet && e.At.After(c.tick.At) {
		c.judgeTick(s, r)
	}
	switch {
	case e.Kind == history.KindLeader && e.Method == "acquire":
		c.leads[e.Instance], c.began[e.Instance] = e.At, e.At
		delete(c.stepped, e.Instance)
		return
	case leftLead(e), tookLeadUnawares(e):
		c.stepped[e.Instance] = true
		return
	case c.stepped[e.Instance] && (e.Kind == history.KindWrite || (e.Kind == history.KindCall && e.Method != MTryAcquire && e.Method != MLockCheck)):
		c.leads[e.Instance], c.began[e.Instance] = e.At, e.At
		delete(c.stepped, e.Instance)
	}
	dbFailed := e.Err != "" && (e.Kind == history.KindWrite || (e.Kind == history.KindCall && strings.HasPrefix(e.Method, "store.")))
	lostRead := e.Kind == history.KindFault && e.Method == FLostResp && strings.HasPrefix(e.Args, "store.")
	if dbFailed || lostRead {
		// The DB failed the instance: what it could not write was not
		// its to end; the grace starts again.
		c.leads[e.Instance] = e.At
		return
	}
	if e.Kind == history.KindCall && Actuator(e.Method) {
		if c.acted[e.Workspace] == nil {
			c.acted[e.Workspace] = map[string]time.Time{}
		}
		c.acted[e.Workspace][e.Instance] = e.At
		return
	}
	if !reconcilerWrite(e) {
		return
	}
	since := c.leads[e.Instance]
	if row := s.Row(e.Workspace); row != nil && classify(row, e.Patch) == tError && e.Patch.ErrorInfo.V.Reason == contracts.ReasonTimeout {
		r.Exercise()
		c.resumed(row, e, c.began[e.Instance], since, r)
	}
	// The reconciler is alive: once this instant is over, every
	// operation past its deadline is late.
	c.tick, c.tickSet = *e, true
}

// judgeTick flags, at the end of the instant of the reconciler's latest
// write (its tick), every operation still in progress past its deadline
// and TimeoutSlack, counted from the later of the deadline and the
// writing instance's grace.
func (c *timeouts) judgeTick(s *State, r *Report) {
	c.tickSet = false
	e := &c.tick
	since := c.leads[e.Instance]
	ids := make([]string, 0, len(c.running))
	for id := range c.running {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w := s.Row(id)
		if w == nil || w.Operation == contracts.OpNone || w.OpStartedAt.IsZero() {
			continue
		}
		deadline := w.OpStartedAt.Add(specTimeout(w.Operation))
		if since.After(deadline) {
			deadline = since
		}
		deadline = deadline.Add(TimeoutSlack)
		if e.At.After(deadline) && !c.flagged[id].Equal(w.OpStartedAt) {
			c.flagged[id] = w.OpStartedAt
			r.Flag(id, e.At, fmt.Sprintf("%s started %s still in progress %s later (timeout %s), after a tick of the StateReconciler of %s: it ends an operation past its timeout within its 2 s period (SPEC 3, 4.2.3)",
				w.Operation, w.OpStartedAt.UTC().Format(time.RFC3339), e.At.Sub(w.OpStartedAt), specTimeout(w.Operation), e.Instance), e.Seq)
		}
	}
}

// Finish judges the last tick.
func (c *timeouts) Finish(s *State, _ *Final, r *Report) {
	if c.tickSet {
		c.judgeTick(s, r)
	}
}

// ResumeGrace is how long a leader has, after it takes over an operation
// in progress, to resume it (SPEC 4.2.2: its first passes invoke the
// operation's actuator calls again).
const ResumeGrace = 2 * specPeriodIdle

// resumed judges a Timeout entry (e, on row) by a leader whose leadership
// began at began and whose grace (after its last DB failure) at since:
// SPEC 4.2.2, "Resuming after a crash or failover: a leader that has not
// itself invoked the actuator calls of an in-progress operation since it
// became leader invokes them". A leader that had ResumeGrace of working
// DB before the deadline and never called an actuator on the workspace
// for this operation (since the later of its leadership and the claim)
// let it time out instead: it took the operation over and never resumed
// it, or never learnt that its own claim had landed. STARTING on a
// workspace observed without its volume is not resumed (C6).
func (c *timeouts) resumed(row *contracts.Workspace, e *history.Event, began, since time.Time, r *Report) {
	op := row.Operation
	deadline := row.OpStartedAt.Add(specTimeout(op))
	from := later(began, row.OpStartedAt) // its calls for this operation
	if row.OpStartedAt.IsZero() || deadline.Sub(later(since, row.OpStartedAt)) < ResumeGrace ||
		(op == contracts.OpStarting && row.ObservedStatus == contracts.ObservedPending) {
		return
	}
	if t, ok := c.acted[e.Workspace][e.Instance]; ok && !t.Before(from) {
		return
	}
	r.Flag(e.Workspace, e.At, fmt.Sprintf("%s started %s timed out under %s, which led from %s and never invoked its actuator calls (no call on the workspace since %s, %s before the deadline)",
		op, stamp(row.OpStartedAt), e.Instance, stamp(began), stamp(from), deadline.Sub(from).Round(time.Second)), e.Seq)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// changedRow names the row an event changed: an applied write's, or a
// successful insert's.
func changedRow(e *history.Event) (string, bool) {
	switch {
	case e.Kind == history.KindInsert && e.Row != nil && e.Err == "":
		return e.Row.ID, true
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil:
		return e.Workspace, true
	}
	return "", false
}

func (c *timeouts) AfterApply(s *State, e *history.Event, _ *Report) {
	if c.running == nil || e.Kind != history.KindWrite || !e.Applied {
		return
	}
	if w := s.Row(e.Workspace); w != nil && w.Operation != contracts.OpNone {
		c.running[e.Workspace] = true
	} else {
		delete(c.running, e.Workspace)
	}
}

// limits: SPEC 4.3 as amended. No desired RUNNING is accepted while the
// owner, or the fleet, already has as many workspaces counting toward the
// limits (contracts.CountsRunning: live, health OK, desired or observed
// RUNNING) as the limit allows, the workspace itself left out. Judged on
// the rows replayed from the history at the moment each write committed,
// so concurrent requests that each saw room cannot pass together.
type limits struct {
	base
	Limits contracts.Limits
	// counting holds, per owner, the ids of the replayed rows that count
	// toward the limits (kept as writes apply: a fleet of thousands is
	// not counted again for every write), and all how many there are.
	counting map[string]map[string]struct{}
	owner    map[string]string // counting id → its owner
	all      int
}

// AfterApply follows whether the row e wrote counts toward the limits.
func (c *limits) AfterApply(s *State, e *history.Event, _ *Report) {
	id, ok := changedRow(e)
	if !ok {
		return
	}
	if c.counting == nil {
		c.counting, c.owner = map[string]map[string]struct{}{}, map[string]string{}
	}
	if owner, was := c.owner[id]; was {
		delete(c.counting[owner], id)
		delete(c.owner, id)
		c.all--
	}
	if w := s.Row(id); w != nil && specCountsRunning(w) {
		ids := c.counting[w.OwnerUserID]
		if ids == nil {
			ids = map[string]struct{}{}
			c.counting[w.OwnerUserID] = ids
		}
		ids[id] = struct{}{}
		c.owner[id] = w.OwnerUserID
		c.all++
	}
}

// others counts, over the rows counted so far, the owner's workspaces
// (their ids) and the fleet's that count toward the limits, id aside.
func (c *limits) others(owner, id string) (mine []string, all int) {
	all = c.all
	if _, ok := c.owner[id]; ok {
		all--
	}
	for other := range c.counting[owner] {
		if other != id {
			mine = append(mine, other)
		}
	}
	slices.Sort(mine) // the rows' order, whatever the map's
	return mine, all
}

func (*limits) Name() string     { return "limits" }
func (*limits) Contract() string { return "4.3" }
func (c *limits) Observe(s *State, e *history.Event, r *Report) {
	if limitRejected(e) {
		r.Exercise()
		return
	}
	if e.Err != "" {
		return
	}
	var owner string
	switch {
	case e.Kind == history.KindInsert && e.Row != nil && e.Row.DesiredState == contracts.DesiredRunning:
		owner = e.Row.OwnerUserID
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil &&
		e.Patch.DesiredState.Set && e.Patch.DesiredState.V == contracts.DesiredRunning:
		row := s.Row(e.Workspace)
		if row == nil || row.DesiredState == contracts.DesiredRunning {
			return
		}
		owner = row.OwnerUserID
	default:
		return
	}
	mine, all := c.others(owner, e.Workspace)
	l := specLimits(c.Limits)
	switch {
	case len(mine) >= l.MaxRunningPerUser:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("desired RUNNING accepted with the owner already at %d of %d counting toward the limit", len(mine), l.MaxRunningPerUser), e.Seq)
	case all >= l.MaxRunningGlobal:
		r.Flag(e.Workspace, e.At, fmt.Sprintf("desired RUNNING accepted with the fleet already at %d of %d counting toward the limit", all, l.MaxRunningGlobal), e.Seq)
	}
}

// limitRejected reports whether e is a request or a guarded write refused
// for the running limits.
func limitRejected(e *history.Event) bool {
	if e.Err == "" {
		return false
	}
	if e.Kind == history.KindAPI {
		return strings.Contains(e.Err, contracts.APILimitExceeded)
	}
	return strings.Contains(e.Err, contracts.LimitExceededText)
}
