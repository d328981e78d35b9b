package conform

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/abciquery"
)

// watch keeps the records a run has made so far, so that a script step
// can wait for a condition over them (what the daemon did, as the façade
// saw it) instead of sleeping.
type watch struct {
	mu      sync.Mutex
	seen    []history.Event
	changed chan struct{} // closed and replaced at each record
}

func (w *watch) init() { w.changed = make(chan struct{}) }

// see is the façade's observer.
func (w *watch) see(e *history.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, *e)
	close(w.changed)
	w.changed = make(chan struct{})
}

// mark is the number of records so far: a wait from mark sees only what
// comes after it.
func (w *watch) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// unmet is a wait whose condition did not hold within its budget: the
// daemon did not do what the script waited for.
type unmet struct {
	what   string
	budget time.Duration
}

func (u *unmet) Error() string {
	if u.budget == 0 {
		return "no " + u.what
	}
	return fmt.Sprintf("waited %s for %s", u.budget.Round(time.Second), u.what)
}

// await waits until cond holds for a record at or after index from (cond
// sees the records in order, once each) and returns the index after it;
// an *unmet error after budget. cond runs without any lock held by the
// façade.
func (w *watch) await(ctx context.Context, from int, budget time.Duration, what string, cond func(*history.Event) bool) (int, error) {
	t := time.NewTimer(budget)
	defer t.Stop()
	i := from
	for {
		w.mu.Lock()
		batch := w.seen[i:len(w.seen):len(w.seen)]
		changed := w.changed
		w.mu.Unlock()
		for k := range batch {
			if cond(&batch[k]) {
				return i + k + 1, nil
			}
		}
		i += len(batch)
		select {
		case <-changed:
		case <-t.C:
			return i, &unmet{what: what, budget: budget}
		case <-ctx.Done():
			return i, fmt.Errorf("conform: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// ---- conditions over the records ----

// answer is the daemon's broadcast of a submission and what it heard.
type answer struct {
	R, N     uint64
	Code     uint32
	ErrCode  int
	ErrData  string
	Lost     bool
	Life     int
	Sequence uint64
}

// class is the §3.5 row of the answer.
func (a answer) class() oracle.BroadcastClass {
	switch {
	case a.Lost:
		return oracle.ClassifyBroadcast(oracle.ReplyTransport())
	case a.ErrCode != 0:
		return oracle.ClassifyBroadcast(oracle.ReplyRPCError("", a.ErrData))
	}
	return oracle.ClassifyBroadcast(oracle.ReplyCode(a.Code))
}

// acked reports whether the answer acknowledges the tx (code 0 or 19).
func (a answer) acked() bool {
	c := a.class()
	return c == oracle.ClassSuccess || c == oracle.ClassAlreadyAdmitted
}

// onAnswer turns a condition over broadcast answers into one over records:
// it pairs each submission's broadcast with its answer.
func onAnswer(cond func(answer) bool) func(*history.Event) bool {
	open := map[int64]answer{}
	return func(e *history.Event) bool {
		if e.RPC == nil {
			return false
		}
		switch e.RPC.Phase {
		case history.PhaseRecv:
			if r := submitFor(e.RPC.Tx); r != 0 && e.RPC.Method == "broadcast_tx_sync" {
				open[e.RPC.Call] = answer{R: r, N: e.RPC.Tx.Msgs[0].Nonce, Life: e.Life, Sequence: e.RPC.Tx.Sequence}
			}
		case history.PhaseDone:
			a, ok := open[e.RPC.Call]
			if !ok {
				return false
			}
			delete(open, e.RPC.Call)
			a.Lost = e.RPC.Lost
			if res := e.RPC.Result; res != nil {
				a.Code, a.ErrCode, a.ErrData = res.Code, res.ErrCode, res.ErrData
			}
			return cond(a)
		}
		return false
	}
}

// completes lists the requests a delivered Complete frame carries.
func completes(e *history.Event) []uint64 {
	if e.WS == nil || e.WS.Action != history.WSFrame || e.WS.Query != oracle.QueryComplete || e.WS.Frame == nil {
		return nil
	}
	var out []uint64
	for _, v := range e.WS.Frame.Events["complete_oracle_data_set.request_id"] {
		if r, err := strconv.ParseUint(v, 10, 64); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// completeOf reports whether e delivers a Complete of request r.
func completeOf(e *history.Event, r uint64) bool { return slices.Contains(completes(e), r) }

// updateOf reports whether e delivers an Update frame of request r.
func updateOf(e *history.Event, r uint64) bool {
	if e.WS == nil || e.WS.Action != history.WSFrame || e.WS.Query != oracle.QueryUpdate || e.WS.Frame == nil {
		return false
	}
	return slices.Contains(e.WS.Frame.Events["update_oracle_request_doc.request_id"], strconv.FormatUint(r, 10))
}

// failedGet reports whether e is the failed end of a GET of request r.
func failedGet(e *history.Event, r uint64) bool {
	return e.Src != nil && e.Src.Phase == history.PhaseDone && e.Src.RequestID == r && e.Src.Class != "ok"
}

// subscribed counts, per connection, the daemon's subscriptions to the
// three queries; it holds once one connection has all three.
func subscribed() func(*history.Event) bool {
	subs := map[int64]map[string]bool{}
	return func(e *history.Event) bool {
		if e.WS == nil || e.WS.Action != history.WSSubscribe || e.WS.Err != "" {
			return false
		}
		m := subs[e.WS.Conn]
		if m == nil {
			m = map[string]bool{}
			subs[e.WS.Conn] = m
		}
		m[e.WS.Query] = true
		return m[oracle.QueryRegister] && m[oracle.QueryUpdate] && m[oracle.QueryComplete]
	}
}

// listed reports whether e answers the daemon's list of request docs.
func listed(e *history.Event) bool {
	return e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Query != nil &&
		e.RPC.Query.Path == abciquery.PathDocs
}
