package conform

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	oraclev1 "github.com/wsconverge/converge/wire/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/wire/records"
)

// World is the façade's side of a black-box run: the simulated chain with
// its moderator and one peer provider per request, the data sources, and
// the Facade serving them, all on the wall clock.
type World struct {
	Facade  *Facade
	Chain   *chain.Chain
	Sources *datasource.Sources
	srcSrv  *datasource.Server
	rec     *history.Recorder
	self    string
	genesis time.Time

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	peers   map[uint64][]*chain.Peer
	active  map[uint64]int // how many of a request's peers submit
	period  map[uint64]time.Duration
	due     []peerDue
	inject  map[uint64][]uint32 // F11: codes for a request's next broadcasts
	lose    map[uint64]bool     // F12: lose the answer to its next admitted broadcast
	hold    uint64              // F12: the request whose answer was lost, until Disarm (LoseNext)
	stalled bool                // F15

	watch watch
}

type peerDue struct {
	at time.Time
	r  uint64
}

// peerValue is what every peer reports; the aggregate then follows the
// peers and the SUT's value only adds to the quorum.
const peerValue = "1000.5"

// sourceLatency is how long every data source takes to answer: long
// enough that GETs started together are in flight together (O7) and that
// a signal sent at a GET's arrival meets it in flight (O14).
var sourceLatency = [2]time.Duration{400 * time.Millisecond, 900 * time.Millisecond}

// NewWorld starts the chain (block interval from p), the data sources and
// the façade on loopback, and funds self's account.
func NewWorld(p chain.Params, self string, seed uint64, log *slog.Logger) (*World, error) {
	w := &World{rec: history.NewRecorder(), self: self, genesis: time.Now().UTC(),
		peers: map[uint64][]*chain.Peer{}, active: map[uint64]int{}, period: map[uint64]time.Duration{},
		inject: map[uint64][]uint32{}, lose: map[uint64]bool{}}
	w.watch.init()
	var f *Facade
	sink := func(e history.Event) { f.Record(e) }
	c, err := chain.New(chain.Config{Params: p, Genesis: w.genesis, Now: time.Now, Sink: sink,
		Moderator: keys.PrivKeyFromSeed("conform-moderator-" + strconv.FormatUint(seed, 10)),
		Accounts:  []chain.Funding{{Address: self}}})
	if err != nil {
		return nil, fmt.Errorf("conform world: %w", err)
	}
	f, err = NewFacade("127.0.0.1:0", c, w.rec, p.BlockInterval, log)
	if err != nil {
		return nil, err
	}
	w.Facade, w.Chain = f, c
	f.Observe(w.watch.see)
	f.SetBroadcastHooks(BroadcastHooks{Inject: w.injected, Lose: w.lost})
	w.Sources = datasource.New(seed, f.Record)
	w.srcSrv, err = w.Sources.Serve("127.0.0.1:0", time.Now)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	f.Start(w.onBlock)
	return w, nil
}

// Genesis is when the chain started.
func (w *World) Genesis() time.Time { return w.genesis }

// Request is one request doc of a scenario.
type Request struct {
	ID     uint64
	Period time.Duration
	// SelfIndex is self's position in the account list (-1: not assigned);
	// the request's peers take the other positions.
	SelfIndex int
	// Peers is how many peer providers it has (0: one). The quorum is two
	// (one without self), so with two peers the peers alone can complete
	// a round once both submit (SetActivePeers); only the first submits
	// at first.
	Peers int
	// Endpoints is how many endpoints it has (each on the data sources).
	Endpoints int
	Status    oracle.RequestStatus
}

// doc is r's doc as the moderator registers it.
func (w *World) doc(r Request, peers []*chain.Peer) *oraclev1.OracleRequestDoc {
	var accounts []string
	for _, p := range peers {
		accounts = append(accounts, p.Address)
	}
	if r.SelfIndex >= 0 {
		accounts = slices.Insert(accounts, min(r.SelfIndex, len(accounts)), w.self)
	}
	d := history.Doc{RequestID: r.ID, OracleType: 4, Name: "conform-" + strconv.FormatUint(r.ID, 10),
		Period: uint32(r.Period / time.Second), AccountList: accounts, Quorum: uint32(min(2, len(accounts))),
		AggregationRule: 1, Status: int32(r.Status)}
	for k := range r.Endpoints {
		d.Endpoints = append(d.Endpoints, history.Endpoint{URL: w.srcSrv.URL(r.ID, k), ParseRule: "data.price"})
	}
	return records.DocProto(d)
}

