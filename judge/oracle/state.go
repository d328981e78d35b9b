package oracle

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
)

// State is what the replay knows just before each record: the SUT's
// lifetimes with the model of its jobs (model.go), the calls and GETs in
// flight, the chain's state as its records tell it, the faults, and the
// derived facts of the record being judged (Cur).
type State struct {
	// rules is the last parse rule known for each endpoint path.
	rules map[string]string
	P     Params
	Tol   time.Duration
	// Now is the latest record time seen.
	Now time.Time
	// Begin is the first record's time.
	Begin time.Time
	// Cur is what the record being judged means (set before the checkers
	// see it).
	Cur Cur
	// facts hold what Cur points to: a record's facts are read while it is
	// judged and applied, never kept, so one of each serves every record
	// (they were five allocations in every six records).
	facts struct {
		get     GetFact
		getDone GetDoneFact
		bcast   BcastFact
		acked   Ack
		answer  AnswerFact
		frame   FrameFact
	}

	// body is getDoneFact's scratch copy of a fetched body.
	body []byte
	// resolved is the GET fact's list of suspects decided (reused).
	resolved []Resolution
	// frame holds the lists the frame fact points to, reused from frame to
	// frame like the facts (moved holds the jobs moved by earlier entries
	// of a Complete frame).
	frame struct {
		ids     []uint64
		entries []oracle.CompleteEntry
		before  []*oracle.Job
		after   []oracle.Outcome
		moved   map[uint64]*oracle.Job
	}

	life  *Life
	lives int

	reqs  byID[Request]
	calls map[int64]*Call
	gets  map[int64]*Get
	// sutTxs are held by value: nothing keeps a tx past its record, and a
	// tx per broadcast was an allocation per round.
	sutTxs map[string]sutTx
	// txRounds counts the SUT's pending txs by round.
	txRounds map[[2]uint64]int
	faults   faultView
	acct     acctView

	enabledAssigned int
	// records counts the records judged so far.
	records uint64
	// freeCalls are calls answered before the record being judged, for
	// applyCall to reuse; retired is the call the last record answered,
	// free from the next record on (nothing keeps a call past its answer:
	// a call per RPC was 2 % of the oracle world's allocations).
	freeCalls []*Call
	retired   *Call
	// LastProc is the time of the last proc record (a start, signal, exit
	// or trace): the exclusions "across a stop or crash" read it.
	LastProc time.Time

	coverage map[string]map[string]int
}

func newState(p Params) *State {
	return &State{
		P:        p,
		Tol:      p.Tol(),
		calls:    map[int64]*Call{},
		gets:     map[int64]*Get{},
		sutTxs:   map[string]sutTx{},
		txRounds: map[[2]uint64]int{},
		faults:   newFaultView(),
		coverage: map[string]map[string]int{},
	}
}

// Life is one SUT process lifetime (or in-process instance).
type Life struct {
	ID        int
	Start     time.Time
	StartSeq  int64
	Signal    string // SIGTERM, SIGINT, SIGKILL, crash; "" when none
	SignalAt  time.Time
	SignalSeq int64
	Exited    bool
	// StoppingAt is when the lifetime's shutdown began by its own white-box
	// trace (shutdownCh closed): after a fatal condition a lifetime stops
	// running with no signal. Zero when none was seen.
	StoppingAt time.Time
	ExitAt     time.Time
	ExitSeq    int64
	Status     int
	// ListAt is when the first OracleRequestDocs answer of the lifetime was
	// delivered (t_L of O13); zero until then.
	ListAt time.Time
	// ListDocs is how many docs that answer listed: the load creates a
	// job for each, one at a time, before it handles a buffered frame (D15).
	ListDocs int
	ListSeq  int64
	// FatalAt is when the lifetime's WebSocket re-subscription attempts ran
	// out (retry.max_attempts consecutive refused dials or failed
	// subscribes, ORACLE-SPEC 3.2): the fatal condition of 3.7, after which
	// a non-zero exit is allowed (F1, D18). Zero when it never happened.
	FatalAt  time.Time
	FatalSeq int64

	wsFailures int // consecutive failed re-subscription attempts
	// rec is the state's count of records judged (its models' rooms read
	// it).
	rec      *uint64
	jobs     *byID[Model] // nil: the process's memory is gone
	implicit bool
	getsIn   int // GETs in flight
	bcIn     int // broadcasts in flight
	conns    map[int64]*conn
}

