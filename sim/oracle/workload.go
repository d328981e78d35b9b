package oracle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
	"github.com/wsconverge/converge/internal/streams"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
)

// The seeded streams of a run (streams.SubSeed paths).
const (
	streamWorkload uint64 = iota + 1
	streamFaults
	streamFrames
	streamDaemon
	streamPeers
	streamSources
)

// sourceBase is the data sources' base URL: never dialled, it only names
// the endpoints.
const sourceBase = "http://127.0.0.1:9"

// periods are the request periods a run draws from (ORACLE-SPEC 4.7: 1–60
// s in sim); a small set, so that rounds of different requests often end
// in one block (F7).
var periods = []uint32{5, 6, 10, 12, 15, 20, 30}

// request is the world's view of one request it registered.
type request struct {
	id     uint64
	peers  []int // indexes into world.peers
	period time.Duration
	self   bool // self in account_list
	status oraclev1.RequestStatus
	ends   int // endpoints
	// values are its peers' values by round, made as needed (roundValue);
	// shared, not copied, with a copy of the request.
	values *[valueCycle]string
}

// peerSent is who has sent a submission for a request's round n. Only the
// round open on chain (its nonce + 1) is ever asked about, and a request's
// nonce never goes back, so a request keeps its latest round's senders
// alone: a set over every peer, request and round of a day grew to a map
// whose lookups were 2 % of the run.
type peerSent struct {
	n     uint64
	peers []int
}

// sent reports whether peer p has sent for round n of request r.
func (w *world) sent(r, n uint64, p int) bool {
	return r < uint64(len(w.peerSent)) && w.peerSent[r].n == n && slices.Contains(w.peerSent[r].peers, p)
}

// markSent notes peer p's submission for round n of r, forgetting an
// earlier round's senders.
func (w *world) markSent(r, n uint64, p int) {
	if r >= uint64(len(w.peerSent)) {
		w.peerSent = append(w.peerSent, make([]peerSent, r+1-uint64(len(w.peerSent)))...)
	}
	s := &w.peerSent[r]
	if s.n != n {
		s.n, s.peers = n, s.peers[:0]
	}
	s.peers = append(s.peers, p)
}

// newRequest builds a request's doc from the workload stream: 1–3 peers,
// self at a random index (or, rarely, not at all), 1–3 endpoints, quorum
// every provider so that no round completes without self (unless
// Options.PartialQuorums).
func (w *world) newRequest(rng *rand.Rand) (*request, *oraclev1.OracleRequestDoc) {
	w.nextID++
	r := &request{id: w.nextID, period: time.Duration(periods[rng.IntN(len(periods))]) * time.Second,
		self: rng.IntN(10) > 0, status: oraclev1.RequestStatus_REQUEST_STATUS_ENABLED, ends: 1 + rng.IntN(3)}
	r.peers = append(r.peers, rng.Perm(len(w.peers))[:1+rng.IntN(min(3, len(w.peers)))]...)
	slices.Sort(r.peers)
	if rng.IntN(8) == 0 {
		r.status = oraclev1.RequestStatus_REQUEST_STATUS_PAUSED
	}
	doc := &oraclev1.OracleRequestDoc{OracleType: 4, Name: "r" + strconv.FormatUint(r.id, 10),
		Period: uint32(r.period / time.Second), AccountList: w.accounts(r, rng), Quorum: w.quorum(r, rng),
		AggregationRule: 1, Status: r.status}
	for k := range r.ends {
		doc.Endpoints = append(doc.Endpoints, &oraclev1.OracleEndpoint{Url: datasource.URL(sourceBase, r.id, k), ParseRule: "data.price"})
	}
	return r, doc
}

// accounts is r's account_list: its peers, with self inserted at a drawn
// index when r includes self.
func (w *world) accounts(r *request, rng *rand.Rand) []string {
	out := make([]string, 0, len(r.peers)+1)
	for _, p := range r.peers {
		out = append(out, w.peers[p].Address)
	}
	if r.self {
		out = slices.Insert(out, rng.IntN(len(out)+1), w.self)
	}
	return out
}

// quorum is r's quorum: every provider, or with Options.PartialQuorums a
// draw in 1 … every provider (the stream is drawn from only then, so a
// default run draws what it always drew).
func (w *world) quorum(r *request, rng *rand.Rand) uint32 {
	q := providers(r)
	if w.o.PartialQuorums && q > 1 {
		q = 1 + uint32(rng.IntN(int(q)))
	}
	return q
}

// providers counts r's account_list: its peers and self when included.
func providers(r *request) uint32 {
	q := uint32(len(r.peers))
	if r.self {
		q++
	}
	return q
}

