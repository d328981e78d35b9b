package oracle_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/fakes/oracle/chain"
	"github.com/wsconverge/converge/fakes/oracle/datasource"
	"github.com/wsconverge/converge/judge"
	oraclejudge "github.com/wsconverge/converge/judge/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/records"
)

// The checkers against the reference daemon itself: a small driver runs
// the reference core on the simulated chain and data sources on a virtual
// clock (transport 1 ms each way, a block a second, healthy peers) and
// records the run; the checkers must find nothing wrong, and the
// situations a healthy run holds must be exercised. (The oracle world of
// sim/ drives far richer runs, faults and mutants; this only guards the
// checkers against flagging correct behaviour.)

var (
	genesis = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sutKey  = keys.PrivKeyFromSeed("invariant-reference-sut")
	modKey  = keys.PrivKeyFromSeed("invariant-reference-moderator")
	sutAddr = sutKey.PubKey().Address()
)

const lat = time.Millisecond

type refRun struct {
	t     testing.TB
	now   time.Time
	q     engine.Queue[func()]
	chain *chain.Chain
	src   *datasource.Sources
	rec   *history.Recorder
	cfg   oracle.Config
	core  *core.Core
	life  int
	conn  ports.ID
	subs  map[string]string // query → subscribe id, on conn
	parsd map[string]*cometrpc.Query
	calls int64
	wake  time.Time
	peers map[uint64]*chain.Peer
	per   map[uint64]time.Duration
	exit  bool
	seed  uint64
	// bendFrame and bendURL, when set, change what the core is given (a
	// frame's events) or what it fetches: broken variants seen from outside.
	bendFrame func(map[string][]string) map[string][]string
	bendURL   func(string) string
}

func newRefRun(t testing.TB, requests int) *refRun {
	return newRefRunWith(t, requests, datasource.Healthy("data.price"))
}

func newRefRunWith(t testing.TB, requests int, script datasource.Script) *refRun {
	t.Helper()
	w := &refRun{t: t, now: genesis, rec: history.NewRecorder(), subs: map[string]string{}, parsd: map[string]*cometrpc.Query{},
		peers: map[uint64]*chain.Peer{}, per: map[uint64]time.Duration{}, seed: 1}
	c, err := chain.New(chain.Config{Params: chain.DefaultParams(), Genesis: genesis, Now: func() time.Time { return w.now },
		Sink: w.record, Moderator: modKey, Accounts: []chain.Funding{{Address: sutAddr}}})
	require.NoError(t, err)
	w.chain = c
	w.src = datasource.New(7, w.record)
	w.cfg = oracle.DefaultConfig(t.TempDir())
	for r := uint64(1); r <= uint64(requests); r++ {
		p, err := c.AddPeer(keys.PrivKeyFromSeed("invariant-reference-peer-"+strconv.FormatUint(r, 10)), nil)
		require.NoError(t, err)
		w.peers[r] = p
		period := time.Duration(5+3*r) * time.Second
		w.per[r] = period
		accounts := []string{p.Address, sutAddr}
		if r%2 == 1 {
			accounts = []string{sutAddr, p.Address}
		}
		d := history.Doc{OracleType: 4, Name: "r" + strconv.FormatUint(r, 10), Period: uint32(period / time.Second), AccountList: accounts,
			Quorum: 2, AggregationRule: 1, Status: int32(oracle.StatusEnabled),
			Endpoints: []history.Endpoint{{URL: datasource.URL("http://127.0.0.1:9", r, 0), ParseRule: "data.price"},
				{URL: datasource.URL("http://127.0.0.1:9", r, 1), ParseRule: "data.price"}}}
		_, err = c.Register(records.DocProto(d))
		require.NoError(t, err)
		require.NoError(t, w.src.Set(r, script))
	}
	return w
}

// record stamps the SUT's records with its lifetime and keeps them.
func (w *refRun) record(e history.Event) {
	switch e.Kind {
	case history.KindProc, history.KindRPC, history.KindWS, history.KindSrc, history.KindWhite:
		e.Life = w.life
	}
	if e.At.IsZero() {
		e.At = w.now
	}
	w.rec.Add(e)
}

func (w *refRun) at(d time.Time, f func()) { w.q.Push(d.UnixNano(), false, f) }

// start runs a new lifetime of the reference core.
func (w *refRun) start() {
	c, err := core.New(w.cfg, keys.StandInSigner{Key: sutKey}, rand.New(rand.NewPCG(w.seed, uint64(w.life))))
	require.NoError(w.t, err)
	w.core, w.life, w.conn, w.exit = c, w.life+1, 0, false
	w.subs = map[string]string{}
	w.record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcStart, Detail: "in-process"}})
	w.act(c.Start(w.now))
}