// Register creates r's peer and data source script and sends the
// moderator's register (request ids are assigned by the chain in order:
// register them 1, 2, 3, …).
func (w *World) Register(r Request) error {
	var peers []*chain.Peer
	for i := range max(1, r.Peers) {
		seed := "conform-peer-" + strconv.FormatUint(r.ID, 10)
		if i > 0 {
			seed += "-" + strconv.Itoa(i)
		}
		p, err := w.Chain.AddPeer(keys.PrivKeyFromSeed(seed), nil)
		if err != nil {
			return err
		}
		peers = append(peers, p)
	}
	if err := w.Sources.Set(r.ID, sourceScript()); err != nil {
		return err
	}
	w.mu.Lock()
	w.peers[r.ID], w.active[r.ID], w.period[r.ID] = peers, 1, r.Period
	w.mu.Unlock()
	a, err := w.Chain.Register(w.doc(r, peers))
	if err != nil {
		return fmt.Errorf("register request %d: %w", r.ID, err)
	}
	if !a.Admitted() {
		return fmt.Errorf("register request %d: not admitted: code %d %s", r.ID, a.Code, a.Log)
	}
	return nil
}

// Update re-sends r's doc with a new reason (fields unchanged unless r
// says otherwise).
func (w *World) Update(r Request, reason string) error {
	w.mu.Lock()
	peers := w.peers[r.ID]
	w.period[r.ID] = r.Period
	w.mu.Unlock()
	if peers == nil {
		return fmt.Errorf("update request %d: never registered", r.ID)
	}
	doc := w.doc(r, peers)
	doc.Nonce = w.Chain.Nonce(r.ID)
	a, err := w.Chain.Update(doc, reason)
	if err != nil {
		return fmt.Errorf("update request %d: %w", r.ID, err)
	}
	if !a.Admitted() {
		return fmt.Errorf("update request %d: not admitted: code %d %s", r.ID, a.Code, a.Log)
	}
	return nil
}

// onBlock schedules each peer's submission for the rounds the block
// opened (a register's round 1 at once, a Complete's next round one period
// after its block time) and sends the ones due.
func (w *World) onBlock(b *chain.Block) {
	w.mu.Lock()
	for _, d := range b.Delivered {
		for _, doc := range d.Docs {
			if d.Code == 0 && doc.Nonce == 0 && w.peers[doc.RequestID] != nil {
				w.due = append(w.due, peerDue{b.Time, doc.RequestID})
			}
		}
	}
	for _, cp := range b.Completes {
		w.due = append(w.due, peerDue{b.Time.Add(w.period[cp.RequestID]), cp.RequestID})
	}
	now := time.Now()
	var send []peerDue
	kept := w.due[:0]
	for _, d := range w.due {
		if d.at.After(now) {
			kept = append(kept, d)
		} else {
			send = append(send, d)
		}
	}
	w.due = kept
	peers := make([][]*chain.Peer, len(send))
	for i, d := range send {
		peers[i] = w.peers[d.r][:w.active[d.r]]
	}
	w.mu.Unlock()
	for i, d := range send {
		for _, p := range peers[i] {
			if _, err := w.Chain.PeerSubmit(p, d.r, history.PeerPrompt, peerValue); err != nil {
				w.Facade.log.Warn("conform: peer submit", "request", d.r, "err", err)
			}
		}
	}
}

// SetActivePeers makes the first k of request r's peers submit for the
// rounds that open from now on.
func (w *World) SetActivePeers(r uint64, k int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active[r] = max(0, min(k, len(w.peers[r])))
}

// sourceScript is every request's data source: always healthy, slow.
func sourceScript() datasource.Script {
	return datasource.Script{Path: "data.price", Latency: sourceLatency}
}

// FailSource makes every GET of request r's endpoints answer an error
// status from now until HealSource (fault F8, recorded by the caller).
func (w *World) FailSource(r uint64) error {
	from := time.Now()
	return w.Sources.AddWindow(r, datasource.Window{From: from, To: from.Add(time.Hour), Endpoint: -1, Class: datasource.ClassStatus})
}

// HealSource ends FailSource.
func (w *World) HealSource(r uint64) error { return w.Sources.Set(r, sourceScript()) }

// Inject queues F11 codes for the next broadcasts of a submission for
// request r: the i-th such broadcast that reaches CheckTx gets codes[i].
func (w *World) Inject(r uint64, codes ...uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inject[r] = append(w.inject[r], codes...)
}