// Graceful reports whether the lifetime was asked to stop (SIGTERM,
// SIGINT) rather than killed.
func (l *Life) Graceful() bool { return l.Signal == "SIGTERM" || l.Signal == "SIGINT" }

// Ended reports whether the lifetime was signalled, crashed or exited.
func (l *Life) Ended() bool { return l.Signal != "" || l.Exited }

// conn is one WebSocket connection of the SUT.
type conn struct {
	ID       int64
	Seq      int64
	At       time.Time
	Subs     map[string]int64 // query → subscribe record
	FirstSub time.Time
	Closed   bool
	ClosedBy string
}

// Request is what the replay knows of one request across lifetimes: the
// chain's side (doc, completed nonce, last block time, self's commits) and
// what was delivered to the SUT about it (C_seen).
type Request struct {
	R   uint64
	Doc *Doc // the committed doc, latest first known
	// DocAt is when the moderator last changed it (a deliver record).
	DocAt time.Time
	// C is the chain's completed nonce; LastBT the block time of its last
	// Complete (whole seconds); LastAt and LastSeq that block's record.
	C       uint64
	LastBT  time.Time
	LastAt  time.Time
	LastSeq int64
	// EverAssigned: self was in the account list of some version of the
	// doc the records show.
	EverAssigned bool
	// Commits are self's committed submissions of the rounds still open,
	// by nonce.
	Commits map[uint64][]Commit
	// spareCommits is the list of a round applyBlock closed, for the next
	// round's first commit: the checkers read Commits only while they
	// judge a record, so a closed round's list is free (a new one per
	// round was an allocation per round).
	spareCommits []Commit

	seen seenNonce
	// Bogus are the message nonces of bogus-nonce updates (D10), with
	// their op records.
	Bogus []Bogus
	// PeerTrouble is the last time a peer misbehaved for this request
	// (absent, late, wrong nonce, duplicate); FailedGet the end of the last
	// GET of the SUT that failed or served a body that does not extract;
	// Hit the last F3 or F13 that hit it.
	PeerTrouble time.Time
	FailedGet   time.Time
	Hit         time.Time
	// Fetched is the value the SUT's last successful GET of the request
	// extracted (any lifetime).
	Fetched string
}

// Bogus is the message nonce of a bogus-nonce update and its op record.
type Bogus struct {
	N   uint64
	Seq int64
}

// Commit is one of self's committed submissions.
type Commit struct {
	Seq  int64
	At   time.Time
	Hash string
	// Life is the lifetime that broadcast the tx (0 when unknown).
	Life int
}

// Call is an RPC call of the SUT, from its recv record until its done
// record.
type Call struct {
	Seq    int64
	At     time.Time
	Life   *Life
	Method string
	Query  *history.Query
	Tx     *history.Tx
	// Submit is the broadcast's first MsgSubmitOracleData (nil for none);
	// Chain the result it belongs to (chainFor; nil for none).
	Submit *history.Msg
	Chain  *Result
}

// Get is one data-source GET of the SUT, from its recv record to its done
// record.
type Get struct {
	Exchange int64
	Seq      int64
	At       time.Time
	Life     *Life
	R        uint64
	Path     string
	Exec     *Execution
}

// sutTx is a tx the SUT broadcast, until it is committed, fails or leaves
// the mempool.
type sutTx struct {
	Hash     string
	Life     int
	R, N     uint64
	Admitted bool
	Seq      int64
}

