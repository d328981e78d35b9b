package oracle

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/judge"
)

// A history builder for the checkers' tests: it writes the records of
// §4.10 at given offsets from t0 (in any order; build sorts them by time,
// keeping the order of records at the same time) and plays a small
// scripted daemon and chain on top, so a test composes a healthy run and
// then bends one thing.

const (
	self  = "guru1selfselfselfselfselfselfselfself0a"
	peer  = "guru1peerpeerpeerpeerpeerpeerpeerpeer0b"
	other = "guru1otherotherotherotherotherotherot0c"
	rule  = "data.price"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
func sec(n float64) time.Duration {
	return time.Duration(n * float64(time.Second))
}

type rec struct {
	at   time.Duration
	prio int
	e    history.Event
}

type hb struct {
	recs []rec
	// manualProbes: the test writes the health check's status calls
	// itself; probesAdded: build added them.
	manualProbes, probesAdded bool
	call                      int64
	exch                      int64
	life                      int
	hash                      int
	q                         uint64 // the SUT's next sequence
	// seqs are the sequence facts in the order written: each Account
	// answer's value, and after each acknowledged broadcast its sequence
	// + 1 (periodic's Account answers report the sequence as of their time).
	seqs []seqAt
	// the chain: completed nonces, pending blocks
	C      map[uint64]uint64
	blocks map[time.Duration]*blk
	// drop suppresses the Complete frames of these block times (F3).
	drop map[time.Duration]bool
	// value numbers the data-source answers
	value int
}

type seqAt struct {
	at  time.Duration
	seq uint64
}

// seqBy is the account's sequence as the facts written give it at at.
func (b *hb) seqBy(at time.Duration) uint64 {
	var q uint64
	var last time.Duration = -1
	for _, f := range b.seqs {
		if f.at < at && f.at >= last {
			q, last = f.seq, f.at
		}
	}
	return q
}

type blk struct {
	completes []history.Complete
	delivers  []history.Deliver
}

func newHB() *hb {
	return &hb{C: map[uint64]uint64{}, blocks: map[time.Duration]*blk{}, drop: map[time.Duration]bool{}}
}

func (b *hb) add(at time.Duration, e history.Event) {
	b.recs = append(b.recs, rec{at: at, e: e})
}

// healthChecks adds what a running daemon's health check does: a status
// call 30 s after each lifetime's start and every 30 s after, until its
// signal or exit (or the last record) — unless the test writes its own
// (manualProbes).
func (b *hb) healthChecks() {
	if b.manualProbes || b.probesAdded {
		return
	}
	b.probesAdded = true
	type span struct{ from, to time.Duration }
	lives := map[int]*span{}
	var order []int
	var last time.Duration
	for _, r := range b.recs {
		last = max(last, r.at)
		p := r.e.Proc
		if p == nil {
			continue
		}
		switch {
		case p.Action == history.ProcStart:
			lives[r.e.Life] = &span{from: r.at, to: -1}
			order = append(order, r.e.Life)
		case (p.Action == history.ProcSignal || p.Action == history.ProcExit) && lives[r.e.Life] != nil && lives[r.e.Life].to < 0:
			lives[r.e.Life].to = r.at
		}
	}
	saved := b.life
	for _, l := range order {
		sp := lives[l]
		if sp.to < 0 {
			sp.to = last
		}
		b.life = l
		for at := sp.from + 30*time.Second; at < sp.to; at += 30 * time.Second {
			b.status(at)
		}
	}
	b.life = saved
}

// build emits the blocks, sorts every record by time and numbers them.
func (b *hb) build() []history.Event {
	b.healthChecks()
	recs := slices.Clone(b.recs)
	var times []time.Duration
	for at := range b.blocks {
		times = append(times, at)
	}
	slices.Sort(times)
	h := int64(0)
	for _, at := range times {
		h++
		bl := b.blocks[at]
		cs := slices.Clone(bl.completes)
		for i := range cs {
			cs[i].BlockHeight = h
		}
		recs = append(recs, rec{at: at, prio: -2, e: history.Event{Kind: history.KindBlock,
			Block: &history.Block{Height: h, Time: t0.Add(at), Completes: cs, Txs: len(bl.delivers)}}})
		for i, d := range bl.delivers {
			d.Height, d.Index = h, i
			recs = append(recs, rec{at: at, prio: -1, e: history.Event{Kind: history.KindDeliver, Deliver: &d}})
		}
		if len(cs) > 0 && !b.drop[at] {
			recs = append(recs, rec{at: at + ms(5), e: completeFrame(at, cs...)})
		}
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].at != recs[j].at {
			return recs[i].at < recs[j].at
		}
		return recs[i].prio < recs[j].prio
	})
	out := make([]history.Event, len(recs))
	for i, r := range recs {
		e := r.e
		e.Seq = int64(i + 1)
		e.At = t0.Add(r.at)
		out[i] = e
	}
	return out
}