// stop asks the core for a graceful stop, as SIGTERM does.
func (w *refRun) stop() {
	w.record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcSignal, Signal: "SIGTERM"}})
	w.handle(w.core, ports.Stop{})
}

// crash drops the core, as F17 does.
func (w *refRun) crash() {
	w.record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcSignal, Signal: "crash"}})
	w.record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcExit, Status: 1}})
	w.core, w.conn, w.exit = nil, 0, true
}

func (w *refRun) handle(c *core.Core, in ports.Input) {
	if c != w.core || w.exit {
		return // a dropped core's answers go nowhere
	}
	w.act(c.Handle(w.now, in))
}

func (w *refRun) act(outs []ports.Output) {
	c := w.core
	for _, o := range outs {
		switch o := o.(type) {
		case ports.Dial:
			w.conn = o.ID
			w.record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: int64(o.ID), Action: history.WSConnect}})
			w.at(w.now.Add(lat), func() { w.handle(c, ports.Dialed{Conn: o.ID}) })
		case ports.Subscribe:
			id := strconv.FormatUint(uint64(o.ID), 10)
			w.record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: int64(o.Conn), Action: history.WSSubscribe, Query: o.Query, ID: id}})
			w.subs[o.Query] = id
			q, err := cometrpc.ParseQuery(o.Query)
			require.NoError(w.t, err)
			w.parsd[o.Query] = q
			w.at(w.now.Add(lat), func() { w.handle(c, ports.Reply{ID: o.ID}) })
		case ports.UnsubscribeAll:
			w.record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: int64(o.Conn), Action: history.WSUnsubscribeAll}})
			w.subs = map[string]string{}
			w.at(w.now.Add(lat), func() { w.handle(c, ports.Reply{ID: o.ID}) })
		case ports.CloseConn:
			w.record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: int64(o.Conn), Action: history.WSClose, By: "client"}})
			if w.conn == o.Conn {
				w.conn = 0
			}
		case ports.StatusCall:
			call := w.recv(&history.RPC{Method: "status"})
			res := w.chain.Status()
			w.at(w.now.Add(lat), func() {
				w.done(call, records.ResultOfStatus(res))
				w.handle(c, ports.Reply{ID: o.ID, Status: &res})
			})
		case ports.QueryCall:
			call := w.recv(&history.RPC{Method: "abci_query", Query: records.QueryOf(cometrpc.ABCIQueryParams{Path: o.Path, Data: o.Data})})
			res := w.chain.ABCIQuery(o.Path, o.Data)
			w.at(w.now.Add(lat), func() {
				w.done(call, records.ResultOfQuery(o.Path, res))
				w.handle(c, ports.Reply{ID: o.ID, Query: &res})
			})
		case ports.BroadcastCall:
			t := records.DecodeTx(o.Tx)
			call := w.recv(&history.RPC{Method: "broadcast_tx_sync", Tx: &t})
			res, rerr := w.chain.BroadcastTxSync(o.Tx)
			w.at(w.now.Add(lat), func() {
				if rerr != nil {
					w.done(call, records.ResultOfError(rerr))
					w.handle(c, ports.Reply{ID: o.ID, RPCError: rerr})
					return
				}
				w.done(call, records.ResultOfBroadcast(res))
				w.handle(c, ports.Reply{ID: o.ID, Broadcast: &res})
			})
		case ports.Fetch:
			url := o.URL
			if w.bendURL != nil {
				url = w.bendURL(url)
			}
			out := w.src.Get(w.now, url, []history.Header{{Name: "Accept", Value: "application/json"}})
			if limit := w.now.Add(o.Timeout); out.DoneAt.After(limit) {
				w.at(limit, func() { // the client gives up at its timeout
					w.src.Abort(out, w.now)
					w.handle(c, ports.Fetched{ID: o.ID, Err: errors.New("timeout")})
				})
				break
			}
			w.at(out.DoneAt, func() {
				w.src.Done(out)
				in := ports.Fetched{ID: o.ID, Status: out.Status, Body: out.Body}
				if !out.Answered() {
					in.Err = errors.New("no answer")
				}
				w.handle(c, in)
			})
		case *ports.Trace:
			w.trace(o)
		case ports.Exit:
			w.record(history.Event{Kind: history.KindProc, Proc: &history.Proc{Action: history.ProcExit, Status: o.Code}})
			w.exit = true
		}
	}
	if at, ok := c.NextWake(); ok && !w.exit && !at.Equal(w.wake) {
		w.wake = at
		w.at(at, func() { w.handle(c, ports.Wake{}) })
	}
}

