package core_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/refimpl/oracle/oracledtest"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/tx"
)

// t0 is the virtual start of every test.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	selfKey = keys.PrivKeyFromSeed("oracled-core-test-self")
	self    = selfKey.PubKey().Address()
	peer1   = keys.PrivKeyFromSeed("oracled-core-test-peer-1").PubKey().Address()
	peer2   = keys.PrivKeyFromSeed("oracled-core-test-peer-2").PubKey().Address()
)

// stamped is one output with the virtual time it was emitted at.
type stamped struct {
	at  time.Time
	out ports.Output
}

// source answers one GET attempt.
type source func(attempt int) (status int, body string, err error)

func body(s string) source {
	return func(int) (int, string, error) { return 200, s, nil }
}

// world drives a core the way a simulator would: it answers every request
// at once from the scripted chain and sources, except those hold says to
// keep for the test to answer itself.
type world struct {
	t       testing.TB
	c       *core.Core
	chain   *oracledtest.Chain
	now     time.Time
	outs    []stamped
	held    []ports.Output
	hold    func(ports.Output) bool
	sources map[string]source
	conn    ports.ID
	refuse  int // dials still to refuse
	exited  bool
	inputs  []ports.Input
	// byAddress hands replies and fetch results over by address, as the
	// simulator does (ports.Input).
	byAddress bool
}

// addressed makes the world hand replies and fetch results over by
// address when on.
func (w *world) addressed(on bool) *world {
	w.byAddress = on
	return w
}

type option func(*oracle.Config)

func poolSize(n int) option { return func(c *oracle.Config) { c.Worker.PoolSize = n } }