// ---- documents and bodies ----

func doc(r uint64, period uint32, accounts []string, endpoints int) history.Doc {
	d := history.Doc{RequestID: r, OracleType: 4, Name: "req", Period: period, AccountList: accounts, Quorum: 2,
		AggregationRule: 1, Status: int32(oracle.StatusEnabled)}
	for k := 0; k < endpoints; k++ {
		d.Endpoints = append(d.Endpoints, history.Endpoint{URL: fmt.Sprintf("http://127.0.0.1:9/r/%d/e/%d", r, k), ParseRule: rule})
	}
	return d
}

func path(r uint64, k int) string { return fmt.Sprintf("/r/%d/e/%d", r, k) }

// body is a data-source answer with a value of ten significant digits.
func (b *hb) body() (string, string) {
	b.value++
	v := fmt.Sprintf("%d.%06d", 1000+b.value, 123457+b.value)
	return fmt.Sprintf(`{"data":{"price":%s,"other":1},"ts":1}`, v), v
}

// lastValue is the value of the last body served.
func (b *hb) lastValue() string {
	return fmt.Sprintf("%d.%06d", 1000+b.value, 123457+b.value)
}

// ---- the process ----

func (b *hb) start(at time.Duration) {
	b.life++
	b.add(at, history.Event{Kind: history.KindProc, Life: b.life, Proc: &history.Proc{Action: history.ProcStart, Detail: "in-process"}})
}

func (b *hb) signal(at time.Duration, sig string) {
	b.add(at, history.Event{Kind: history.KindProc, Life: b.life, Proc: &history.Proc{Action: history.ProcSignal, Signal: sig}})
}

func (b *hb) exit(at time.Duration, status int) {
	b.add(at, history.Event{Kind: history.KindProc, Life: b.life, Proc: &history.Proc{Action: history.ProcExit, Status: status}})
}

func (b *hb) white(at time.Duration, point history.WhitePoint, name string) {
	b.add(at, history.Event{Kind: history.KindWhite, Life: b.life, White: &history.White{Point: point, Name: name}})
}

func (b *hb) goroutines(at time.Duration, detail string, n int64) {
	b.add(at, history.Event{Kind: history.KindWhite, Life: b.life, White: &history.White{Point: history.WhiteGoroutines, Value: n, Detail: detail}})
}

func (b *hb) fault(at time.Duration, id string, phase history.FaultPhase, requests ...uint64) {
	f := &history.Fault{ID: id, Phase: phase}
	for _, r := range requests {
		f.Params = append(f.Params, history.Param{Key: "request", Value: strconv.FormatUint(r, 10)})
	}
	b.add(at, history.Event{Kind: history.KindFault, Fault: f})
}

// ---- the WebSocket ----

func (b *hb) ws(at time.Duration, w *history.WS) {
	b.add(at, history.Event{Kind: history.KindWS, Life: b.life, WS: w})
}

func (b *hb) connect(at time.Duration, conn int64) {
	b.ws(at, &history.WS{Conn: conn, Action: history.WSConnect})
	for i, q := range []string{oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete} {
		b.ws(at+ms(i+1), &history.WS{Conn: conn, Action: history.WSSubscribe, Query: q, ID: strconv.Itoa(i)})
	}
}

func (b *hb) closeWS(at time.Duration, conn int64, by string) {
	b.ws(at, &history.WS{Conn: conn, Action: history.WSClose, By: by})
}

func completeFrame(at time.Duration, cs ...history.Complete) history.Event {
	ev := map[string][]string{oracle.KeyTMEvent: {"NewBlock"}}
	for _, c := range cs {
		ev[oracle.KeyCompleteID] = append(ev[oracle.KeyCompleteID], strconv.FormatUint(c.RequestID, 10))
		ev[oracle.KeyCompleteNonce] = append(ev[oracle.KeyCompleteNonce], strconv.FormatUint(c.Nonce, 10))
		ev[oracle.KeyCompleteBlockTime] = append(ev[oracle.KeyCompleteBlockTime], strconv.FormatInt(c.BlockTime, 10))
		ev[oracle.KeyCompleteRawData] = append(ev[oracle.KeyCompleteRawData], c.RawData)
	}
	return history.Event{Kind: history.KindWS, WS: &history.WS{Conn: 1, Action: history.WSFrame, Query: oracle.QueryComplete,
		Frame: &history.Frame{Type: "NewBlock", Events: ev, Published: t0.Add(at)}}}
}