func (w *refRun) trace(o *ports.Trace) {
	var x *history.White
	switch o.Kind {
	case ports.TraceClose:
		x = &history.White{Point: history.WhiteClose, Name: o.Name}
	case ports.TraceStop:
		x = &history.White{Point: history.WhiteStop, Name: o.Name}
	case ports.TraceDrained:
		x = &history.White{Point: history.WhiteDrained}
	default:
		return
	}
	w.record(history.Event{Kind: history.KindWhite, White: x})
}

func (w *refRun) recv(r *history.RPC) int64 {
	w.calls++
	r.Call, r.Phase = w.calls, history.PhaseRecv
	w.record(history.Event{Kind: history.KindRPC, RPC: r})
	return w.calls
}

func (w *refRun) done(call int64, res *history.RPCResult) {
	w.record(history.Event{Kind: history.KindRPC, RPC: &history.RPC{Call: call, Phase: history.PhaseDone, Result: res,
		TRecv: w.now.Add(-lat), TDelivered: w.now}})
}

// block produces a block, delivers its frames to the SUT's subscriptions
// and schedules the peers' submissions for the rounds it opens.
func (w *refRun) block() {
	b := w.chain.ProduceBlock(w.now)
	for _, f := range b.Frames {
		for q, id := range w.subs {
			if w.conn == 0 || !chain.Matches(w.parsd[q], f) {
				continue
			}
			c, conn, rec, ev := w.core, w.conn, f.Record(), f.EventsMap()
			if w.bendFrame != nil {
				ev = w.bendFrame(ev)
			}
			q, id := q, id
			w.at(w.now.Add(5*lat), func() {
				if c != w.core || w.exit {
					return
				}
				w.record(history.Event{Kind: history.KindWS, WS: &history.WS{Conn: int64(conn), Action: history.WSFrame, Query: q, ID: id, Frame: rec}})
				w.handle(c, ports.Frame{Conn: conn, Query: q, Events: ev})
			})
		}
	}
	for _, d := range b.Delivered {
		for _, doc := range d.Docs {
			if d.Code == 0 && doc.Nonce == 0 {
				w.peerAt(doc.RequestID, w.now.Add(300*time.Millisecond))
			}
		}
	}
	for _, cp := range b.Completes {
		w.peerAt(cp.RequestID, b.Time.Add(w.per[cp.RequestID]+time.Duration(cp.Nonce%5)*100*time.Millisecond))
	}
}

func (w *refRun) peerAt(r uint64, at time.Time) {
	w.at(at, func() {
		_, err := w.chain.PeerSubmit(w.peers[r], r, history.PeerPrompt, "1000.5")
		require.NoError(w.t, err)
	})
}

// run advances the virtual clock to until, producing a block every second.
func (w *refRun) run(until time.Time) {
	next := w.now.Truncate(time.Second).Add(time.Second)
	for {
		e, ok := w.q.Peek()
		if !ok && next.After(until) {
			break
		}
		if !ok || !e.Time().Before(next) {
			if next.After(until) {
				break
			}
			w.now = next
			w.block()
			next = next.Add(time.Second)
			continue
		}
		if e.Time().After(until) {
			break
		}
		it := w.q.Pop()
		if it.Time().After(w.now) {
			w.now = it.Time()
		}
		it.P()
	}
	w.now = until
}

func (w *refRun) judge(t *testing.T) (*judge.Report, map[string]map[string]int) {
	t.Helper()
	st, err := oraclejudge.NewStream(oraclejudge.Params{Self: sutAddr, QuietFrom: genesis})
	require.NoError(t, err)
	evs := w.rec.Events()
	for i := range evs {
		st.Step(&evs[i])
	}
	r := st.Finish()
	if r.Failed() || len(r.Violations) > 0 {
		for _, v := range r.Violations {
			t.Log(v.String())
			for _, seq := range v.Evidence {
				if seq >= 1 && int(seq) <= len(evs) {
					t.Log("   ", history.Line(evs[seq-1], genesis))
				}
			}
		}
	}
	return r, st.Coverage()
}

func TestReferenceDaemonPasses(t *testing.T) {
	w := newRefRun(t, 3)
	w.at(genesis.Add(500*time.Millisecond), w.start)
	w.run(genesis.Add(4 * time.Minute))
	w.stop()
	w.run(genesis.Add(5 * time.Minute))
	require.True(t, w.exit, "the daemon exits after Stop")
	r, cov := w.judge(t)
	require.Empty(t, r.Violations)
	for _, n := range oraclejudge.Names() {
		t.Logf("%-22s %-13s %v", n, r.Verdict(n), cov[n])
	}
	for _, n := range []string{"o10-complete-handled", "o12-fidelity", "o14-client-closes", "o15-shutdown-order", "o16-liveness",
		"o17-wire", "o18-health-probe"} {
		require.Equal(t, judge.Pass, r.Verdict(n), "%s: %v", n, cov[n])
	}
}