// LoseNext arms F12 for request r: the next admitted broadcast of a
// submission for r loses its answer, and the chain stalls (F15) at that
// moment, so that the tx stays in the mempool until Resume. From that
// moment until Disarm the world holds the daemon's other broadcasts off
// the held tx's sequence: each that reaches CheckTx's injection point
// (it is not a cache hit) is answered code 20, mempool full (F11,
// recorded as such), a transient answer the daemon retries after its
// backoff and that leaves its sequence alone. r's broadcasts pass as they
// are, so r's retry is the next broadcast the chain checks against the
// held tx, whatever the daemon's timers do.
func (w *World) LoseNext(r uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lose[r] = true
}

// Disarm drops every F11 code still queued and every armed F12, and ends
// the hold of a lost answer's other broadcasts (LoseNext).
func (w *World) Disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.inject)
	clear(w.lose)
	w.hold = 0
}

// submitFor is the request a broadcast tx submits for (0: none).
func submitFor(t *history.Tx) uint64 {
	if t == nil || len(t.Msgs) == 0 || t.Msgs[0].Type != oracle.TypeURLSubmit {
		return 0
	}
	return t.Msgs[0].RequestID
}

// injected is the façade's Inject hook: LoseNext's hold first, then the
// codes queued by Inject. A held broadcast's F11 is recorded here, as it
// meets the broadcast.
func (w *World) injected(t *history.Tx) uint32 {
	r := submitFor(t)
	w.mu.Lock()
	hold := w.hold
	var code uint32
	switch q := w.inject[r]; {
	case hold != 0 && r != hold:
		code = oracle.CodeMempoolIsFull
	case r != 0 && len(q) > 0:
		code, w.inject[r] = q[0], q[1:]
	}
	w.mu.Unlock()
	if hold != 0 && r != hold {
		w.Fault("F11", history.FaultPoint, time.Time{}, history.Param{Key: "request", Value: strconv.FormatUint(r, 10)},
			history.Param{Key: "code", Value: strconv.FormatUint(uint64(code), 10)},
			history.Param{Key: "why", Value: "held off the sequence of the F12 tx of request " + strconv.FormatUint(hold, 10)})
	}
	return code
}

// lost is the façade's Lose hook.
func (w *World) lost(t *history.Tx, res cometrpc.ResultBroadcastTx, rpcErr *cometrpc.RPCError) bool {
	r := submitFor(t)
	w.mu.Lock()
	armed := r != 0 && w.lose[r] && rpcErr == nil && res.Code == 0
	if armed {
		delete(w.lose, r)
		w.hold = r
	}
	w.mu.Unlock()
	if !armed {
		return false
	}
	w.setStalled(true)
	w.Fault("F15", history.FaultStart, time.Time{}, history.Param{Key: "why", Value: "hold the F12 tx in the mempool"})
	w.Fault("F12", history.FaultPoint, time.Time{}, history.Param{Key: "request", Value: strconv.FormatUint(r, 10)},
		history.Param{Key: "mode", Value: "connection dropped"})
	return true
}

// Resume ends an F15 stall (none: nothing happens).
func (w *World) Resume() {
	if w.setStalled(false) {
		w.Fault("F15", history.FaultEnd, time.Time{})
	}
}

// Stalled reports whether the chain is stalled (F15).
func (w *World) Stalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stalled
}

// setStalled stalls or resumes the chain and reports whether that changed
// anything.
func (w *World) setStalled(v bool) bool {
	w.mu.Lock()
	changed := w.stalled != v
	w.stalled = v
	w.mu.Unlock()
	w.Facade.Stall(v)
	return changed
}

// Fault records a fault of the catalogue (§4.9).
func (w *World) Fault(id string, phase history.FaultPhase, until time.Time, params ...history.Param) {
	w.Facade.Record(history.Event{Kind: history.KindFault, Fault: &history.Fault{ID: id, Phase: phase, Until: until, Params: params}})
}

// Close stops the façade and the data sources; the history is then
// complete.
// A second Close returns the first one's error.
func (w *World) Close() error {
	w.closeOnce.Do(func() {
		w.closeErr = w.Facade.Close()
		if e := w.srcSrv.Close(); w.closeErr == nil {
			w.closeErr = e
		}
	})
	return w.closeErr
}

// Events is the recorded history (call after Close).
func (w *World) Events() []history.Event { return w.rec.Events() }