// txFrame delivers a Register or Update frame for request r.
func (b *hb) txFrame(at time.Duration, update bool, r uint64) {
	key, q, action := oracle.KeyRegisterID, oracle.QueryRegister, oracle.TypeURLRegister
	if update {
		key, q, action = oracle.KeyUpdateID, oracle.QueryUpdate, oracle.TypeURLUpdate
	}
	ev := map[string][]string{oracle.KeyTMEvent: {"Tx"}, oracle.KeyAction: {action}, key: {strconv.FormatUint(r, 10)}}
	b.ws(at, &history.WS{Conn: 1, Action: history.WSFrame, Query: q, Frame: &history.Frame{Type: "Tx", Events: ev}})
}

// ---- RPC ----

// rpc records a call received at at and answered at done (lost when res is
// nil).
func (b *hb) rpc(at, done time.Duration, method string, q *history.Query, tx *history.Tx, res *history.RPCResult) int64 {
	b.call++
	c := b.call
	b.add(at, history.Event{Kind: history.KindRPC, Life: b.life, RPC: &history.RPC{Call: c, Phase: history.PhaseRecv, Method: method, Query: q, Tx: tx}})
	d := &history.RPC{Call: c, Phase: history.PhaseDone, Method: method, Result: res, TRecv: t0.Add(at)}
	if res == nil {
		d.Lost = true
	} else {
		d.TDelivered = t0.Add(done)
	}
	b.add(done, history.Event{Kind: history.KindRPC, Life: b.life, RPC: d})
	return c
}

func (b *hb) status(at time.Duration) {
	b.rpc(at, at+ms(1), methodStatus, nil, nil, &history.RPCResult{Network: oracle.DefaultChainID})
}

func (b *hb) account(at time.Duration, seq uint64) {
	b.seqs = append(b.seqs, seqAt{at + ms(1), seq})
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathAccount, Address: self},
		nil, &history.RPCResult{Value: &history.QueryValue{Account: &history.Account{Address: self, AccountNumber: 7, Sequence: seq}}})
}

func (b *hb) failedAccount(at time.Duration) {
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathAccount, Address: self}, nil, &history.RPCResult{ErrCode: -32603, ErrMessage: "Internal error"})
}

func (b *hb) list(at time.Duration, docs ...history.Doc) {
	for _, d := range docs {
		if d.Nonce > b.C[d.RequestID] {
			b.C[d.RequestID] = d.Nonce
		}
	}
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathDocs, Status: int32(oracle.StatusEnabled)},
		nil, &history.RPCResult{Value: &history.QueryValue{Docs: docs}})
}

func (b *hb) docAnswer(at time.Duration, d history.Doc) {
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathDoc, RequestID: d.RequestID}, nil,
		&history.RPCResult{Value: &history.QueryValue{Doc: &d}})
}

func (b *hb) notFound(at time.Duration, r uint64) {
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathDoc, RequestID: r}, nil,
		&history.RPCResult{Code: 18, Codespace: "sdk", Log: "not exist RequestDoc: invalid request"})
}

func (b *hb) onChain(at time.Duration, r, n uint64, listed bool) {
	v := &history.QueryValue{Submissions: []history.Submission{}}
	if listed {
		v.Submissions = append(v.Submissions, history.Submission{RequestID: r, Nonce: n, Provider: self, RawData: "1"})
	}
	b.rpc(at, at+ms(1), methodQuery, &history.Query{Path: pathSubmitData, RequestID: r, Nonce: n}, nil, &history.RPCResult{Value: v})
}

// boot starts a lifetime at at: start, WebSocket with three subscriptions,
// the status probe, the sequence sync and the load (list answer at at +
// 10 ms, which it returns, then each creation's on-chain check).
func (b *hb) boot(at time.Duration, docs ...history.Doc) time.Duration {
	b.start(at)
	b.connect(at, int64(b.life))
	b.status(at + ms(4))
	b.account(at+ms(6), b.q)
	b.list(at+ms(9), docs...)
	for _, d := range docs {
		if slices.Contains(d.AccountList, self) {
			b.onChain(at+ms(10), d.RequestID, d.Nonce+1, false) // the creation's check (3.3.3)
		}
	}
	return at + ms(10)
}