func (s *State) req(r uint64) *Request {
	q := s.reqs.get(r)
	if q == nil {
		q = &Request{R: r}
		s.reqs.set(r, q)
	}
	return q
}

// Req returns what the replay knows of request r (nil: nothing yet).
func (s *State) Req(r uint64) *Request { return s.reqs.get(r) }

// Life is the current SUT lifetime (nil before the first start).
func (s *State) Life() *Life { return s.life }

// sortedReqs lists the known requests by id (map order is never used).
func (s *State) sortedReqs() []*Request { return s.reqs.sorted() }

// Doc is a recorded doc with the part the daemon reads converted once
// (RD), and what the rules say of it for self.
type Doc struct {
	*history.Doc
	RD oracle.RequestDoc
	// Assigned: self is in the account list and there is an endpoint (D8);
	// Runs: the doc is also ENABLED.
	Assigned bool
	Runs     bool
	// Paths are the endpoints' URL paths, in order.
	Paths []string
}

// doc copies a recorded doc and converts it.
func (s *State) doc(d *history.Doc) *Doc {
	c := *d
	rd := c.RequestDoc()
	x := &Doc{Doc: &c, RD: rd, Assigned: specAssigned(rd, s.P.Self)}
	x.Runs = x.Assigned && rd.Status == oracle.StatusEnabled
	for _, ep := range c.Endpoints {
		x.Paths = append(x.Paths, urlPath(ep.URL))
	}
	return x
}

// assigned reports whether d (nil: none) is assigned to self.
func (s *State) assigned(d *Doc) bool { return d != nil && d.Assigned }

// runs reports whether d (nil: none) is ENABLED and assigned to self.
func (s *State) runs(d *Doc) bool { return d != nil && d.Runs }

// ---- the record's meaning: before ----

// Cur is what the record being judged means, worked out against the state
// just before it. At most one part is set.
type Cur struct {
	Get     *GetFact
	GetDone *GetDoneFact
	Bcast   *BcastFact
	// Done is the call a done record completes (nil when it has no recv).
	Done   *Call
	Frame  *FrameFact
	Answer *AnswerFact
}

func (s *State) before(e *history.Event) {
	s.records++
	if c := s.retired; c != nil {
		*c = Call{}
		s.freeCalls = append(s.freeCalls, c)
		s.retired = nil
	}
	if s.Begin.IsZero() {
		s.Begin = e.At
	}
	if e.At.After(s.Now) {
		s.Now = e.At
	}
	s.Cur = Cur{}
	switch {
	case e.Src != nil && e.Src.Phase == history.PhaseRecv:
		s.Cur.Get = s.getFact(e)
	case e.Src != nil:
		s.Cur.GetDone = s.getDoneFact(e)
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
		if e.RPC.Method == methodBroadcast {
			s.Cur.Bcast = s.bcastFact(e)
		}
	case e.RPC != nil:
		s.Cur.Done = s.calls[e.RPC.Call]
		if s.Cur.Done != nil {
			s.Cur.Answer = s.answerFact(e, s.Cur.Done)
		}
	case e.WS != nil && e.WS.Action == history.WSFrame && e.WS.Frame != nil:
		s.Cur.Frame = s.frameFact(e)
	}
}

// ---- apply ----

