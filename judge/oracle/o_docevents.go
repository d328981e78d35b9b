package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameDocEvents = "o24-doc-events-queried"

// docEventsQueried: O24, every Register and Update id is looked up
// (ORACLE-SPEC 3.3.1: "Register(id) | 1. Query OracleRequestDoc(id)",
// "Update(id) | 1. Query the doc as above"; 3.2 "Register ids | every value
// … in order (one tx may hold several messages)"; D19 events are handled
// one at a time in arrival order). A daemon that skipped a frame (taking a
// frame of an older block, or of the same block as the last, for one it
// had seen) missed the Update it carried, and nothing judged that unless a
// later answer happened to show it.
//
// For each id of a Register or Update frame delivered to a running
// lifetime, an OracleRequestDoc query for that id must be sent after the
// delivery, within G of it (for a frame that arrived during the load,
// within G of the load's end, D15, which creates the listed jobs one at a
// time: the first list answer, and G for each doc it listed), and G more
// for each id still
// waiting ahead of it: D19 handles the ids one at a time, each after the
// doc and creation queries of the one before, so a queue that built up
// during the load is worked off in turn. A frame that repeats one
// already delivered to the lifetime (the same tx hash, F4) is exempt:
// handling a duplicate idempotently may well mean not at all. Not judged
// once the lifetime is signalled or stops, nor when an F2 or F14 window was
// open within QuerySettle of the delivery: the doc queries of the frames
// before it may then still be in their tries (D9).
type docEventsQueried struct {
	life    *Life
	pending []docEvent
	seen    map[string]bool // tx hashes of the frames delivered to life
	// queried is when each request's doc was last queried in the
	// lifetime: in black-box mode the daemon may read a frame and send
	// its query before the harness has written the frame's record, so a
	// query sent after the frame was published answers it.
	queried map[uint64]time.Time
}

// docEvent is one id of a delivered frame that awaits its query; ahead
// is how many ids were waiting before it when it arrived.
type docEvent struct {
	r     uint64
	at    time.Time
	seq   int64
	ahead int
}

func (*docEventsQueried) Name() string     { return nameDocEvents }
func (*docEventsQueried) Contract() string { return "O24" }

func (c *docEventsQueried) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.pending, c.seen, c.queried = s.life, nil, map[string]bool{}, map[uint64]time.Time{}
	}
	l := c.life
	if l == nil || (e.Life != 0 && e.Life != l.ID) {
		return
	}
	if len(c.pending) > 0 {
		c.expire(s, r, e.At)
	}
	switch f := s.Cur.Frame; {
	case f != nil && f.Routed && (f.Sub == oracle.SubRegister || f.Sub == oracle.SubUpdate) && f.Life == l:
		if l.Ended() || !l.StoppingAt.IsZero() {
			return
		}
		if cn := l.conns[e.WS.Conn]; cn != nil && cn.Closed {
			return // a frame of a connection the daemon let go
		}
		hash := ""
		if hs := e.WS.Frame.Events[specKeyTxHash]; len(hs) > 0 {
			hash = hs[0]
		}
		if hash != "" && c.seen[hash] {
			return
		}
		c.seen[hash] = hash != ""
		for _, id := range f.IDs {
			if q, ok := c.queried[id]; ok && !e.WS.Frame.Published.IsZero() && !q.Before(e.WS.Frame.Published) && len(c.pending) == 0 {
				exercise(s, r, c, "a Register or Update id queried")
				delete(c.queried, id)
				continue
			}
			c.pending = append(c.pending, docEvent{r: id, at: e.At, seq: e.Seq, ahead: len(c.pending)})
		}
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil && e.RPC.Query.Path == pathDoc:
		c.queried[e.RPC.Query.RequestID] = e.At
		for i, p := range c.pending {
			if p.r == e.RPC.Query.RequestID {
				c.pending = append(c.pending[:i], c.pending[i+1:]...)
				exercise(s, r, c, "a Register or Update id queried")
				break
			}
		}
	}
}

// Finish judges the ids whose deadline passed before the last record.
func (c *docEventsQueried) Finish(s *State, r *judge.Report) {
	if len(c.pending) > 0 {
		c.expire(s, r, s.Now.Add(time.Nanosecond))
	}
}

// expire judges the pending ids whose deadline is before now.
func (c *docEventsQueried) expire(s *State, r *judge.Report, now time.Time) {
	l := c.life
	if l.ListAt.IsZero() {
		return // still loading: the frames wait (D15)
	}
	keep := c.pending[:0]
	for _, p := range c.pending {
		loaded := l.ListAt.Add(time.Duration(l.ListDocs) * G)
		due := later(p.at, loaded).Add(time.Duration(p.ahead+1)*G + s.Tol)
		switch {
		case !due.Before(now):
			keep = append(keep, p)
		case l != s.life || l.Ended() || !l.StoppingAt.IsZero() || s.faults.Touched(p.at.Add(-QuerySettle), QuerySettle, "F2", "F14"):
		default:
			exercise(s, r, c, "a Register or Update id queried")
			r.Flag(subj(p.r), due, fmt.Sprintf("no OracleRequestDoc query for request %d within G of its frame: every Register and Update is looked up (3.3.1)",
				p.r), p.seq)
		}
	}
	c.pending = keep
}