// fullQuorums is the moderator's update, at the start of the quiet phase,
// of every request whose quorum is below the length of its account_list on
// chain back to all of them (Options.PartialQuorums): a round then completes only with self's
// submission, as O16 expects.
func (w *world) fullQuorums() {
	for _, r := range w.reqs {
		cur, ok := w.chain.Doc(r.id)
		all := uint32(len(cur.GetAccountList())) // the chain's list: the world's view may hold a refused update
		if !ok || cur.GetStatus() == oraclev1.RequestStatus_REQUEST_STATUS_DISABLED || cur.GetQuorum() >= all {
			continue
		}
		doc := proto.Clone(cur).(*oraclev1.OracleRequestDoc)
		doc.Quorum = all
		if _, err := w.chain.Update(doc, "quorum"); err != nil {
			w.fail(fmt.Errorf("restore the quorum of request %d: %w", r.id, err))
			return
		}
	}
}

// register sends the moderator's register of a new request and sets up its
// data source.
func (w *world) register(rng *rand.Rand) {
	r, doc := w.newRequest(rng)
	if err := w.src.Set(r.id, datasource.Script{Path: "data.price",
		Latency: [2]time.Duration{10 * time.Millisecond, 400 * time.Millisecond}}); err != nil {
		w.fail(err)
		return
	}
	adm, err := w.chain.Register(doc)
	if err != nil {
		w.fail(fmt.Errorf("register request %d: %w", r.id, err))
		return
	}
	if adm.RPCError != nil || adm.Code != oracle.CodeOK {
		w.nextID-- // refused (F10): no request
		return
	}
	w.reqs = append(w.reqs, r)
}

// operate is one moderator action of the fault phase (ORACLE-SPEC 4.7):
// an update of the period, the endpoints, the status or self's place in
// account_list; a bogus-nonce update; a disable; a new request.
func (w *world) operate(rng *rand.Rand) {
	if rng.IntN(8) == 0 || len(w.reqs) == 0 {
		w.register(rng)
		return
	}
	r := w.reqs[rng.IntN(len(w.reqs))]
	cur, ok := w.chain.Doc(r.id)
	if !ok || r.status == oraclev1.RequestStatus_REQUEST_STATUS_DISABLED {
		return
	}
	doc := proto.Clone(cur).(*oraclev1.OracleRequestDoc)
	was := *r
	var (
		adm chain.Admission
		err error
	)
	switch rng.IntN(12) {
	case 0, 1, 2:
		r.period = time.Duration(periods[rng.IntN(len(periods))]) * time.Second
		doc.Period = uint32(r.period / time.Second)
		adm, err = w.chain.Update(doc, "period")
	case 3, 4:
		r.ends = 1 + rng.IntN(3)
		doc.Endpoints = nil
		for k := range r.ends {
			doc.Endpoints = append(doc.Endpoints, &oraclev1.OracleEndpoint{Url: datasource.URL(sourceBase, r.id, k), ParseRule: "data.price"})
		}
		adm, err = w.chain.Update(doc, "endpoints")
	case 5, 6:
		if r.status == oraclev1.RequestStatus_REQUEST_STATUS_ENABLED {
			r.status = oraclev1.RequestStatus_REQUEST_STATUS_PAUSED
		} else {
			r.status = oraclev1.RequestStatus_REQUEST_STATUS_ENABLED
		}
		doc.Status = r.status
		adm, err = w.chain.Update(doc, "status")
	case 7, 8:
		r.self = !r.self
		doc.AccountList, doc.Quorum = w.accounts(r, rng), w.quorum(r, rng)
		adm, err = w.chain.Update(doc, "account_list")
	case 9, 10:
		adm, err = w.chain.BogusNonceUpdate(r.id, cur.GetNonce()+5+uint64(rng.IntN(20)))
	default:
		r.status = oraclev1.RequestStatus_REQUEST_STATUS_DISABLED
		adm, err = w.chain.Disable(r.id, "done")
	}
	if err != nil {
		w.fail(fmt.Errorf("operate on request %d: %w", r.id, err))
		return
	}
	if adm.RPCError != nil || adm.Code != oracle.CodeOK {
		*r = was // refused (F10): nothing changes
	}
}

// period is r's period on chain.
func (w *world) period(r *request) time.Duration {
	p := r.period
	w.chain.ReadDoc(r.id, func(doc *oraclev1.OracleRequestDoc) { p = time.Duration(doc.GetPeriod()) * time.Second })
	return p
}

func (w *world) req(id uint64) *request {
	for _, r := range w.reqs {
		if r.id == id {
			return r
		}
	}
	return nil
}