func (s *State) apply(e *history.Event) {
	switch {
	case e.Proc != nil:
		s.applyProc(e)
	case e.RPC != nil && e.RPC.Phase == history.PhaseRecv:
		s.applyCall(e)
	case e.RPC != nil:
		s.applyDone(e)
	case e.WS != nil:
		s.applyWS(e)
	case e.CheckTx != nil:
		s.applyCheckTx(e)
	case e.Block != nil:
		s.applyBlock(e)
	case e.Deliver != nil:
		s.applyDeliver(e)
	case e.Evict != nil:
		s.applyEvict(e)
	case e.Op != nil:
		s.applyOp(e)
	case e.Peer != nil:
		if e.Peer.Behaviour != history.PeerPrompt {
			s.req(e.Peer.RequestID).PeerTrouble = e.At
		}
	case e.Src != nil && e.Src.Phase == history.PhaseRecv:
		s.applyGet(e)
	case e.Src != nil:
		s.applyGetDone(e)
	case e.Fault != nil:
		s.applyFault(e)
	case e.White != nil && e.White.Point == history.WhiteClose && e.White.Name == "shutdownCh":
		if l := s.lifeOf(e); l != nil && l.StoppingAt.IsZero() {
			l.StoppingAt = e.At // the reference's shutdown began (a fatal condition, or a signal)
		}
	}
}

// lifeOf is the lifetime a SUT record belongs to: its Life when the
// producer stamped one we know, else the current one.
func (s *State) lifeOf(e *history.Event) *Life {
	if s.life == nil {
		// Records before any start record: an implicit first lifetime,
		// which the first start record then names.
		s.startLife(1, e.At, 0)
		s.life.implicit = true
	}
	return s.life
}

func (s *State) startLife(id int, at time.Time, seq int64) {
	if s.life != nil && s.life.implicit && s.life.StartSeq == 0 {
		s.life.ID, s.life.Start, s.life.StartSeq, s.life.implicit = id, at, seq, false
		s.lives = max(s.lives, id)
		return
	}
	if s.life != nil {
		s.life.jobs = nil // a dead process's memory is gone
		s.life.conns = nil
	}
	if id <= s.lives {
		id = s.lives + 1
	}
	s.lives = id
	s.life = &Life{ID: id, Start: at, StartSeq: seq, jobs: &byID[Model]{}, conns: map[int64]*conn{}, rec: &s.records}
}

func (s *State) applyProc(e *history.Event) {
	p := e.Proc
	s.LastProc = e.At
	switch p.Action {
	case history.ProcStart:
		id := e.Life
		if id == 0 {
			id = s.lives + 1
		}
		s.startLife(id, e.At, e.Seq)
	case history.ProcSignal:
		l := s.lifeOf(e)
		if l.Signal == "" {
			l.Signal, l.SignalAt, l.SignalSeq = p.Signal, e.At, e.Seq
		}
	case history.ProcExit:
		l := s.lifeOf(e)
		if !l.Exited {
			l.Exited, l.ExitAt, l.ExitSeq, l.Status = true, e.At, e.Seq, p.Status
		}
	}
}

// The RPC methods of ORACLE-SPEC 6.3.
const (
	methodStatus         = "status"
	methodQuery          = "abci_query"
	methodBroadcast      = "broadcast_tx_sync"
	methodSubscribe      = "subscribe"
	methodUnsubscribe    = "unsubscribe"
	methodUnsubscribeAll = "unsubscribe_all"
)

// The query paths of ORACLE-SPEC 6.5.
const (
	pathAccount    = "/cosmos.auth.v1beta1.Query/Account"
	pathDocs       = "/guru.oracle.v1.Query/OracleRequestDocs"
	pathDoc        = "/guru.oracle.v1.Query/OracleRequestDoc"
	pathSubmitData = "/guru.oracle.v1.Query/OracleSubmitData"
	pathData       = "/guru.oracle.v1.Query/OracleData"
)

func (s *State) applyCall(e *history.Event) {
	l := s.lifeOf(e)
	var c *Call
	if n := len(s.freeCalls); n > 0 {
		c, s.freeCalls = s.freeCalls[n-1], s.freeCalls[:n-1]
	} else {
		c = &Call{}
	}
	*c = Call{Seq: e.Seq, At: e.At, Life: l, Method: e.RPC.Method, Query: e.RPC.Query, Tx: e.RPC.Tx}
	if c.Method == methodBroadcast {
		l.bcIn++
		c.Submit = submitMsg(c.Tx)
		if c.Tx != nil && c.Tx.Hash != "" && c.Submit != nil {
			s.addTx(sutTx{Hash: c.Tx.Hash, Life: l.ID, R: c.Submit.RequestID, N: c.Submit.Nonce, Seq: e.Seq})
		}
		if b := s.Cur.Bcast; b != nil && b.Model != nil {
			c.Chain = b.Model.noteBroadcast(s, b)
		}
	}
	s.calls[e.RPC.Call] = c
}

