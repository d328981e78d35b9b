package oracle

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

const (
	nameSubmitRetries = "o5-submit-retries"
	nameSequence      = "o8-sequence"
	nameResync        = "o9-resync"
	nameWire          = "o17-wire"
)

// submitRetries: O5. Per result (the broadcasts of one (r, n) with no new
// execution of r between them): ≤ 6 broadcasts; retry k sent ≥ the
// previous answer's delivery (its t_recv when lost) + 0.9 × min(2^(k−1),
// 30) s − tol; none after code 13 or another terminal code; after code 11
// the next gas_limit ≥ ceil(prev × adjustment). Within one lifetime no
// broadcast of (r, n) after a code 0 or 19 for it, except by an execution
// starting ≥ 24 h after the acknowledged result (the watchdog, D13).
type submitRetries struct{}

func (*submitRetries) Name() string     { return nameSubmitRetries }
func (*submitRetries) Contract() string { return "O5" }
func (c *submitRetries) Observe(s *State, e *history.Event, r *judge.Report) {
	if a := s.Cur.Answer; a != nil && a.Call.Method == methodBroadcast && a.Call.Submit != nil {
		switch a.Class {
		case oracle.ClassSequenceMismatch:
			exercise(s, r, c, partCode32)
		case oracle.ClassOutOfGas:
			exercise(s, r, c, partCode11)
		case oracle.ClassInsufficientFee:
			exercise(s, r, c, partCode13)
		case oracle.ClassAlreadyAdmitted:
			exercise(s, r, c, partCode19)
		}
		return
	}
	f := s.Cur.Bcast
	if f == nil || f.Msg == nil || f.Model == nil {
		return
	}
	// The subject only when flagging: a string per broadcast otherwise.
	sub := func() string { return subjN(f.R, f.N) }
	if a := f.Acked; a != nil && (a.ResultAt.IsZero() || f.ExecStart.Before(a.ResultAt.Add(specCompleteWait-s.Tol))) {
		r.Flag(sub(), e.At, fmt.Sprintf("round %d broadcast again after it was acknowledged at %s in this lifetime", f.N, offset(s, a.At)),
			a.Seq, e.Seq)
	}
	g := f.Group
	if g == nil {
		return
	}
	k := g.Count // this is retry k
	switch {
	case k >= specSubmitAttempts:
		r.Flag(sub(), e.At, fmt.Sprintf("broadcast %d of one result; at most %d", k+1, specSubmitAttempts), g.LastSeq, e.Seq)
	case g.Terminal:
		r.Flag(sub(), e.At, fmt.Sprintf("broadcast again after a terminal answer (%s)", g.TerminalMsg), g.TerminalSeq, e.Seq)
	case !g.Answered:
		r.Flag(sub(), e.At, "retry sent before the previous broadcast of the result was answered", g.LastSeq, e.Seq)
	default:
		base, _ := specSubmitRetryBase(k)
		lo, _ := specJitterBounds(base)
		if e.At.Before(g.LastAt.Add(lo - s.Tol)) {
			r.Flag(sub(), e.At, fmt.Sprintf("retry %d sent %s after the previous answer; the backoff is at least %s", k, e.At.Sub(g.LastAt), lo),
				g.AnswerSeq, e.Seq)
		}
	}
	if g.NeedGas > 0 && f.Tx != nil && f.Tx.GasLimit < g.NeedGas {
		r.Flag(sub(), e.At, fmt.Sprintf("gas_limit %d after code 11; at least %d", f.Tx.GasLimit, g.NeedGas), g.NeedGasSeq, e.Seq)
	}
}

// sequence: O8. With A the last Account sequence delivered and S the
// sequences acknowledged with code 0 or 19, a broadcast at q is neither a
// reuse (q ∈ S with no Account answer ≤ q delivered since its
// acknowledgement) nor a skip (q > max(A, 1 + max S)).
type sequence struct {
	// evicted: an F13 eviction of a SUT tx since the SUT's last broadcast.
	evicted bool
}

func (*sequence) Name() string     { return nameSequence }
func (*sequence) Contract() string { return "O8" }
func (c *sequence) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case e.Evict != nil && e.Evict.Origin == history.OriginSUT && e.Evict.Cause == history.EvictFault:
		c.evicted = true
	case s.Cur.Bcast != nil && s.Cur.Bcast.Tx != nil && s.Cur.Bcast.Tx.Signer == s.P.Self:
		c.judge(s, e, r, s.Cur.Bcast)
	}
}

// bcastSubject names the round a broadcast is for ("" when it carries no
// submission).
func bcastSubject(f *BcastFact) string {
	if f == nil || f.Msg == nil {
		return ""
	}
	return subjN(f.R, f.N)
}

