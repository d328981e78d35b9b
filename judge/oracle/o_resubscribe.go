package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameResubscribe = "o19-resubscribe"

// resubscribe: O19, the EventWatcher's reconnect rule (ORACLE-SPEC 3.2)
// and the daemon's only fatal condition (3.7, D18, D21), which no contract
// of 5.2 held a daemon to.
//
//   - Backoff. After the server closed the SUT's WebSocket, or a
//     connection attempt was refused or a subscribe refused, the next
//     connection attempt k (k = the failed attempts in a row so far) comes
//     no earlier than min(2^k s, retry.max_delay_sec) × 0.9 − tol after
//     it. The count is the history's: refused dials and refused subscribes
//     since the last connection that got all three subscriptions. A
//     failure the history does not show (a dial that hung) only makes the
//     SUT's own count, and so its wait, larger: the bound stays a lower
//     bound.
//   - Fatal. A lifetime that once had all three subscriptions and then
//     exits non-zero with no signal must have run out of attempts first:
//     retry.max_attempts failed attempts in a row (Life.FatalAt). "Only
//     watcher exhaustion is fatal" (D21); failures before the first full
//     subscription are start-up failures (3.1 steps 1–2), not judged.
//
// Attempts before the lifetime's first full subscription (a failed start,
// 3.1 step 2), after a signal or after its own shutdown began are not
// judged.
type resubscribe struct {
	life    *Life
	started bool // the lifetime had all three subscriptions once
	pending bool // a failure awaits the next attempt
	from    time.Time
	fromSeq int64
	k       int
	why     string
}

func (*resubscribe) Name() string     { return nameResubscribe }
func (*resubscribe) Contract() string { return "O19" }
func (c *resubscribe) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		*c = resubscribe{life: s.life}
	}
	l := c.life
	if l == nil || (e.Life != 0 && e.Life != l.ID) {
		return
	}
	switch {
	case e.Proc != nil && e.Proc.Action == history.ProcExit:
		if e.Proc.Status != 0 && l.Signal == "" && c.started && !l.Exited {
			exercise(s, r, c, partNonZeroExit)
			if l.FatalAt.IsZero() {
				r.Flag(fmt.Sprintf("life %d", l.ID), e.At,
					fmt.Sprintf("%s with no signal of the harness, but only %d re-subscription attempts in a row failed (fatal after %d)",
						e.Proc.ExitText(), l.wsFailures, s.P.MaxAttempts), e.Seq)
			}
		}
	case e.WS != nil:
		c.ws(s, l, e, r)
	}
}

func (c *resubscribe) ws(s *State, l *Life, e *history.Event, r *judge.Report) {
	w := e.WS
	if l.Signal != "" || !l.StoppingAt.IsZero() {
		c.pending = false
		return
	}
	attempt := w.Action == history.WSConnect || w.Action == history.WSRefuse
	if attempt && c.pending {
		c.pending = false
		base := min(time.Second<<min(c.k, 32), s.P.MaxDelay)
		lo, _ := specJitterBounds(base)
		exercise(s, r, c, partResubscribeWait)
		if gap := e.At.Sub(c.from); gap < lo-s.Tol {
			r.Flag(fmt.Sprintf("life %d", l.ID), e.At,
				fmt.Sprintf("connection attempt %s after %s; attempt %d waits at least %s (min(2^%d s, %s) × 0.9)",
					gap, c.why, c.k, lo, c.k, s.P.MaxDelay), c.fromSeq, e.Seq)
		}
	}
	// l.wsFailures is the count before this record (the state folds it
	// in after the checkers).
	switch {
	case w.Action == history.WSRefuse && c.started:
		c.fail(e, l.wsFailures+1, "a refused connection attempt")
	case w.Action == history.WSSubscribe && w.Err != "" && c.started:
		c.fail(e, l.wsFailures+1, "a refused subscribe")
	case w.Action == history.WSSubscribe:
		if cn := l.conns[w.Conn]; cn != nil {
			if _, dup := cn.Subs[w.Query]; !dup && len(cn.Subs)+1 >= specSubscriptions {
				c.started = true
			}
		}
	case w.Action == history.WSClose && w.By == "server" && c.started:
		if cn := l.conns[w.Conn]; cn != nil && !cn.Closed {
			c.fail(e, l.wsFailures, "the server closed the connection")
		}
	}
}

func (c *resubscribe) fail(e *history.Event, k int, why string) {
	c.pending, c.from, c.fromSeq, c.k, c.why = true, e.At, e.Seq, k, why
}
