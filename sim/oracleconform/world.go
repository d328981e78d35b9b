package oracleconform

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/keys"
	oraclev1 "github.com/wsconverge/converge/contracts/oracle/proto/guru/oracle/v1"
	"github.com/wsconverge/converge/fakes/chain"
	"github.com/wsconverge/converge/fakes/datasource"
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

	mu     sync.Mutex
	peers  map[uint64]*chain.Peer
	period map[uint64]time.Duration
	due    []peerDue
}

type peerDue struct {
	at time.Time
	r  uint64
}

// peerValue is what every peer reports; the aggregate then follows the
// peers and the SUT's value only adds to the quorum.
const peerValue = "1000.5"

// NewWorld starts the chain (block interval from p), the data sources and
// the façade on loopback, and funds self's account.
func NewWorld(p chain.Params, self string, seed uint64, log *slog.Logger) (*World, error) {
	w := &World{rec: history.NewRecorder(), self: self, genesis: time.Now().UTC(),
		peers: map[uint64]*chain.Peer{}, period: map[uint64]time.Duration{}}
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
	// the request's peer takes the other position.
	SelfIndex int
	// Endpoints is how many endpoints it has (each on the data sources).
	Endpoints int
	Status    oracle.RequestStatus
}

// doc is r's doc as the moderator registers it.
func (w *World) doc(r Request, peer string) *oraclev1.OracleRequestDoc {
	accounts := []string{peer}
	switch r.SelfIndex {
	case 0:
		accounts = []string{w.self, peer}
	case 1:
		accounts = []string{peer, w.self}
	}
	d := history.Doc{RequestID: r.ID, OracleType: 4, Name: "conform-" + strconv.FormatUint(r.ID, 10),
		Period: uint32(r.Period / time.Second), AccountList: accounts, Quorum: uint32(min(2, len(accounts))),
		AggregationRule: 1, Status: int32(r.Status)}
	for k := range r.Endpoints {
		d.Endpoints = append(d.Endpoints, history.Endpoint{URL: w.srcSrv.URL(r.ID, k), ParseRule: "data.price"})
	}
	return d.Proto()
}

// Register creates r's peer and data source script and sends the
// moderator's register (request ids are assigned by the chain in order:
// register them 1, 2, 3, …).
func (w *World) Register(r Request) error {
	p, err := w.Chain.AddPeer(keys.PrivKeyFromSeed("conform-peer-"+strconv.FormatUint(r.ID, 10)), nil)
	if err != nil {
		return err
	}
	if err := w.Sources.Set(r.ID, datasource.Healthy("data.price")); err != nil {
		return err
	}
	w.mu.Lock()
	w.peers[r.ID], w.period[r.ID] = p, r.Period
	w.mu.Unlock()
	a, err := w.Chain.Register(w.doc(r, p.Address))
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
	p := w.peers[r.ID]
	w.period[r.ID] = r.Period
	w.mu.Unlock()
	if p == nil {
		return fmt.Errorf("update request %d: never registered", r.ID)
	}
	doc := w.doc(r, p.Address)
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
	peers := make([]*chain.Peer, len(send))
	for i, d := range send {
		peers[i] = w.peers[d.r]
	}
	w.mu.Unlock()
	for i, d := range send {
		if _, err := w.Chain.PeerSubmit(peers[i], d.r, history.PeerPrompt, peerValue); err != nil {
			w.Facade.log.Warn("conform: peer submit", "request", d.r, "err", err)
		}
	}
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