// ---- GETs ----

type getRes struct {
	status int
	class  string
	body   string
	abort  bool
}

func ok(body string) getRes { return getRes{status: 200, class: "ok", body: body} }
func failed() getRes        { return getRes{status: 503, class: "status", body: "busy"} }
func malformed() getRes     { return getRes{status: 200, class: "malformed", body: `{"data":`} }
func (b *hb) okValue() (getRes, string) {
	body, v := b.body()
	return ok(body), v
}

// get records a GET received at at and answered after d.
func (b *hb) get(at, d time.Duration, r uint64, p string, res getRes) {
	b.exch++
	x := b.exch
	b.add(at, history.Event{Kind: history.KindSrc, Src: &history.Src{Exchange: x, Phase: history.PhaseRecv, RequestID: r, Path: p,
		Headers: []history.Header{{Name: "Accept", Value: "application/json"}}}})
	b.add(at+d, history.Event{Kind: history.KindSrc, Src: &history.Src{Exchange: x, Phase: history.PhaseDone, RequestID: r, Path: p,
		Class: res.class, Status: res.status, Body: res.body, TRecv: t0.Add(at), Aborted: res.abort}})
}

// ---- broadcasts and the chain ----

type answer struct {
	code uint32
	lost bool
	rpc  string // a JSON-RPC error's data
}

func code(c uint32) answer { return answer{code: c} }

// submitTx is the SUT's tx for (r, n).
func (b *hb) submitTx(r, n uint64, seq, gas uint64, raw string) history.Tx {
	b.hash++
	fee, err := oracle.FeeAmount(oracle.DefaultConfig("").Gas.Prices, gas)
	if err != nil {
		panic(err)
	}
	return history.Tx{Hash: fmt.Sprintf("%064X", b.hash), Signer: self, Signers: 1, Signatures: 1, Sequence: seq, SignMode: 1,
		GasLimit: gas, Fee: []history.Coin{{Denom: "agxn", Amount: fee}},
		Msgs: []history.Msg{{Type: oracle.TypeURLSubmit, Signer: self, RequestID: r, Nonce: n, RawData: raw, Provider: self, Signature: "ab"}},
		Sig:  history.SigStandIn}
}

// bcast records a broadcast of tx at at, answered 1 ms later, and its
// admission at the chain when the answer says so.
func (b *hb) bcast(at time.Duration, tx history.Tx, a answer) {
	var res *history.RPCResult
	switch {
	case a.lost:
	case a.rpc != "":
		res = &history.RPCResult{ErrCode: -32603, ErrMessage: "Internal error", ErrData: a.rpc}
	default:
		res = &history.RPCResult{Code: a.code, Hash: tx.Hash}
	}
	t := tx
	b.rpc(at, at+ms(1), methodBroadcast, nil, &t, res)
	if !a.lost && (a.rpc == "" && (a.code == 0 || a.code == oracle.CodeTxInMempoolCache) || strings.Contains(a.rpc, oracle.RPCErrTxInCache)) {
		b.seqs = append(b.seqs, seqAt{at + ms(1), tx.Sequence + 1})
	}
	ct := &history.CheckTx{Origin: history.OriginSUT, Tx: tx, Code: a.code}
	if a.rpc != "" {
		ct.RPCError = a.rpc
	}
	b.add(at, history.Event{Kind: history.KindCheckTx, CheckTx: ct})
}

func (b *hb) block(at time.Duration) *blk {
	bl := b.blocks[at]
	if bl == nil {
		bl = &blk{}
		b.blocks[at] = bl
	}
	return bl
}

// commit includes tx in the block at at with code c.
func (b *hb) commit(at time.Duration, tx history.Tx, c uint32) {
	bl := b.block(at)
	bl.delivers = append(bl.delivers, history.Deliver{Hash: tx.Hash, Origin: history.OriginSUT, Signer: tx.Signer,
		Sequence: tx.Sequence, GasLimit: tx.GasLimit, Fee: tx.Fee, Code: c, Msgs: tx.Msgs})
}

// complete completes round n of r in the block at at, with the providers
// given.
func (b *hb) complete(at time.Duration, r, n uint64, providers ...string) {
	bl := b.block(at)
	bl.completes = append(bl.completes, history.Complete{RequestID: r, Nonce: n, RawData: "1", BlockTime: t0.Add(at).Unix(),
		Providers: providers, Values: make([]string, len(providers))})
	b.C[r] = n
}

