package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// healthRules: SPEC 4.1, "For each row it writes: … health_status, the
// first rule that matches: 1. error_info is terminal → ERROR; 2. a
// container exists (running or not) and the volume does not → ERROR …;
// 3. otherwise → OK". c6-container-volume holds rule 2 to its effect (a
// container without its volume ends flagged); no checker compared the
// health a write leaves with the rules, so a HealthMonitor that left a
// terminal row OK, or set ERROR on a healthy one, passed.
//
// Judged at every applied HealthMonitor write the history keeps (one that
// sets more than observed_at), on the row just after it, against the
// writing instance's latest successful container and volume listings
// (history.Listings, as c1-observation-truth reads them) and the row's
// error_info as it stood before the write (or as the write set it: rule
// 2's Mismatch is terminal itself). Not judged: a write with no
// successful listing of either kind before it, or after a failed one (the
// pass ended, c1-observation-truth's to judge); a row whose error_info
// another write changed within NowSlack before (the pass may have read
// it as it was: an administrator's recovery, a failure record).
type healthRules struct {
	seen   listings
	infoAt map[string]time.Time
}

func (*healthRules) Name() string     { return "health-rules" }
func (*healthRules) Contract() string { return "4.1" }

func (c *healthRules) Observe(s *State, e *history.Event, r *Report) {
	if c.infoAt == nil {
		c.infoAt = map[string]time.Time{}
	}
	if c.seen.record(e) {
		return
	}
	if e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Component == contracts.CompHealthMonitor {
		c.judge(s, e, r)
	}
}

func (c *healthRules) judge(s *State, e *history.Event, r *Report) {
	row := s.Row(e.Workspace)
	li, lv := c.seen.of(e.Instance)
	if row == nil || li == nil || lv == nil || li.set == nil || lv.set == nil || li.failedSeq != 0 || lv.failedSeq != 0 {
		return
	}
	if at, ok := c.infoAt[e.Workspace]; ok && e.At.Sub(at) <= NowSlack {
		return
	}
	r.Exercise()
	hasC, _ := li.set.Container(e.Workspace)
	hasV := lv.set.Has(e.Workspace)
	a := after(row, e.Patch, e.At)
	want, rule := contracts.HealthOK, "3 (otherwise OK)"
	switch {
	case row.Terminal() || a.Terminal():
		want, rule = contracts.HealthError, "1 (error_info is terminal)"
	case hasC && !hasV:
		want, rule = contracts.HealthError, "2 (a container without its volume)"
	}
	if a.HealthStatus != want {
		r.Flag(e.Workspace, e.At, fmt.Sprintf("the HealthMonitor of %s left health %s, but rule %s gives %s (listings: container %v, volume %v; error_info %s) (SPEC 4.1)",
			e.Instance, a.HealthStatus, rule, want, hasC, hasV, errInfoText(row.ErrorInfo)), e.Seq)
	}
}

// AfterApply follows the writes of error_info by anyone but the
// HealthMonitor itself.
func (c *healthRules) AfterApply(_ *State, e *history.Event, _ *Report) {
	if c.infoAt != nil && e.Kind == history.KindWrite && e.Applied && e.Patch != nil && e.Patch.ErrorInfo.Set &&
		e.Component != contracts.CompHealthMonitor {
		c.infoAt[e.Workspace] = e.At
	}
}

func (*healthRules) Finish(*State, *Final, *Report) {}

// errInfoText names an error_info for a message.
func errInfoText(info *contracts.ErrorInfo) string {
	switch {
	case info == nil:
		return "null"
	case info.IsTerminal:
		return "terminal " + string(info.Reason)
	}
	return "retryable " + string(info.Reason)
}