func (c *sequence) judge(s *State, e *history.Event, r *judge.Report, f *BcastFact) {
	q, sub := f.Tx.Sequence, func() string { return bcastSubject(f) } // only when flagging
	if c.evicted || s.faults.Active("F9") {
		exercise(s, r, c, "F9 active, or the first broadcast after an F13 eviction")
	}
	c.evicted = false
	a := &s.acct
	if ack, reused := a.Reused(q); reused {
		r.Flag(sub(), e.At, fmt.Sprintf("sequence %d reused: it was acknowledged and no Account answer at or below it came since", q),
			ack.Seq, e.Seq)
		return
	}
	switch {
	case !a.AKnown && !a.SKnown:
		r.Flag(sub(), e.At, fmt.Sprintf("broadcast at sequence %d before any Account answer or acknowledgement", q), e.Seq)
	default:
		bound, ev := a.A, a.ASeq
		if a.SKnown && a.MaxS+1 > bound {
			bound, ev = a.MaxS+1, 0
		}
		if q > bound {
			r.Flag(sub(), e.At, fmt.Sprintf("sequence %d skips ahead of max(A = %d, 1 + max S = %d)", q, a.A, a.MaxS+1), nonZero(ev, e.Seq)...)
		}
	}
}

func nonZero(seqs ...int64) []int64 {
	var out []int64
	for _, s := range seqs {
		if s != 0 {
			out = append(out, s)
		}
	}
	return out
}

// resync: O9. After a code 32 delivered, the SUT's next broadcast follows
// a successful Account answer delivered after it; while running, Account
// queries come at most 5 min + 5 s apart.
type resync struct {
	life    *Life
	pending int64 // the code-32 answer still waiting for an Account query
	gap     gapWatch
}

func (*resync) Name() string     { return nameResync }
func (*resync) Contract() string { return "O9" }
func (c *resync) Observe(s *State, e *history.Event, r *judge.Report) {
	if s.life != c.life {
		c.life, c.pending, c.gap = s.life, 0, gapWatch{}
	}
	c.gap.check(s, r, ResyncBound, "Account query")
	switch {
	case s.Cur.Answer != nil && s.Cur.Answer.Call.Life == c.life && s.Cur.Answer.Class == oracle.ClassSequenceMismatch &&
		s.Cur.Answer.Call.Method == methodBroadcast && !s.Cur.Answer.Lost:
		exercise(s, r, c, "code 32")
		c.pending = e.Seq
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv && e.RPC.Method == methodQuery && e.RPC.Query != nil &&
		e.RPC.Query.Path == pathAccount:
		c.gap.call(s, e, r, ResyncBound, "Account queries")
	case s.Cur.Answer != nil && s.Cur.Answer.Call.Life == c.life && s.Cur.Answer.Call.Query != nil &&
		s.Cur.Answer.Call.Query.Path == pathAccount && !s.Cur.Answer.Failed && s.Cur.Answer.Account != nil:
		// 3.5: "until a resync succeeds, attempts fail as transport
		// errors": a successful Account answer, delivered after the code
		// 32, is the resync (the third oracle audit: a daemon that
		// broadcast with its old L after a failed resync passed).
		c.pending = 0
	case s.Cur.Bcast != nil && c.pending != 0:
		r.Flag(bcastSubject(s.Cur.Bcast), e.At, "broadcast after a code 32 without a successful Account answer since", c.pending, e.Seq)
		c.pending = 0
	}
}

// gapWatch judges a call the SUT must repeat while running: the gap
// between two calls, and the time since the last one, may not pass the
// bound unless F2 (an RPC outage that may refuse the calls) was active in
// between or the lifetime ended.
type gapWatch struct {
	n       int
	last    time.Time
	lastSeq int64
	flagged bool
	// skip is how many first calls start no judged gap.
	skip int
}

func (g *gapWatch) call(s *State, e *history.Event, r *judge.Report, bound time.Duration, what string) bool {
	g.n++
	judged := false
	if g.n > g.skip+1 && !g.flagged && !s.faults.Touched(g.last, 0, f2Unseen) {
		judged = true
		if e.At.Sub(g.last) > bound+s.Tol {
			r.Flag("", e.At, fmt.Sprintf("%s %s apart; at most %s", what, e.At.Sub(g.last), bound), g.lastSeq, e.Seq)
		}
	}
	g.last, g.lastSeq, g.flagged = e.At, e.Seq, false
	return judged
}

