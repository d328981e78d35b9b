package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameResubscribeReconciles = "o22-resubscribe-reconciles"

// resubscribeReconciles: O22, reconciliation after a re-subscription
// (ORACLE-SPEC 3.2 reconnect: "After a successful re-subscription run R
// (§3.3.4)"; 3.3.4 "Reconciliation R (at start, after every
// re-subscription, …)", step 1 "Query OracleRequestDocs{status:
// ENABLED}"; D25 "after each successful re-subscription the daemon runs R
// (reference MUST, external SHOULD)"). O16b judges only the recovery,
// and only when a frame the daemon needed fell into the gap, so a daemon
// that never reconciled after a reconnect passed whenever the gap held
// nothing it missed.
//
// A re-subscription is a connection of a lifetime that already had all
// three subscriptions once (the first is §3.1 step 4, followed by the
// load) on which the third distinct query is subscribed. R's first step
// is the list query, so one must be sent within G of that subscribe. Not
// judged once the lifetime is signalled, stops or ends, nor when an F2
// window was open in [the re-subscription − QuerySettle, the deadline]:
// a daemon that runs R one at a time (as the reference does) may then
// still be in the R before it, its queries hanging until their timeout.
// A warning for external SUTs, as D25 says.
type resubscribeReconciles struct {
	life    *Life
	started bool // the lifetime had all three subscriptions once
	// owed: a re-subscription awaits its list query.
	owed     bool
	at       time.Time
	seq      int64
	deadline time.Time
}

func (*resubscribeReconciles) Name() string     { return nameResubscribeReconciles }
func (*resubscribeReconciles) Contract() string { return "O22" }
func (c *resubscribeReconciles) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		*c = resubscribeReconciles{life: s.life}
	}
	l := c.life
	if l == nil || (e.Life != 0 && e.Life != l.ID) {
		return
	}
	if c.owed && c.deadline.Before(e.At) {
		c.expire(s, r)
	}
	switch {
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == methodQuery &&
		e.RPC.Query != nil && e.RPC.Query.Path == pathDocs:
		if c.owed {
			c.owed = false
			exercise(s, r, c, "a re-subscription")
		}
	case e.WS != nil && e.WS.Action == history.WSSubscribe && e.WS.Err == "":
		cn := l.conns[e.WS.Conn]
		if cn == nil {
			return
		}
		if _, dup := cn.Subs[e.WS.Query]; dup || len(cn.Subs)+1 < specSubscriptions {
			return
		}
		if !c.started {
			c.started = true // §3.1 step 4: the load follows (O13 judges it)
			return
		}
		if c.owed {
			c.expire(s, r) // a second re-subscription before the first one's query
		}
		c.owed, c.at, c.seq, c.deadline = true, e.At, e.Seq, e.At.Add(G+s.Tol)
	}
}

// Finish judges a re-subscription whose deadline passed before the last
// record.
func (c *resubscribeReconciles) Finish(s *State, r *judge.Report) {
	if c.owed && c.deadline.Before(s.Now) {
		c.expire(s, r)
	}
}

func (c *resubscribeReconciles) expire(s *State, r *judge.Report) {
	c.owed = false
	l := c.life
	switch {
	case l != s.life || l.Ended() || !l.StoppingAt.IsZero():
		return
	case s.faults.Touched(c.at.Add(-QuerySettle), 0, "F2"):
		return
	}
	exercise(s, r, c, "a re-subscription")
	r.Flag(fmt.Sprintf("life %d", l.ID), c.deadline,
		fmt.Sprintf("no OracleRequestDocs query within G of the re-subscription at %s: reconciliation R must follow every re-subscription (D25)",
			offset(s, c.at)), c.seq)
}