// peersAfter plans the peers' submissions after block b: each Complete
// (r, n) opens round n + 1 at bt + period; each doc written (a register or
// an update) may open or reopen a round at once.
func (w *world) peersAfter(b *chain.Block) {
	for _, cp := range b.Completes {
		if r := w.req(cp.RequestID); r != nil {
			w.planRound(r, cp.Nonce+1, w.period(r))
		}
	}
	for _, d := range b.Delivered {
		if d.Code != 0 {
			continue
		}
		for _, doc := range d.Docs {
			if r := w.req(doc.RequestID); r != nil {
				w.planRound(r, doc.Nonce+1, 0)
			}
		}
	}
}

// planRound schedules every peer of r for round n, after wait plus the
// peer's drawn delay. An absent peer, or one that submits a wrong nonce,
// comes back late (45–60 s after the round opens), so a round never
// stalls for good on a peer.
func (w *world) planRound(r *request, n uint64, wait time.Duration) {
	mix := chain.DefaultPeerMix()
	if w.quiet {
		mix = chain.HealthyPeers()
	}
	// The round's turns (a misbehaving peer has two) reuse spent ones,
	// with the value every peer submits for it.
	v := r.roundValue(n)
	turn := func(at time.Time, p int, b history.PeerBehaviour) {
		t := w.spentTurns.get()
		*t = peerTurn{w: w, r: r, n: n, p: p, b: b, value: v}
		w.atEvent(at, t)
	}
	for _, p := range r.peers {
		plan := mix.Plan(streams.SubSeed(w.o.Seed, streamPeers), p, r.id, n)
		open := w.now().Add(wait)
		switch plan.Behaviour {
		case history.PeerAbsent, history.PeerWrongNonce:
			// The chain records the misbehaviour (an absent peer's record
			// has no tx), so a checker sees why the round is slow.
			turn(open.Add(plan.Delay), p, plan.Behaviour)
			turn(open.Add(45*time.Second+time.Duration(n%16)*time.Second), p, history.PeerLate)
		default:
			turn(open.Add(plan.Delay), p, plan.Behaviour)
		}
	}
}

// peerTurn is peer p's turn to submit value for round n of r (an event).
type peerTurn struct {
	w     *world
	r     *request
	n     uint64
	p     int
	b     history.PeerBehaviour
	value string
}

func (t *peerTurn) fire() {
	w, r, n, p, b, v := t.w, t.r, t.n, t.p, t.b, t.value
	w.spentTurns.put(t) // fired: nothing refers to it
	w.peerSubmit(r, n, p, b, v)
}

// peerSubmit is peer p's submission of v for round n of r, if that round is
// still open, r is ENABLED, p still a provider, and p has not sent one. A
// submission the mempool refuses is tried again 2 s later.
func (w *world) peerSubmit(r *request, n uint64, p int, b history.PeerBehaviour, v string) {
	if w.chain.Nonce(r.id)+1 != n || w.sent(r.id, n, p) {
		return
	}
	var provider bool
	w.chain.ReadDoc(r.id, func(doc *oraclev1.OracleRequestDoc) {
		provider = doc.GetStatus() == oraclev1.RequestStatus_REQUEST_STATUS_ENABLED &&
			slices.Contains(doc.GetAccountList(), w.peers[p].Address)
	})
	if !provider {
		return
	}
	adm, err := w.chain.PeerSubmit(w.peers[p], r.id, b, v)
	if err != nil {
		w.fail(fmt.Errorf("peer %d, request %d round %d: %w", p, r.id, n, err))
		return
	}
	if b == history.PeerWrongNonce || b == history.PeerAbsent {
		return
	}
	for _, a := range adm {
		if a.RPCError != nil || a.Code != oracle.CodeOK {
			w.at(w.now().Add(2*time.Second), func() { w.peerSubmit(r, n, p, history.PeerLate, v) })
			return
		}
	}
	w.markSent(r.id, n, p)
}

// valueCycle is how many rounds a request's peer values take to repeat.
const valueCycle = 1000

// value is a peer's raw_data for round n of r.
func value(r, n uint64) string {
	// Written into a stack buffer and copied once (a value per peer
	// submission, three allocations when concatenated).
	var buf [48]byte
	b := strconv.AppendUint(buf[:0], 1000+r, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, n%valueCycle+1, 10)
	return string(b)
}

// roundValue is value(r.id, n), made once for each place in the cycle: a
// day of a request is a few thousand rounds, and a string for each was
// 1.5 % of the oracle world's allocations.
func (r *request) roundValue(n uint64) string {
	if r.values == nil {
		r.values = new([valueCycle]string)
	}
	v := &r.values[n%valueCycle]
	if *v == "" {
		*v = value(r.id, n)
	}
	return *v
}