// submitMsg is a tx's first MsgSubmitOracleData.
func submitMsg(t *history.Tx) *history.Msg {
	if t == nil {
		return nil
	}
	for i := range t.Msgs {
		if t.Msgs[i].Type == specTypeURLSubmit {
			return &t.Msgs[i]
		}
	}
	return nil
}

func (s *State) applyDone(e *history.Event) {
	c := s.calls[e.RPC.Call]
	if c == nil {
		return
	}
	delete(s.calls, e.RPC.Call)
	s.retired = c
	if c.Method == methodBroadcast && c.Life.bcIn > 0 {
		c.Life.bcIn--
	}
	a := s.Cur.Answer
	if a == nil {
		return
	}
	switch {
	case c.Method == methodBroadcast:
		s.applyBroadcastAnswer(e, c, a)
	case c.Method == methodQuery && c.Query != nil:
		s.applyQueryAnswer(e, c, a)
	}
}

func (s *State) applyWS(e *history.Event) {
	w := e.WS
	l := s.lifeOf(e)
	switch w.Action {
	case history.WSConnect:
		l.conns[w.Conn] = &conn{ID: w.Conn, Seq: e.Seq, At: e.At, Subs: map[string]int64{}}
	case history.WSRefuse:
		s.wsFailed(e, l)
	case history.WSSubscribe:
		c := l.conns[w.Conn]
		if c == nil {
			c = &conn{ID: w.Conn, Seq: e.Seq, At: e.At, Subs: map[string]int64{}}
			l.conns[w.Conn] = c
		}
		if w.Err != "" {
			s.wsFailed(e, l)
			break
		}
		if c.FirstSub.IsZero() {
			c.FirstSub = e.At
		}
		if _, ok := c.Subs[w.Query]; !ok {
			c.Subs[w.Query] = e.Seq
		}
		if len(c.Subs) >= specSubscriptions {
			l.wsFailures = 0 // re-subscribed: the count starts again
		}
	case history.WSClose:
		if c := l.conns[w.Conn]; c != nil && !c.Closed {
			c.Closed, c.ClosedBy = true, w.By
		}
	case history.WSFrame:
		if f := s.Cur.Frame; f != nil {
			s.applyFrame(e, l, f)
		}
	}
}

// wsFailed counts one failed re-subscription attempt of l; the
// retry.max_attempts-th in a row is the fatal condition (ORACLE-SPEC 3.7).
func (s *State) wsFailed(e *history.Event, l *Life) {
	l.wsFailures++
	if l.FatalAt.IsZero() && specResubscribeExhausted(l.wsFailures, s.P.MaxAttempts) {
		l.FatalAt, l.FatalSeq = e.At, e.Seq
	}
}

func (s *State) applyCheckTx(e *history.Event) {
	c := e.CheckTx
	if c.Origin != history.OriginSUT {
		return
	}
	t, ok := s.sutTxs[c.Tx.Hash]
	if !ok {
		return
	}
	if c.RPCError == "" && c.Code == 0 {
		t.Admitted = true
		s.sutTxs[c.Tx.Hash] = t
		return
	}
	if !strings.Contains(c.RPCError, specRPCTxInCache) {
		s.dropTx(c.Tx.Hash) // not admitted (a cache hit leaves the first copy where it is)
	}
}

