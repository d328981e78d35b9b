package workspace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// apiRules: SPEC 4.3, the API's writes.
//
//   - POST creates a workspace with last_access_at = now (its TTLs count
//     from its creation), the desired_state and TTLs it was asked for, and
//     for those it was not, desired RUNNING (4.3: "optional desired_state
//     default RUNNING") and the TTLs' column defaults (table 1.1: 300 s
//     and 86400 s);
//   - recovery (the administrator's only write) resets error_info and
//     error_count in one write (the endpoint's row of the table; the rules
//     below it add error_message, which the row leaves out, so it is not
//     asked for), and only on a workspace in ERROR ("409 if health is not
//     ERROR", judged "by error_info", as the amended rules say): the row
//     the write applied to, as the history replays it at that write, holds
//     a terminal error_info. No grace for a row read a moment earlier: a
//     recovery checked on a read and then written without that condition
//     lets concurrent recoveries all through, or lands after the
//     HealthMonitor re-observed the row, or wipes the retryable error (and
//     its attempt count) the reconciler recorded since;
//   - a workspace in ERROR (a terminal error_info) takes no desired-state
//     change until it is recovered (409); DELETE, which also writes
//     desired PENDING, is allowed;
//   - DELETE is a soft delete: deleted_at = now and desired_state =
//     PENDING, in one write;
//   - the proxy's auto-wake (4.4) sets desired RUNNING on a STANDBY
//     workspace only (an ARCHIVED, PENDING or ERROR one gets a 502 page):
//     the row is observed STANDBY at the write, or stopped being so less
//     than EventDeliveryBound before it (the proxy read it a moment
//     earlier).
//
// Evidence: inserts and applied writes of the API service layer (for the
// user, the administrator, or on behalf of the TTL Manager or the proxy),
// and the row before each; the harness's record of each successful POST
// (the fields it sent, history.KindAPI "api.Create").
// CreateStampSlack is how long before its insert is recorded a new
// workspace's last_access_at may have been stamped: the API stamps it,
// then waits for the store (on real services a slow insert, or one
// queued behind the running-limit lock).
const CreateStampSlack = 30 * time.Second

type apiRules struct {
	base
	// standbyUntil: when each workspace last stopped being observed
	// STANDBY.
	standbyUntil map[string]time.Time
	// inserted: each workspace's row as inserted, until the POST that
	// created it is judged.
	inserted map[string]contracts.Workspace
}

func (*apiRules) Name() string     { return "api-rules" }
func (*apiRules) Contract() string { return "4.3" }