func (g *gapWatch) check(s *State, r *judge.Report, bound time.Duration, what string) {
	// The gap's length first: two checkers ask at every record, and it
	// is almost always short.
	l := s.life
	if s.Now.Sub(g.last) <= bound+s.Tol || g.flagged || g.n <= g.skip || l == nil || l.Ended() ||
		!l.StoppingAt.IsZero() && !l.StoppingAt.After(g.last.Add(bound+s.Tol)) || s.faults.Touched(g.last, 0, f2Unseen) {
		return
	}
	g.flagged = true
	r.Flag("", g.last.Add(bound), fmt.Sprintf("no %s for more than %s while running", what, bound), g.lastSeq)
}

// wire: O17. Wire conformance: the three queries exactly as §3.2, each on
// its own subscribe; only the §6 methods and paths; a well-formed TxRaw
// with a single MsgSubmitOracleData with a non-empty signature, fee denom
// agxn, gas_limit = gas.limit on a result's first broadcast, a fee of
// ceil(gas.prices × gas_limit) (§3.5 "amount: ceil(price × gas) with
// gas_limit = gas", D29; added by the second oracle audit: a fee kept at
// gas.limit's after code 11 raised the gas met code 13 and gave up), and a
// signature consistent with the chain id and account number.
type wire struct{}

func (*wire) Name() string     { return nameWire }
func (*wire) Contract() string { return "O17" }

var (
	methods = map[string]bool{methodStatus: true, methodQuery: true, methodBroadcast: true, methodSubscribe: true,
		methodUnsubscribe: true, methodUnsubscribeAll: true}
	paths   = map[string]bool{pathAccount: true, pathDocs: true, pathDoc: true, pathSubmitData: true, pathData: true}
	queries = map[string]bool{specQueryRegister: true, specQueryUpdate: true, specQueryComplete: true}
)

func (c *wire) Observe(s *State, e *history.Event, r *judge.Report) {
	switch {
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
		exercise(s, r, c, "request")
		c.call(s, e, r)
	case e.WS != nil && e.WS.Action == history.WSSubscribe:
		exercise(s, r, c, "subscription")
		if !queries[e.WS.Query] {
			r.Flag("", e.At, fmt.Sprintf("subscribe to %q, none of the three queries", e.WS.Query), e.Seq)
		}
	case e.WS != nil && e.WS.Action == history.WSClose && s.life != nil:
		if cn := s.life.conns[e.WS.Conn]; cn != nil && !cn.Closed {
			c.subscriptions(s, r, cn, e.At)
		}
	case e.Proc != nil && e.Proc.Action == history.ProcStart && s.life != nil:
		c.openConns(s, r)
	}
}

func (c *wire) Finish(s *State, r *judge.Report) {
	if s.life != nil {
		c.openConns(s, r)
	}
}

// openConns judges the connections of the current lifetime still open: at
// the lifetime's end when it exited or was killed (a process killed while
// subscribing had no time to finish), else now.
func (c *wire) openConns(s *State, r *judge.Report) {
	end, l := s.Now, s.life
	if l.Exited && l.ExitAt.Before(end) {
		end = l.ExitAt
	}
	if l.Ended() && !l.Graceful() && !l.SignalAt.IsZero() && l.SignalAt.Before(end) {
		end = l.SignalAt
	}
	for _, cn := range sortedConns(l) {
		if !cn.Closed {
			c.subscriptions(s, r, cn, end)
		}
	}
}

// subscriptions judges, when a connection ends, that a connection which
// subscribed at all subscribed to the three queries (given G to do so).
func (c *wire) subscriptions(s *State, r *judge.Report, cn *conn, end time.Time) {
	if cn.FirstSub.IsZero() || end.Sub(cn.FirstSub) < G {
		return
	}
	var missing []string
	for _, q := range []string{specQueryRegister, specQueryUpdate, specQueryComplete} {
		if _, ok := cn.Subs[q]; !ok {
			missing = append(missing, fmt.Sprintf("%q", q))
		}
	}
	if len(missing) > 0 {
		r.Flag("", end, fmt.Sprintf("connection %d never subscribed to %v", cn.ID, missing), cn.Seq)
	}
}

func sortedConns(l *Life) []*conn {
	var out []*conn
	for _, cn := range l.conns {
		out = append(out, cn)
	}
	sortBy(out, func(cn *conn) int64 { return cn.ID })
	return out
}