func (s *State) applyBlock(e *history.Event) {
	for _, c := range e.Block.Completes {
		q := s.req(c.RequestID)
		if c.Nonce > q.C {
			q.C = c.Nonce
		}
		q.LastBT = time.Unix(c.BlockTime, 0).UTC()
		q.LastAt, q.LastSeq = e.At, e.Seq
		for n, cs := range q.Commits {
			if n <= q.C {
				delete(q.Commits, n) // a closed round can take no further commit
				q.spareCommits = cs[:0]
			}
		}
	}
}

func (s *State) applyDeliver(e *history.Event) {
	d := e.Deliver
	if d.Code == 0 {
		for i := range d.Docs {
			s.setDoc(&d.Docs[i], e.At)
		}
		for _, m := range d.Msgs {
			if m.Type == specTypeURLSubmit && m.Provider == s.P.Self {
				q := s.req(m.RequestID)
				if q.Commits == nil {
					q.Commits = map[uint64][]Commit{}
				}
				life := 0
				if t, ok := s.sutTxs[d.Hash]; ok {
					life = t.Life
				}
				cs, ok := q.Commits[m.Nonce]
				if !ok {
					cs, q.spareCommits = q.spareCommits, nil
				}
				q.Commits[m.Nonce] = append(cs, Commit{Seq: e.Seq, At: e.At, Hash: d.Hash, Life: life})
			}
		}
	}
	s.dropTx(d.Hash)
}

func (s *State) addTx(t sutTx) {
	if _, ok := s.sutTxs[t.Hash]; ok {
		s.dropTx(t.Hash)
	}
	s.sutTxs[t.Hash] = t
	s.txRounds[[2]uint64{t.R, t.N}]++
}

func (s *State) dropTx(hash string) {
	t, ok := s.sutTxs[hash]
	if !ok {
		return
	}
	delete(s.sutTxs, hash)
	k := [2]uint64{t.R, t.N}
	if s.txRounds[k] <= 1 {
		delete(s.txRounds, k)
	} else {
		s.txRounds[k]--
	}
}

// setDoc records a committed version of a doc (from a deliver record) and
// keeps the count of ENABLED assigned requests.
func (s *State) setDoc(d *history.Doc, at time.Time) {
	q := s.req(d.RequestID)
	if s.runs(q.Doc) {
		s.enabledAssigned--
	}
	q.Doc = s.doc(d)
	q.DocAt = at
	if s.assigned(q.Doc) || slices.Contains(d.AccountList, s.P.Self) {
		q.EverAssigned = true
	}
	if s.runs(q.Doc) {
		s.enabledAssigned++
	}
	s.faults.setOverPool(s.enabledAssigned > s.P.PoolSize, at)
}

// learnDoc records a doc an answer showed, when the records have not shown
// it committed yet (a doc that existed before the run).
func (s *State) learnDoc(d *history.Doc, at time.Time) {
	q := s.req(d.RequestID)
	if q.Doc == nil {
		s.setDoc(d, at)
		q.DocAt = time.Time{}
	}
	if slices.Contains(d.AccountList, s.P.Self) {
		q.EverAssigned = true
	}
	if d.Nonce > q.C {
		q.C = d.Nonce
	}
}

func (s *State) applyEvict(e *history.Event) {
	v := e.Evict
	if t, ok := s.sutTxs[v.Hash]; ok {
		if v.Cause == history.EvictFault {
			s.req(t.R).Hit = e.At // F13: the round now waits for the watchdog
		}
		s.dropTx(v.Hash)
	}
}

func (s *State) applyOp(e *history.Event) {
	o := e.Op
	if o.Action == history.OpBogusUpdate {
		q := s.req(o.RequestID)
		q.Bogus = append(q.Bogus, Bogus{N: o.Doc.Nonce, Seq: e.Seq})
		if len(q.Bogus) > 4 {
			q.Bogus = q.Bogus[len(q.Bogus)-4:]
		}
	}
}