// ceilSec is the next whole second at or after d.
func ceilSec(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// ro are the options of a round; the zero value is a healthy round.
type ro struct {
	endpoint int
	getDur   time.Duration // 20 ms
	raw      string        // the value submitted instead of the one fetched
	nonce    uint64        // the nonce submitted instead of C + 1
	seq      *uint64       // the sequence used instead of the SUT's next
	gas      uint64        // 70000
	noBcast  bool          // fetch, but never broadcast
	answer   *answer       // the broadcast's answer (code 0)
	peers    []string      // the providers of the Complete ({peer, self})
}

// round plays one round of r at at (the execution's start): a GET
// answered after 20 ms, the on-chain check, the broadcast at the SUT's
// sequence, its commit at the next whole second and the Complete one block
// later (with a peer). It returns the Complete's block time.
func (b *hb) round(at time.Duration, r uint64, endpoint int) time.Duration {
	return b.roundO(at, r, ro{endpoint: endpoint})
}

func (b *hb) roundO(at time.Duration, r uint64, o ro) time.Duration {
	if o.getDur == 0 {
		o.getDur = ms(20)
	}
	res, v := b.okValue()
	b.get(at, o.getDur, r, path(r, o.endpoint), res)
	at += o.getDur - ms(20)
	n := b.C[r] + 1
	c := ceilSec(at + ms(41))
	if !o.noBcast {
		b.onChain(at+ms(30), r, n, false)
		if o.nonce != 0 {
			n = o.nonce
		}
		if o.raw != "" {
			v = o.raw
		}
		a := code(0)
		if o.answer != nil {
			a = *o.answer
		}
		q := b.q
		switch {
		case o.seq != nil:
			q = *o.seq
		case a == code(0):
			b.q++ // the sequence moves only on success
		}
		gas := o.gas
		if gas == 0 {
			gas = 70000
		}
		tx := b.submitTx(r, n, q, gas, v)
		b.bcast(at+ms(40), tx, a)
		if a == code(0) {
			b.commit(c, tx, 0)
		}
	}
	peers := o.peers
	if peers == nil {
		peers = []string{peer, self}
	}
	b.complete(c+time.Second, r, b.C[r]+1, peers...)
	return c + time.Second
}

// moderate commits a moderator's tx writing doc d in the block at at.
func (b *hb) moderate(at time.Duration, d history.Doc) {
	bl := b.block(at)
	b.hash++
	bl.delivers = append(bl.delivers, history.Deliver{Hash: fmt.Sprintf("%064X", b.hash), Origin: history.OriginModerator, Code: 0,
		Msgs: []history.Msg{{Type: oracle.TypeURLUpdate, Doc: &d}}, Docs: []history.Doc{d}})
}

// periodic records the status calls every 30 s and the Account queries
// every 5 min of a lifetime running from from to to.
func (b *hb) periodic(from, to time.Duration) {
	for t := from + 30*time.Second; t < to; t += 30 * time.Second {
		b.status(t)
	}
	for t := from + 5*time.Minute; t < to; t += 5 * time.Minute {
		b.account(t+ms(2), b.seqBy(t+ms(2)))
	}
}

// stop records a graceful stop at at: SIGTERM, the shutdown trace points
// in the order of §3.7, the client's close of the WebSocket, exit 0.
func (b *hb) stop(at time.Duration) {
	b.signal(at, "SIGTERM")
	t := at + ms(1)
	for _, step := range []struct {
		p    history.WhitePoint
		name string
	}{{history.WhiteClose, "shutdownCh"}, {history.WhiteClose, "EventCh"}, {history.WhiteClose, "ErrorCh"},
		{history.WhiteStop, "watcher"}, {history.WhiteDrained, ""}, {history.WhiteClose, "ResultCh"},
		{history.WhiteStop, "scheduler"}, {history.WhiteClose, "submitSemaphore"}, {history.WhiteStop, "submitter"},
		{history.WhiteStop, "rpc-client"}, {history.WhiteClose, "fatalCh"}} {
		b.white(t, step.p, step.name)
		t += ms(1)
	}
	b.closeWS(t, int64(b.life), "client")
	b.goroutines(t+ms(1), GoroutinesFinal, 5)
	b.exit(t+ms(2), 0)
}

// ---- scenarios ----

// steady runs requests (period 10 s, all ready at at) for rounds rounds
// in step, so that their rounds complete in the same blocks; endpoints
// gives each one's endpoint, skip a round the SUT does not run. It returns
// when the next round would start.
func (b *hb) steady(at time.Duration, rounds int, endpoints map[uint64]int, skip func(i int, r uint64) bool) time.Duration {
	var rs []uint64
	for r := range endpoints {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	for i := 0; i < rounds; i++ {
		var bt time.Duration
		for k, r := range rs {
			if skip != nil && skip(i, r) {
				continue
			}
			bt = b.round(at+time.Duration(k)*ms(100), r, endpoints[r])
		}
		at = bt + 10*time.Second + sec(0.5)
	}
	return at
}

// twoRequests is the healthy base: requests 1 (self at index 0 of two
// accounts, one endpoint) and 2 (self at index 1, two endpoints), period
// 10 s, run together so that their rounds complete in the same blocks;
// rounds rounds each, then a graceful stop.
func twoRequests(rounds int) (*hb, time.Duration) {
	return twoRequestsSkip(rounds, nil)
}

func twoRequestsSkip(rounds int, skip func(i int, r uint64) bool) (*hb, time.Duration) {
	b := newHB()
	b.goroutines(0, GoroutinesBaseline, 5)
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1), doc(2, 10, []string{peer, self}, 2))
	end := b.steady(tl+sec(0.5), rounds, map[uint64]int{1: 0, 2: 1}, skip)
	b.periodic(0, end)
	b.stop(end)
	return b, end
}