func newWorld(t testing.TB, opts ...option) *world {
	t.Helper()
	cfg := oracle.DefaultConfig(t.TempDir())
	for _, o := range opts {
		o(&cfg)
	}
	c, err := core.New(cfg, keys.StandInSigner{Key: selfKey}, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	w := &world{
		t: t, c: c, chain: oracledtest.NewChain(cfg.Chain.ID, t0), now: t0,
		sources: map[string]source{}, hold: func(ports.Output) bool { return false },
	}
	w.chain.AddAccount(self, 7, 0)
	return w
}

// restart is a new daemon process on the same chain and sources: the old
// core is simply dropped (a crash loses its memory, §3.8).
func (w *world) restart(opts ...option) *world {
	w.t.Helper()
	n := newWorld(w.t, opts...)
	n.chain, n.sources, n.now = w.chain, w.sources, w.now
	return n
}

// start runs §3.1 to the running loops (with whatever docs the chain has).
func (w *world) start() *world {
	w.t.Helper()
	w.feed(w.c.Start(w.now))
	w.drain()
	return w
}

// startRunning starts and checks the daemon reached its loops.
func (w *world) startRunning() *world {
	w.t.Helper()
	w.start()
	require.True(w.t, w.traced(ports.TraceStep, ports.StepRunning), "daemon not running")
	return w
}

func (w *world) handle(in ports.Input) {
	w.inputs = append(w.inputs, in)
	w.drain()
}

// drain feeds queued inputs until nothing is left to answer.
func (w *world) drain() {
	for len(w.inputs) > 0 {
		in := w.inputs[0]
		w.inputs = w.inputs[1:]
		if w.byAddress {
			switch v := in.(type) {
			case ports.Reply:
				in = &v
			case ports.Fetched:
				in = &v
			}
		}
		w.feed(w.c.Handle(w.now, in))
	}
}

func (w *world) feed(outs []ports.Output) {
	for _, o := range outs {
		w.outs = append(w.outs, stamped{w.now, o})
		if _, ok := o.(ports.Exit); ok {
			w.exited = true
		}
		if w.hold(o) {
			w.held = append(w.held, o)
			continue
		}
		if in := w.answer(o); in != nil {
			w.inputs = append(w.inputs, in)
		}
	}
}

// answer is the automatic answer to a request, or nil.
func (w *world) answer(o ports.Output) ports.Input {
	switch o := o.(type) {
	case ports.Dial:
		if w.refuse > 0 {
			w.refuse--
			return ports.Dialed{Conn: o.ID, Err: errors.New("connection refused")}
		}
		w.conn = o.ID
		return ports.Dialed{Conn: o.ID}
	case ports.Subscribe, ports.UnsubscribeAll:
		return ports.Reply{ID: requestID(o)}
	case ports.StatusCall:
		st := w.chain.Status()
		return ports.Reply{ID: o.ID, Status: &st}
	case ports.QueryCall:
		q := w.chain.Query(o.Path, o.Data)
		return ports.Reply{ID: o.ID, Query: &q}
	case ports.BroadcastCall:
		res, rpcErr := w.chain.Broadcast(o.Tx)
		if rpcErr != nil {
			return ports.Reply{ID: o.ID, RPCError: rpcErr}
		}
		return ports.Reply{ID: o.ID, Broadcast: &res}
	case ports.Fetch:
		src, ok := w.sources[o.URL]
		if !ok {
			return ports.Fetched{ID: o.ID, Err: fmt.Errorf("no source at %s", o.URL)}
		}
		st, b, err := src(o.Attempt)
		return ports.Fetched{ID: o.ID, Status: st, Body: []byte(b), Err: err}
	case ports.AbortFetch:
		for i, h := range w.held {
			if f, ok := h.(ports.Fetch); ok && f.ID == o.ID {
				w.held = slices.Delete(w.held, i, i+1)
				return ports.Fetched{ID: o.ID, Err: errors.New("aborted")}
			}
		}
	}
	return nil
}

func requestID(o ports.Output) ports.ID {
	switch o := o.(type) {
	case ports.Subscribe:
		return o.ID
	case ports.UnsubscribeAll:
		return o.ID
	case ports.StatusCall:
		return o.ID
	case ports.QueryCall:
		return o.ID
	case ports.BroadcastCall:
		return o.ID
	case ports.Fetch:
		return o.ID
	case ports.Dial:
		return o.ID
	}
	return 0
}

// release answers the held requests that match, in order, automatically.
func (w *world) release(match func(ports.Output) bool) int {
	w.t.Helper()
	var keep []ports.Output
	n := 0
	for _, o := range w.held {
		if match(o) {
			n++
			if in := w.answer(o); in != nil {
				w.inputs = append(w.inputs, in)
			}
			continue
		}
		keep = append(keep, o)
	}
	w.held = keep
	w.drain()
	return n
}

// reply answers one held request with a given input.
func (w *world) reply(match func(ports.Output) bool, in func(ports.ID) ports.Input) {
	w.t.Helper()
	for i, o := range w.held {
		if match(o) {
			w.held = slices.Delete(w.held, i, i+1)
			w.handle(in(requestID(o)))
			return
		}
	}
	w.t.Fatalf("no held request matches")
}

// lose carries out one held request in the world but loses its answer:
// the core gets a transport error instead (F12).
func (w *world) lose(match func(ports.Output) bool) {
	w.t.Helper()
	for i, o := range w.held {
		if !match(o) {
			continue
		}
		w.held = slices.Delete(w.held, i, i+1)
		w.answer(o)
		lost := errors.New("connection reset by peer")
		if f, ok := o.(ports.Fetch); ok {
			w.handle(ports.Fetched{ID: f.ID, Err: lost})
			return
		}
		w.handle(ports.Reply{ID: requestID(o), Err: lost})
		return
	}
	w.t.Fatalf("no held request matches")
}

// advance lets d of virtual time pass, waking the core at each timer.
func (w *world) advance(d time.Duration) {
	w.t.Helper()
	until := w.now.Add(d)
	for !w.exited {
		next, ok := w.c.NextWake()
		if !ok || next.After(until) {
			break
		}
		if next.After(w.now) {
			w.now = next
		}
		w.handle(ports.Wake{})
	}
	w.now = until
}

// frame delivers a frame on the current connection.
func (w *world) frame(query string, events map[string][]string) {
	w.handle(ports.Frame{Conn: w.conn, Query: query, Events: events})
}

func (w *world) register(ids ...uint64) {
	w.frame(oracle.QueryRegister, map[string][]string{"tm.event": {"Tx"}, oracle.KeyRegisterID: itoa(ids...)})
}

func (w *world) update(ids ...uint64) {
	w.frame(oracle.QueryUpdate, map[string][]string{"tm.event": {"Tx"}, oracle.KeyUpdateID: itoa(ids...),
		oracle.EventUpdate + ".nonce": {"999"}})
}

// complete delivers a Complete frame; entries are (request, nonce, block time) triples.
func (w *world) complete(entries ...completeEntry) {
	ev := map[string][]string{"tm.event": {"NewBlock"}}
	for _, e := range entries {
		ev[oracle.KeyCompleteID] = append(ev[oracle.KeyCompleteID], strconv.FormatUint(e.r, 10))
		ev[oracle.KeyCompleteNonce] = append(ev[oracle.KeyCompleteNonce], strconv.FormatUint(e.n, 10))
		ev[oracle.KeyCompleteBlockTime] = append(ev[oracle.KeyCompleteBlockTime], strconv.FormatInt(e.bt.Unix(), 10))
	}
	w.frame(oracle.QueryComplete, ev)
}

type completeEntry struct {
	r, n uint64
	bt   time.Time
}

func itoa(ids ...uint64) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(id, 10)
	}
	return s
}