func (s *State) applyFault(e *history.Event) {
	f := e.Fault
	s.faults.apply(f, e.At)
	if f.ID != "F3" && f.ID != "F13" {
		return
	}
	if rs, all := faultRequests(f); all {
		for _, q := range s.sortedReqs() {
			q.Hit = e.At
		}
	} else {
		for _, r := range rs {
			s.req(r).Hit = e.At
		}
	}
}

// ---- C_seen: Complete nonces delivered to the SUT ----

// seenNonce is the highest Complete nonce of one request delivered to the
// SUT, as of a time that only moves forward: deliveries newer than the
// time asked about wait in recent.
type seenNonce struct {
	hi     uint64
	hiSeq  int64
	recent []stamp
}

type stamp struct {
	at  time.Time
	n   uint64
	seq int64
}

func (x *seenNonce) add(at time.Time, n uint64, seq int64) {
	x.by(at.Add(-G)) // no later question looks further back: fold what is older
	x.recent = append(x.recent, stamp{at, n, seq})
}

// by returns the highest nonce delivered at or before t (t never goes
// back between calls).
func (x *seenNonce) by(t time.Time) (uint64, int64) {
	i := 0
	for ; i < len(x.recent) && !x.recent[i].at.After(t); i++ {
		if x.recent[i].n > x.hi {
			x.hi, x.hiSeq = x.recent[i].n, x.recent[i].seq
		}
	}
	// The rest moves to the front, so that the next add appends in place
	// (resliced from the front, the list reallocated at every add).
	x.recent = x.recent[:copy(x.recent, x.recent[i:])]
	return x.hi, x.hiSeq
}

// ---- faults ----

// overPool is a pseudo fault, open while more ENABLED assigned requests
// exist than pool_size: the exclusions treat it like a fault window.
const overPool = "over-pool"

// f2Unseen is a pseudo fault, open while an F2 window whose calls may not
// reach the chain's records is (any mode but "hang": a dropped or refused
// connection leaves no recv record). The gap checkers (O9, O18) excuse
// only those: a hanging call is recorded when it is sent, so its gap to
// the next call is the daemon's own.
const f2Unseen = "F2 unseen"

// faultView knows which fault windows are open and when each kind last
// ended (a point fault ends where it happens).
type faultView struct {
	open    map[string]int
	lastEnd map[string]time.Time
	// ever are the fault kinds seen, sorted (TouchedAny reads them on
	// many records; a set's keys were sorted anew each time).
	ever []string
}

func newFaultView() faultView {
	return faultView{open: map[string]int{}, lastEnd: map[string]time.Time{}}
}

// seen adds id to ever.
func (f *faultView) seen(id string) {
	if i, found := slices.BinarySearch(f.ever, id); !found {
		f.ever = slices.Insert(f.ever, i, id)
	}
}

func (f *faultView) apply(x *history.Fault, at time.Time) {
	if x.ID == "F2" && (x.Phase == history.FaultStart && !hangs(x) || x.Phase == history.FaultEnd && f.open[f2Unseen] > 0) {
		f.apply(&history.Fault{ID: f2Unseen, Phase: x.Phase}, at)
	}
	f.seen(x.ID)
	switch x.Phase {
	case history.FaultStart:
		f.open[x.ID]++
	case history.FaultEnd:
		if f.open[x.ID] > 0 {
			f.open[x.ID]--
		}
		f.lastEnd[x.ID] = at
	default:
		f.lastEnd[x.ID] = at
	}
}

// hangs reports whether an RPC outage leaves the calls hanging (recorded
// when sent), by its mode parameter.
func hangs(x *history.Fault) bool {
	return slices.ContainsFunc(x.Params, func(p history.Param) bool { return p.Key == "mode" && p.Value == "hang" })
}

func (f *faultView) setOverPool(over bool, at time.Time) {
	switch {
	case over && f.open[overPool] == 0:
		f.open[overPool] = 1
		f.seen(overPool)
	case !over && f.open[overPool] > 0:
		f.open[overPool] = 0
		f.lastEnd[overPool] = at
	}
}