// oneRequest is request 1 alone (self at index 0, one endpoint).
func oneRequest(rounds int) (*hb, time.Duration) {
	b := newHB()
	tl := b.boot(0, doc(1, 10, []string{self, peer}, 1))
	end := b.steady(tl+sec(0.5), rounds, map[uint64]int{1: 0}, nil)
	b.periodic(0, end)
	b.stop(end)
	return b, end
}

func params() Params { return Params{Self: self, QuietFrom: t0} }

// judgeRun checks events and returns the report.
func judgeRun(t *testing.T, p Params, evs []history.Event) *judge.Report {
	t.Helper()
	r, err := Check(p, evs)
	require.NoError(t, err)
	require.Equal(t, r, checkEveryRecord(t, p, evs), "a checker's report changed when it was shown the classes it does not read")
	requireSameSteps(t, p, evs)
	return r
}

// requireSameSteps judges evs as Check does and with every checker shown
// every record (checkEveryRecord), side by side, and requires the same
// violations found at every record: a checker that reads only some
// classes, or sleeps until a deadline (judge.Sleeper), must find each
// violation at the record it would find it at if it saw them all.
func requireSameSteps(t *testing.T, p Params, evs []history.Event) {
	t.Helper()
	st, err := NewStream(p)
	require.NoError(t, err)
	p = p.withDefaults()
	var cs []judge.Checker[*State, history.Event]
	for _, c := range All() {
		cs = append(cs, c)
	}
	every := judge.NewStream[*State, history.Event](everyRecord{}, newState(p), cs, p.Warnings()...)
	for i := range evs {
		st.Step(&evs[i])
		every.Step(&evs[i])
		got, want := st.js.Report(), every.Report()
		require.Equal(t, want.Violations, got.Violations, "violations found by record %d (seq %d)", i, evs[i].Seq)
		require.Equal(t, want.Exercised, got.Exercised, "situations met by record %d (seq %d)", i, evs[i].Seq)
	}
}

// everyRecord is the oracle world without classes: every checker sees
// every record.
type everyRecord struct{}

func (everyRecord) Before(s *State, e *history.Event) { s.before(e) }
func (everyRecord) Apply(s *State, e *history.Event)  { s.apply(e) }

// checkEveryRecord is Check with every checker shown every record.
func checkEveryRecord(t *testing.T, p Params, evs []history.Event) *judge.Report {
	t.Helper()
	require.NoError(t, p.Validate())
	p = p.withDefaults()
	var cs []judge.Checker[*State, history.Event]
	for _, c := range All() {
		cs = append(cs, c)
	}
	return judge.Run[*State, history.Event](everyRecord{}, newState(p), evs, cs, p.Warnings()...)
}

// describe renders a report's violations, for failure messages.
func describe(r *judge.Report, evs []history.Event) string {
	s := ""
	for _, v := range r.Violations {
		s += v.String() + "\n"
	}
	if s != "" {
		for _, l := range history.Timeline(evs, t0) {
			s += "  " + l + "\n"
		}
	}
	return s
}
