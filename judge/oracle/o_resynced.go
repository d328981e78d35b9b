package oracle

import (
	"fmt"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const nameResynced = "o21-sequence-resynced"

// resynced: O21. A resync sets the sequence: "every 5 min L = sequence from
// an Account query (it may move L down while own txs are pending; code 32
// then resyncs again)", "code 32: resync before the next broadcast", "code
// 0 / code 19: L = L + 1; anything else: L unchanged" (ORACLE-SPEC 3.5),
// and broadcasts never overlap (D23). So once an Account answer A is
// delivered, the next broadcasts use A until an acknowledgement moves it.
// O8 bounds a sequence from both sides but lets a daemon keep L above A
// (a resync that never moves L down): after an eviction (F13) such a
// daemon meets code 32 for ever.
//
// Judged: a broadcast of self when no acknowledgement (code 0, 19, or the
// cache's "already exists") was delivered since G before the send of the
// Account query whose answer was the lifetime's last one delivered: its
// sequence must equal that answer's. Any acknowledgement in that window
// leaves the broadcast unjudged (the daemon may have counted it before or
// after the answer); so does a broadcast before any Account answer.
type resynced struct {
	life    *Life
	have    bool
	a       uint64
	aSeq    int64
	sentAt  time.Time
	lastAck time.Time
	acked   bool
}

func (*resynced) Name() string     { return nameResynced }
func (*resynced) Contract() string { return "O21" }
func (c *resynced) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		*c = resynced{life: s.life}
	}
	cur := &s.Cur
	switch {
	case cur.Answer != nil && cur.Answer.Call.Life == c.life:
		a := cur.Answer
		switch {
		case a.Call.Method == methodBroadcast && !a.Lost && a.Acked():
			c.lastAck, c.acked = e.At, true
		case a.Account != nil && a.Call.Query != nil && a.Call.Query.Path == pathAccount:
			c.have, c.a, c.aSeq, c.sentAt = true, a.Account.Sequence, e.Seq, a.Call.At
		}
	case cur.Bcast != nil && cur.Bcast.Life == c.life && cur.Bcast.Tx != nil && cur.Bcast.Tx.Signer == s.P.Self:
		if !c.have || (c.acked && !c.lastAck.Before(c.sentAt.Add(-G))) {
			return
		}
		exercise(s, r, c, "a broadcast after a resync")
		if q := cur.Bcast.Tx.Sequence; q != c.a {
			r.Flag(bcastSubject(cur.Bcast), e.At, fmt.Sprintf("broadcast at sequence %d; the last Account answer said %d and no acknowledgement came since", q, c.a),
				c.aSeq, e.Seq)
		}
	}
}