// doc is an ENABLED doc for request r with self at index 0 of one
// endpoint, period 10 s, quorum 1.
func doc(r uint64, opts ...func(*oracle.RequestDoc)) oracle.RequestDoc {
	d := oracle.RequestDoc{
		RequestID: r, Period: 10, AccountList: []string{self, peer1}, Quorum: 1,
		Endpoints: []oracle.Endpoint{{URL: url(r, 0), ParseRule: "data.price"}},
		Status:    oracle.StatusEnabled,
	}
	for _, o := range opts {
		o(&d)
	}
	return d
}

func url(r uint64, k int) string { return fmt.Sprintf("http://src.test/r/%d/e/%d", r, k) }

func nonce(n uint64) func(*oracle.RequestDoc) { return func(d *oracle.RequestDoc) { d.Nonce = n } }
func status(s oracle.RequestStatus) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.Status = s }
}
func accounts(a ...string) func(*oracle.RequestDoc) {
	return func(d *oracle.RequestDoc) { d.AccountList = a }
}
func period(p uint32) func(*oracle.RequestDoc) { return func(d *oracle.RequestDoc) { d.Period = p } }

// withDoc puts a doc on chain and a healthy source at its endpoint.
func (w *world) withDoc(d oracle.RequestDoc) *world {
	w.chain.SetDoc(d)
	for _, e := range d.Endpoints {
		if _, ok := w.sources[e.URL]; !ok {
			w.sources[e.URL] = body(fmt.Sprintf(`{"data":{"price":%d.25}}`, d.RequestID))
		}
	}
	return w
}

// ---------------------------------------------------------------------------
// Reading the outputs.

func outputsOf[T ports.Output](w *world) []T {
	var out []T
	for _, s := range w.outs {
		if o, ok := s.out.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

func stampsOf[T ports.Output](w *world) []stamped {
	var out []stamped
	for _, s := range w.outs {
		if _, ok := s.out.(T); ok {
			out = append(out, s)
		}
	}
	return out
}

// fetchesOf are the GETs for request r with their times.
func (w *world) fetchesOf(r uint64) []stamped {
	var out []stamped
	for _, s := range stampsOf[ports.Fetch](w) {
		if s.out.(ports.Fetch).RequestID == r {
			out = append(out, s)
		}
	}
	return out
}

// submission is a decoded broadcast.
type submission struct {
	at       time.Time
	r, n     uint64
	raw      string
	sequence uint64
	gas      uint64
}

func (w *world) broadcasts() []submission {
	w.t.Helper()
	var out []submission
	for _, s := range stampsOf[ports.BroadcastCall](w) {
		b := s.out.(ports.BroadcastCall)
		d, err := tx.Decode(b.Tx)
		require.NoError(w.t, err)
		require.Equal(w.t, tx.Hash(b.Tx), b.Hash)
		msgs := d.Submissions()
		require.Len(w.t, msgs, 1)
		ds := msgs[0].GetDataSet()
		require.Equal(w.t, self, msgs[0].GetAuthorityAddress())
		require.Equal(w.t, self, ds.GetProvider())
		seq, _ := d.Sequence()
		out = append(out, submission{at: s.at, r: ds.GetRequestId(), n: ds.GetNonce(), raw: ds.GetRawData(), sequence: seq, gas: d.GasLimit()})
	}
	return out
}

func (w *world) queriesOf(path string) []stamped {
	var out []stamped
	for _, s := range stampsOf[ports.QueryCall](w) {
		if s.out.(ports.QueryCall).Path == path {
			out = append(out, s)
		}
	}
	return out
}

func (w *world) traced(kind ports.TraceKind, name string) bool {
	for _, tr := range outputsOf[*ports.Trace](w) {
		if tr.Kind == kind && tr.Name == name {
			return true
		}
	}
	return false
}

// rows are the transition rows applied to request r, in order.
func (w *world) rows(r uint64) []oracle.Row {
	var rows []oracle.Row
	for _, tr := range outputsOf[*ports.Trace](w) {
		if tr.Kind == ports.TraceJob && tr.RequestID == r {
			rows = append(rows, tr.Rows...)
		}
	}
	return rows
}

func (w *world) job(r uint64) *oracle.Job {
	for _, j := range w.c.Jobs() {
		if j.RequestID == r {
			return &j
		}
	}
	return nil
}

func (w *world) results(name string) []*ports.Trace {
	var out []*ports.Trace
	for _, tr := range outputsOf[*ports.Trace](w) {
		if tr.Kind == ports.TraceResult && tr.Name == name {
			out = append(out, tr)
		}
	}
	return out
}

func isFetch(r uint64) func(ports.Output) bool {
	return func(o ports.Output) bool { f, ok := o.(ports.Fetch); return ok && f.RequestID == r }
}

func isBroadcast(o ports.Output) bool { _, ok := o.(ports.BroadcastCall); return ok }

func isQuery(path string) func(ports.Output) bool {
	return func(o ports.Output) bool { q, ok := o.(ports.QueryCall); return ok && q.Path == path }
}

var pathAccount = abciquery.PathAccount