// Active reports whether a window of fault id is open.
func (f *faultView) Active(id string) bool { return f.seenKind(id) && f.open[id] > 0 }

// seenKind reports whether a fault of kind id was seen: only then can a
// window of it be open or have ended. The checkers ask about kinds on
// many records, mostly of kinds a run never shows, and a look in the
// short sorted list costs less than in the maps.
func (f *faultView) seenKind(id string) bool {
	_, found := slices.BinarySearch(f.ever, id)
	return found
}

// Touched reports whether a fault of one of ids was active at some time
// in [since, now], counting each window as lasting margin past its end.
func (f *faultView) Touched(since time.Time, margin time.Duration, ids ...string) bool {
	for _, id := range ids {
		if !f.seenKind(id) {
			continue
		}
		if f.open[id] > 0 {
			return true
		}
		if end, ok := f.lastEnd[id]; ok && !end.Add(margin).Before(since) {
			return true
		}
	}
	return false
}

// TouchedAny is Touched over every fault kind seen (the pseudo fault
// over-pool included).
func (f *faultView) TouchedAny(since time.Time, margin time.Duration) bool {
	return f.Touched(since, margin, f.ever...)
}

// faultRequests lists the requests a fault names in its "request"
// parameters (decimal ids, one per parameter or comma-separated); all is
// true when it names none: the fault hits every request.
func faultRequests(f *history.Fault) (rs []uint64, all bool) {
	for _, p := range f.Params {
		if p.Key != "request" {
			continue
		}
		for _, v := range strings.Split(p.Value, ",") {
			if r, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
				rs = append(rs, r)
			}
		}
	}
	return rs, len(rs) == 0
}

// ---- sequences (O8) ----

// acctView holds the SUT's sequence facts: A, the last Account sequence
// delivered; S, the sequences acknowledged with code 0 or 19 (as their
// maximum and the "dirty" ones no later Account answer at or below them
// has cleared for reuse).
type acctView struct {
	A      uint64
	AKnown bool
	ASeq   int64
	MaxS   uint64
	SKnown bool
	dirty  []ackedSeq // by Q
}

type ackedSeq struct {
	Q   uint64
	Seq int64
}

func (a *acctView) ack(q uint64, seq int64) {
	if !a.SKnown || q > a.MaxS {
		a.MaxS, a.SKnown = q, true
	}
	if n := len(a.dirty); n == 0 || a.dirty[n-1].Q < q {
		a.dirty = append(a.dirty, ackedSeq{q, seq}) // the usual next sequence
		return
	}
	i, found := slices.BinarySearchFunc(a.dirty, q, func(x ackedSeq, q uint64) int {
		switch {
		case x.Q < q:
			return -1
		case x.Q > q:
			return 1
		}
		return 0
	})
	if found {
		a.dirty[i].Seq = seq
		return
	}
	a.dirty = slices.Insert(a.dirty, i, ackedSeq{q, seq})
}

func (a *acctView) account(v uint64, seq int64) {
	a.A, a.AKnown, a.ASeq = v, true, seq
	i := sort.Search(len(a.dirty), func(i int) bool { return a.dirty[i].Q >= v })
	a.dirty = a.dirty[:i]
}

// Reused returns the acknowledgement q would reuse (ok false when q may be
// used).
func (a *acctView) Reused(q uint64) (ackedSeq, bool) {
	if n := len(a.dirty); n == 0 || a.dirty[n-1].Q < q {
		return ackedSeq{}, false // the usual next sequence: above every one acknowledged
	}
	i := sort.Search(len(a.dirty), func(i int) bool { return a.dirty[i].Q >= q })
	if i < len(a.dirty) && a.dirty[i].Q == q {
		return a.dirty[i], true
	}
	return ackedSeq{}, false
}
