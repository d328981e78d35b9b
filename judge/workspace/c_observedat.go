package workspace

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// observedAt: SPEC 4.1. The HealthMonitor "writes observed_at on every
// observation" of every workspace whose observed_status is not DELETED,
// whether its status changed or not: observed_at says how fresh the
// row's observation is, and a row that is not restamped looks observed
// long ago, or, read the other way, its reader cannot tell a quiet
// workspace from one nobody looks at any more.
//
// Judged on the final world. Passes are the leader's successful
// container listings (instances.List). Once the leader has made
// ObservedAtPasses of them in a row with nothing disturbing it in between
// (no leadership change, no crash of it, no failed call of its own, no
// fault aimed at it), every row that is not DELETED and was created
// before the first of them must carry an observed_at no older than that
// first pass. Taking the first of several passes leaves room for a pass
// still in progress when the run ended and for a coordinator that also
// lists containers elsewhere (its reconciler, say), and for a pass that
// stamps the time its tick began. A coordinator that observes workspace
// by workspace, without a listing, leaves the rule not exercised.
type observedAt struct {
	// passes are the leader's undisturbed listings, latest last (at most
	// ObservedAtPasses kept).
	passes []observedPass
}

type observedPass struct {
	at  time.Time
	seq int64
}

// ObservedAtPasses is how many undisturbed observation passes of the
// leader the observed-at rule waits for.
const ObservedAtPasses = 4

func (*observedAt) Name() string     { return "observed-at" }
func (*observedAt) Contract() string { return "4.1" }

func (c *observedAt) Observe(s *State, e *history.Event, _ *Report) {
	leader := s.Leader.Holder // the lock holder before e
	switch e.Kind {
	case history.KindLeader:
		c.passes = c.passes[:0]
	case history.KindCrash, history.KindFault:
		if e.Instance != "" && e.Instance == leader {
			c.passes = c.passes[:0]
		}
	case history.KindCall:
		if leader == "" || e.Instance != leader {
			return
		}
		if e.Err != "" {
			c.passes = c.passes[:0]
			return
		}
		if e.Method != MInstancesList {
			return
		}
		if len(c.passes) == ObservedAtPasses {
			c.passes = append(c.passes[:0], c.passes[1:]...)
		}
		c.passes = append(c.passes, observedPass{at: e.At, seq: e.Seq})
	}
}

func (c *observedAt) Finish(_ *State, f *Final, r *Report) {
	if len(c.passes) < ObservedAtPasses {
		return
	}
	first := c.passes[0]
	for i := range f.Rows {
		w := &f.Rows[i]
		if w.ObservedStatus == contracts.ObservedDeleted || !w.CreatedAt.Before(first.at) {
			continue
		}
		r.Exercise()
		if w.ObservedAt.Before(first.at) {
			last := c.passes[len(c.passes)-1]
			r.Flag(w.ID, f.End, fmt.Sprintf("observed_at %s is older than the leader's observation pass at %s, %d passes before its last one at %s: a workspace observed without its observed_at written",
				stamp(w.ObservedAt), stamp(first.at), len(c.passes)-1, stamp(last.at)), first.seq, last.seq)
		}
	}
}

// stamp formats t for a message (never set: "never").
func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