func (c *apiRules) Observe(s *State, e *history.Event, r *Report) {
	if c.standbyUntil == nil {
		c.standbyUntil, c.inserted = map[string]time.Time{}, map[string]contracts.Workspace{}
	}
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.ObservedStatus.Set && e.Patch.ObservedStatus.V != contracts.ObservedStandby {
		if w := s.Row(e.Workspace); w != nil && w.ObservedStatus == contracts.ObservedStandby {
			c.standbyUntil[e.Workspace] = e.At
		}
	}
	switch {
	case e.Kind == history.KindInsert && e.Err == "" && e.Row != nil:
		r.Exercise()
		if d := e.Row.LastAccessAt.Sub(e.At); d < -CreateStampSlack || d > LastAccessSlack {
			r.Flag(e.Row.ID, e.At, fmt.Sprintf("workspace created with last_access_at %s, not the time of its creation", stamp(e.Row.LastAccessAt)), e.Seq)
		}
		c.inserted[e.Row.ID] = *e.Row
	case e.Kind == history.KindAPI && e.Method == MAPICreate:
		row, ok := c.inserted[e.Workspace]
		delete(c.inserted, e.Workspace)
		if ok && e.Err == "" {
			c.judgeCreate(&row, e, r)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAdmin:
		r.Exercise()
		p := e.Patch
		if !p.ErrorInfo.Set || p.ErrorInfo.V != nil || !p.ErrorCount.Set || p.ErrorCount.V != 0 {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("recovery wrote %v: error_info = null and error_count = 0 are reset together", p.Columns()), e.Seq)
		} else if w := s.Row(e.Workspace); w != nil && w.ErrorMessage != "" && (!p.ErrorMessage.Set || p.ErrorMessage.V != "") {
			// 4.3: "Recovery resets error_info, error_count and
			// error_message in one write" (the message of an error
			// that is gone would be displayed on).
			r.Flag(e.Workspace, e.At, fmt.Sprintf("recovery wrote %v and left error_message %q: it resets error_info, error_count and error_message in one write", p.Columns(), w.ErrorMessage), e.Seq)
		}
		if w := s.Row(e.Workspace); w != nil && !w.Terminal() {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("recovery applied to a workspace not in ERROR (health %s, error_info %s; the write's condition: %s): "+
				"409 unless error_info is terminal at the write, so of concurrent recoveries one applies",
				w.HealthStatus, describeInfo(w.ErrorInfo), condOf(e)), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAPI && e.Patch.DeletedAt.Set:
		r.Exercise()
		p := e.Patch
		if !p.DesiredState.Set || p.DesiredState.V != contracts.DesiredPending || p.DeletedAt.V.IsZero() {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("DELETE wrote %v (deleted_at %s): a soft delete sets deleted_at = now and desired_state = PENDING in one write",
				p.Columns(), stamp(p.DeletedAt.V)), e.Seq)
		}
	case e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompAPI && e.Patch.DesiredState.Set:
		w := s.Row(e.Workspace)
		if w == nil {
			return
		}
		r.Exercise()
		if e.Args == onBehalfOf+string(contracts.CompProxy) {
			standby := w.ObservedStatus == contracts.ObservedStandby || e.At.Sub(c.standbyUntil[e.Workspace]) < EventDeliveryBound
			if e.Patch.DesiredState.V != contracts.DesiredRunning || !standby || w.Deleted() {
				r.Flag(e.Workspace, e.At, fmt.Sprintf("the proxy's auto-wake set desired %s on a workspace observed %s (deleted %t): only a STANDBY one is woken, to RUNNING",
					e.Patch.DesiredState.V, w.ObservedStatus, w.Deleted()), e.Seq)
			}
		}
		if w.Terminal() && e.Patch.DesiredState.V != w.DesiredState {
			r.Flag(e.Workspace, e.At, fmt.Sprintf("desired_state changed from %s to %s while the workspace is in ERROR (%s, terminal; written by %s): 409 until it is recovered",
				w.DesiredState, e.Patch.DesiredState.V, w.ErrorInfo.Reason, writerOf(e)), e.Seq)
		}
	}
}

// MAPICreate is the harness's record of a POST /workspaces; its Args
// list the fields sent, as "desired=S", "standby_ttl=N", "archive_ttl=N"
// among others (sim's recorded API).
const MAPICreate = "api.Create"

// judgeCreate compares the row a POST inserted with the fields the POST
// sent, and with the defaults for those it left out.
func (c *apiRules) judgeCreate(row *contracts.Workspace, e *history.Event, r *Report) {
	want := struct {
		desired                string
		standbyTTL, archiveTTL string
	}{string(contracts.DesiredRunning), strconv.Itoa(specDefaultStandbyTTL), strconv.Itoa(specDefaultArchiveTTL)}
	for _, field := range strings.Fields(e.Args) {
		name, value, _ := strings.Cut(field, "=")
		switch name {
		case "desired":
			want.desired = value
		case "standby_ttl":
			want.standbyTTL = value
		case "archive_ttl":
			want.archiveTTL = value
		}
	}
	got := []string{string(row.DesiredState), strconv.Itoa(row.StandbyTTLSeconds), strconv.Itoa(row.ArchiveTTLSeconds)}
	if got[0] != want.desired || got[1] != want.standbyTTL || got[2] != want.archiveTTL {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("POST (%s) created desired %s, standby_ttl %s, archive_ttl %s: it asked for (or left to the defaults) desired %s, standby_ttl %s, archive_ttl %s",
			e.Args, got[0], got[1], got[2], want.desired, want.standbyTTL, want.archiveTTL), e.Seq)
	}
}

// condOf renders the recorded condition of a write, "none" when it had
// none.
func condOf(e *history.Event) string {
	if e.Cond != nil {
		if c := history.CondString(e.Cond); c != "" {
			return c
		}
	}
	return "none"
}

// describeInfo names an error_info for a message: null, or its reason and
// whether it is terminal.
func describeInfo(info *contracts.ErrorInfo) string {
	switch {
	case info == nil:
		return "null"
	case info.IsTerminal:
		return string(info.Reason) + ", terminal"
	}
	return string(info.Reason)
}