func (c *wire) call(s *State, e *history.Event, r *judge.Report) {
	x := e.RPC
	if !methods[x.Method] {
		r.Flag("", e.At, fmt.Sprintf("unknown method %q", x.Method), e.Seq)
		return
	}
	switch x.Method {
	case methodQuery:
		sub := func() string { // only when flagging: a string per query otherwise
			if x.Query != nil && x.Query.RequestID != 0 {
				return subj(x.Query.RequestID)
			}
			return ""
		}
		switch {
		case x.Query == nil:
			r.Flag("", e.At, "abci_query without params", e.Seq)
		case !paths[x.Query.Path]:
			r.Flag(sub(), e.At, fmt.Sprintf("abci_query on path %q", x.Query.Path), e.Seq)
		case x.Query.DecodeErr != "":
			r.Flag(sub(), e.At, fmt.Sprintf("abci_query %s with undecodable data: %s", x.Query.Path, x.Query.DecodeErr), e.Seq)
		case x.Query.Path == pathSubmitData && x.Query.Provider != "":
			// 3.3.3 and 3.5 (D3) write the on-chain check as
			// OracleSubmitData{r, n, provider: ""}: every provider's
			// submissions, self found among them.
			r.Flag(sub(), e.At, fmt.Sprintf("OracleSubmitData query with provider %s; the on-chain check asks with provider \"\" (3.3.3, 3.5)",
				x.Query.Provider), e.Seq)
		}
	case methodBroadcast:
		if msg := txProblem(s, x.Tx, s.Cur.Bcast); msg != "" {
			r.Flag(bcastSubject(s.Cur.Bcast), e.At, msg, e.Seq)
		}
	}
}

// retryGas is the gas_limit of a result's next broadcast: the last one's,
// or ceil(last × gas.adjustment) after a code 11 answer to it.
func retryGas(g *Group) uint64 {
	if g.NeedGas > 0 {
		return g.NeedGas
	}
	return g.LastGas
}

// feeMatches reports whether t's one agxn coin is ceil(prices × gas_limit).
func feeMatches(prices string, t *history.Tx) bool {
	// Every broadcast is judged: the common fee is compared as digits in
	// a buffer on the stack, not as a new string.
	if whole, frac, ok := specPlainDecimal(prices); ok {
		if fee, ok := specFeeWords(whole, frac, t.GasLimit); ok {
			var b [20]byte
			return string(strconv.AppendUint(b[:0], fee, 10)) == t.Fee[0].Amount
		}
	}
	fee, err := specFeeAmount(prices, t.GasLimit)
	return err == nil && t.Fee[0].Amount == fee
}

// txProblem says what is wrong with a broadcast tx ("" when nothing).
func txProblem(s *State, t *history.Tx, f *BcastFact) string {
	switch {
	case t == nil:
		return "broadcast_tx_sync without a tx"
	case t.DecodeErr != "":
		return "tx does not decode: " + t.DecodeErr
	case len(t.Msgs) != 1 || t.Msgs[0].Type != specTypeURLSubmit:
		return fmt.Sprintf("tx with %d messages; exactly one MsgSubmitOracleData expected", len(t.Msgs))
	case t.Msgs[0].Signature == "":
		return "MsgSubmitOracleData with an empty signature"
	case t.Memo != "" || t.TimeoutHeight != 0:
		return fmt.Sprintf("tx with memo %q and timeout_height %d; 3.5 says memo is empty, timeout_height 0", t.Memo, t.TimeoutHeight)
	case len(t.Fee) != 1 || t.Fee[0].Denom != specDenom:
		return fmt.Sprintf("fee %v; one coin in %s expected", t.Fee, specDenom)
	case f != nil && f.Model != nil && f.Group == nil && t.GasLimit != s.P.GasLimit:
		return fmt.Sprintf("gas_limit %d on a result's first broadcast; gas.limit is %d", t.GasLimit, s.P.GasLimit)
	case f != nil && f.Model != nil && f.Group != nil && f.Group.Answered && f.Group.LastGas != 0 && t.GasLimit != retryGas(f.Group):
		// 3.5 and D5: "gas = ceil(gas × gas.adjustment) for this result's
		// remaining attempts" after code 11, and only then (the third
		// oracle audit: a gas raised twice per code 11 passed O5's lower
		// bound).
		return fmt.Sprintf("gas_limit %d on a retry after gas_limit %d; 3.5 asks for %d (raised by gas.adjustment only after code 11)",
			t.GasLimit, f.Group.LastGas, retryGas(f.Group))
	case !feeMatches(s.P.GasPrices, t):
		fee, _ := specFeeAmount(s.P.GasPrices, t.GasLimit)
		return fmt.Sprintf("fee %s%s with gas_limit %d; ceil(gas.prices × gas_limit) is %s%s", t.Fee[0].Amount, specDenom,
			t.GasLimit, fee, specDenom)
	case t.Sig == history.SigInvalid:
		return "the signature does not verify for the chain id and account number"
	}
	return ""
}