func TestReferenceDaemonPassesAcrossACrash(t *testing.T) {
	w := newRefRun(t, 3)
	w.at(genesis.Add(500*time.Millisecond), w.start)
	// Crash 1.2 s after a broadcast of request 1 (its tx admitted, not yet
	// committed), restart 5 s later.
	w.run(genesis.Add(40 * time.Second))
	crashed := false
	for !crashed {
		w.run(w.now.Add(100 * time.Millisecond))
		for _, e := range w.rec.Tail(3, nil) {
			if e.CheckTx != nil && e.CheckTx.Origin == history.OriginSUT && e.CheckTx.Code == 0 && e.CheckTx.RPCError == "" {
				crashed = true
			}
		}
	}
	w.crash()
	w.at(w.now.Add(5*time.Second), w.start)
	w.run(w.now.Add(3 * time.Minute))
	w.stop()
	w.run(w.now.Add(time.Minute))
	r, cov := w.judge(t)
	require.Empty(t, r.Violations)
	for _, n := range []string{"o3b-restart-period", "o13-restart", "o1-single-commit"} {
		require.Equal(t, judge.Pass, r.Verdict(n), "%s: %v", n, cov[n])
	}
}

func TestReferenceDaemonPassesWithFlakySources(t *testing.T) {
	script := datasource.Script{Path: "data.price", Latency: [2]time.Duration{10 * time.Millisecond, 500 * time.Millisecond},
		Mix: []datasource.Weight{{Class: datasource.ClassOK, Weight: 60}, {Class: datasource.ClassStatus, Weight: 25},
			{Class: datasource.ClassReset, Weight: 5}, {Class: datasource.ClassHang, Weight: 3}, {Class: datasource.ClassMalformed, Weight: 4},
			{Class: datasource.ClassNull, Weight: 3}}}
	w := newRefRunWith(t, 3, script)
	w.at(genesis.Add(500*time.Millisecond), w.start)
	w.run(genesis.Add(40 * time.Minute))
	w.stop()
	w.run(w.now.Add(time.Minute))
	r, cov := w.judge(t)
	require.Empty(t, r.Violations)
	for _, n := range []string{"o3-execution-timing", "o4-fetch-retries", "o12-fidelity", "o10-complete-handled"} {
		require.Equal(t, judge.Pass, r.Verdict(n), "%s: %v", n, cov[n])
	}
}

func TestBentReferenceIsCaught(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bend    func(w *refRun)
		checker string
	}{
		{"Complete handles only the first entry", func(w *refRun) {
			w.bendFrame = func(ev map[string][]string) map[string][]string {
				out := map[string][]string{}
				for k, v := range ev {
					if strings.HasPrefix(k, oracle.EventComplete+".") && len(v) > 1 {
						v = v[:1]
					}
					out[k] = v
				}
				return out
			}
		}, "o10-complete-handled"},
		{"endpoint index ignores AssignedIndex", func(w *refRun) {
			w.bendURL = func(u string) string { return strings.Replace(u, "/e/1", "/e/0", 1) }
		}, "o12-fidelity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRefRun(t, 3)
			tc.bend(w)
			w.at(genesis.Add(500*time.Millisecond), w.start)
			w.run(genesis.Add(3 * time.Minute))
			w.stop()
			w.run(w.now.Add(time.Minute))
			st, err := oraclejudge.NewStream(oraclejudge.Params{Self: sutAddr, QuietFrom: genesis})
			require.NoError(t, err)
			evs := w.rec.Events()
			for i := range evs {
				st.Step(&evs[i])
			}
			require.Equal(t, judge.Violated, st.Finish().Verdict(tc.checker))
		})
	}
}

// BenchmarkCheck judges a recorded reference run of 100 requests over ten
// simulated minutes; it reports the cost per record and the records a
// simulated second holds.
func BenchmarkCheck(b *testing.B) {
	w := newRefRun(b, 100)
	w.at(genesis.Add(500*time.Millisecond), w.start)
	w.run(genesis.Add(10 * time.Minute))
	evs := w.rec.Events()
	p := oraclejudge.Params{Self: sutAddr, QuietFrom: genesis, PoolSize: 100}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := oraclejudge.Check(p, evs)
		if err != nil || r.Failed() {
			b.Fatalf("%v %v", err, r.Violations)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/record")
	b.ReportMetric(float64(len(evs))/600, "records/sim-s")
}
