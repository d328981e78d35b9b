package oracle_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/oracledtest"
	"github.com/wsconverge/converge/wire/abciquery"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keyring"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/tx"
)

var (
	selfKey = keys.PrivKeyFromSeed("oracled-runtime-test-self")
	self    = selfKey.PubKey().Address()
	peer    = keys.PrivKeyFromSeed("oracled-runtime-test-peer").PubKey().Address()
)

// source is a data-source server: GET /r/{id} answers {"price": …}, and a
// test can hold the answers of a request until it releases them.
type source struct {
	srv     *httptest.Server
	mu      sync.Mutex
	headers []http.Header
	hold    chan struct{} // while not nil, GETs wait for it to close
	started chan struct{} // a GET has arrived (buffered)
}

func newSource(t *testing.T) *source {
	s := &source{started: make(chan struct{}, 100)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		hold := s.hold
		s.mu.Unlock()
		s.started <- struct{}{}
		if hold != nil {
			<-hold
		}
		fmt.Fprintf(w, `{"data":{"price":%s.5}}`, r.PathValue("id"))
	}))
	mux := http.NewServeMux()
	mux.Handle("/r/{id}", s.srv.Config.Handler)
	s.srv.Config.Handler = mux
	t.Cleanup(s.srv.Close)
	return s
}

func (s *source) url(r uint64) string { return fmt.Sprintf("%s/r/%d", s.srv.URL, r) }

func (s *source) gets() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// setup is a daemon home (config.toml and key) pointing at a node.
type setup struct {
	t     *testing.T
	home  string
	chain *oracledtest.Chain
	node  *oracledtest.Node
	src   *source
	out   *syncBuffer
}

func newSetup(t *testing.T, extra string) *setup {
	t.Helper()
	s := &setup{t: t, home: t.TempDir(), chain: oracledtest.NewChain(oracle.DefaultChainID, time.Now()), out: &syncBuffer{}}
	s.chain.AddAccount(self, 3, 0)
	s.node = oracledtest.NewNode(t, s.chain)
	s.src = newSource(t)
	s.writeConfig(fmt.Sprintf(`[chain]
id = 'guru_631-1'
endpoint = '%s'

[key]
name = 'oracle'

[gas]
prices = '630000000000'

[worker]
timeout_sec = 2
%s`, s.node.URL(), extra))
	_, err := keyring.Add(s.home, "oracle", selfKey, false)
	require.NoError(t, err)
	return s
}

func (s *setup) writeConfig(text string) {
	s.t.Helper()
	require.NoError(s.t, os.WriteFile(filepath.Join(s.home, oracled.ConfigFile), []byte(text), 0o600))
}

func (s *setup) doc(r uint64, nonce uint64) oracle.RequestDoc {
	d := oracle.RequestDoc{
		RequestID: r, Period: 1, AccountList: []string{self, peer}, Quorum: 1,
		Endpoints: []oracle.Endpoint{{URL: s.src.url(r), ParseRule: "data.price"}},
		Status:    oracle.StatusEnabled, Nonce: nonce,
	}
	s.chain.SetDoc(d)
	return d
}

// running is a daemon started by Run in a goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	err    error

	mu   sync.Mutex
	outs []ports.Output
}

func (s *setup) run() *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.code, r.err = oracled.Run(ctx, oracled.Options{Home: s.home, Stdout: s.out, Observe: func(o ports.Output) {
			r.mu.Lock()
			r.outs = append(r.outs, o)
			r.mu.Unlock()
		}})
	}()
	s.t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func (r *running) outputs() []ports.Output {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ports.Output(nil), r.outs...)
}

// wait waits for the daemon to exit.
func (r *running) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		t.Fatalf("the daemon did not exit within %v", within)
	}
}

func (r *running) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// submissionsOf decodes the broadcasts the chain received.
func submissionsOf(t *testing.T, c *oracledtest.Chain) []string {
	t.Helper()
	var out []string
	for _, b := range c.Broadcasts() {
		ds := b.Submissions()[0].GetDataSet()
		seq, _ := b.Sequence()
		out = append(out, fmt.Sprintf("r%d n%d %s seq%d", ds.GetRequestId(), ds.GetNonce(), ds.GetRawData(), seq))
	}
	return out
}

// A whole life on the wire: start, subscribe, a Register, a round (GET
// with the spec's headers, a really signed broadcast), a Complete and the
// next round, then a graceful stop within T_sd that closes the §3.7
// channels in order and leaves no goroutine behind.
func TestRunRoundAndStop(t *testing.T) {
	s := newSetup(t, "")
	baseline := runtime.NumGoroutine()
	d := s.run()
	eventually(t, func() bool { return s.node.LiveSubscriptions() == 3 }, "three subscriptions")
	subs := s.node.Subscriptions()
	require.Equal(t, []string{oracle.QueryRegister, oracle.QueryUpdate, oracle.QueryComplete},
		[]string{subs[0].Query, subs[1].Query, subs[2].Query})
	prev := int64(-1)
	for _, sub := range subs {
		n, ok := sub.ID.Int()
		require.True(t, ok, "integer ids")
		require.Greater(t, n, prev, "increasing ids")
		prev = n
	}
	eventually(t, func() bool { return containsOutput(d.outputs(), ports.TraceStep, ports.StepRunning) }, "running")
	methods := s.node.HTTPMethods()
	require.NotEmpty(t, methods)
	require.Equal(t, cometrpc.MethodStatus, methods[0], "D28: the RPC client's one status probe comes before the sequence sync and the load")
	require.Contains(t, methods[1:], cometrpc.MethodABCIQuery, "the sequence sync and the load query the chain")

	s.doc(1, 0)
	s.node.Publish(oracle.QueryRegister, oracledtest.RegisterFrame(1))
	eventually(t, func() bool { return len(s.chain.Broadcasts()) == 1 }, "the first broadcast")
	require.Equal(t, []string{"r1 n1 1.5 seq0"}, submissionsOf(t, s.chain))
	b := s.chain.Broadcasts()[0]
	require.NoError(t, tx.VerifySignature(b, oracle.DefaultChainID, 3), "the production daemon signs for real")
	h := s.src.gets()[0]
	require.Equal(t, "application/json", h.Get("Accept"))
	require.Equal(t, "Oracle-Daemon/1.0", h.Get("User-Agent"))

	s.chain.Commit()
	bt := time.Now().Add(-time.Second).Truncate(time.Second)
	s.chain.Complete(1, 1, bt)
	s.node.Publish(oracle.QueryComplete, oracledtest.CompleteFrame(1, 1, bt))
	eventually(t, func() bool { return len(s.chain.Broadcasts()) == 2 }, "the second round")
	require.Equal(t, "r1 n2 1.5 seq1", submissionsOf(t, s.chain)[1])

	stopAt := time.Now()
	d.cancel()
	d.wait(t, oracle.ShutdownBound(2*time.Second))
	require.Less(t, time.Since(stopAt), oracle.ShutdownBound(2*time.Second))
	require.Equal(t, 0, d.code)
	require.NoError(t, d.err)
	require.Equal(t, wantShutdown, shutdownTrace(d.outputs()))
	eventually(t, func() bool {
		st := s.node.CloseStatuses()
		return len(st) == 1 && st[0] == websocket.StatusNormalClosure
	}, "the client closed the WebSocket with a normal closure")
	settled := func() bool { return runtime.NumGoroutine() <= baseline }
	if !waitFor(settled, 10*time.Second) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d, baseline %d\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
	}

	logs, err := filepath.Glob(filepath.Join(s.home, "logs", "oracled.*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	content, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	require.Contains(t, string(content), "oracle daemon running")
	require.Contains(t, s.out.String(), "oracle daemon running", "logs go to stdout too")
}

// eventually waits for cond, failing after a generous deadline.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, "waiting for: %s", what)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func containsOutput(outs []ports.Output, kind ports.TraceKind, name string) bool {
	for _, o := range outs {
		if tr, ok := o.(*ports.Trace); ok && tr.Kind == kind && tr.Name == name {
			return true
		}
	}
	return false
}

var wantShutdown = []string{
	"close " + ports.ChanShutdown,
	"close " + ports.ChanEvent, "close " + ports.ChanError, "stop " + ports.CompWatcher,
	"drained", "close " + ports.ChanResult, "stop " + ports.CompScheduler,
	"close " + ports.ChanSemaphore, "stop " + ports.CompSubmitter,
	"stop " + ports.CompRPCClient,
	"close " + ports.ChanFatal,
}

func shutdownTrace(outs []ports.Output) []string {
	var got []string
	for _, o := range outs {
		tr, ok := o.(*ports.Trace)
		if !ok {
			continue
		}
		switch tr.Kind {
		case ports.TraceClose, ports.TraceStop:
			got = append(got, tr.Kind.String()+" "+tr.Name)
		case ports.TraceDrained:
			got = append(got, "drained")
		}
	}
	return got
}

// A dropped WebSocket is redialled and re-subscribed with new integer ids,
// and reconciliation runs after it (D25).
func TestRunResubscribes(t *testing.T) {
	s := newSetup(t, "")
	d := s.run()
	eventually(t, func() bool { return containsOutput(d.outputs(), ports.TraceStep, ports.StepRunning) }, "running")
	lists := countQueries(s.chain, abciquery.PathDocs)
	first := s.node.Subscriptions()

	s.node.DropAll()
	eventually(t, func() bool { return len(s.node.Subscriptions()) == 6 && s.node.LiveSubscriptions() == 3 }, "re-subscribed")
	again := s.node.Subscriptions()[3:]
	for i, sub := range again {
		require.Equal(t, first[i].Query, sub.Query)
		n, _ := sub.ID.Int()
		old, _ := first[2].ID.Int()
		require.Greater(t, n, old, "new ids")
		require.NotEqual(t, first[i].Conn, sub.Conn)
	}
	eventually(t, func() bool { return countQueries(s.chain, abciquery.PathDocs) == lists+1 }, "R after re-subscribing")

	// Frames on the new connection are handled.
	s.doc(2, 0)
	s.node.Publish(oracle.QueryRegister, oracledtest.RegisterFrame(2))
	eventually(t, func() bool { return len(s.chain.Broadcasts()) == 1 }, "a broadcast after the reconnect")
	require.False(t, d.exited())
}

func countQueries(c *oracledtest.Chain, path string) int {
	n := 0
	for _, p := range c.Queries() {
		if p == path {
			n++
		}
	}
	return n
}

// A stop during a GET waits for it (the task group drains) and exits 0;
// nothing is broadcast after the stop.
func TestRunStopDuringGET(t *testing.T) {
	s := newSetup(t, "")
	hold := make(chan struct{})
	s.src.hold = hold
	s.doc(1, 0)
	d := s.run()
	<-s.src.started
	d.cancel()
	eventually(t, func() bool { return containsOutput(d.outputs(), ports.TraceStop, ports.CompWatcher) }, "the watcher stopped")
	require.False(t, d.exited(), "waiting for the GET in flight")
	require.False(t, containsOutput(d.outputs(), ports.TraceClose, ports.ChanResult))
	close(hold)
	d.wait(t, oracle.ShutdownBound(2*time.Second))
	require.Equal(t, 0, d.code)
	require.Empty(t, s.chain.Broadcasts())
	require.Equal(t, wantShutdown, shutdownTrace(d.outputs()))
}

// Bad configuration and keys make Run fail with ExitBadConfig, naming the
// key, before it contacts the chain.
func TestRunBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string // "" keeps the setup's; "-" removes the file
		key    bool   // remove the key
		want   string
	}{
		{"no file", "-", false, "config.toml"},
		{"unknown key", "[chain]\nid = 'x'\nendpoint = 'http://h:1'\nnodes = 3\n[key]\nname='oracle'\n[gas]\nprices='1'\n", false, "unknown key chain.nodes"},
		{"missing gas.prices", "[chain]\nid = 'x'\nendpoint = 'http://h:1'\n[key]\nname='oracle'\n", false, "gas.prices: required"},
		{"missing chain.id", "[chain]\nendpoint = 'http://h:1'\n[key]\nname='oracle'\n[gas]\nprices='1'\n", false, "chain.id: required"},
		{"bad type", "[chain]\nid = 'x'\nendpoint = 'http://h:1'\n[key]\nname='oracle'\n[gas]\nprices='1'\nlimit='many'\n", false, "line 8, column 7: key gas.limit"},
		{"syntax", "[chain\n", false, "line 1"},
		{"backend os", "[chain]\nid = 'x'\nendpoint = 'http://h:1'\n[key]\nname='oracle'\nkeyring_backend='os'\n[gas]\nprices='1'\n", false, "not supported"},
		{"no key", "", true, "key \"oracle\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, "")
			switch tc.config {
			case "":
			case "-":
				require.NoError(t, os.Remove(filepath.Join(s.home, oracled.ConfigFile)))
			default:
				s.writeConfig(tc.config)
			}
			if tc.key {
				require.NoError(t, os.Remove(keyring.Path(s.home, "oracle")))
			}
			code, err := oracled.Run(context.Background(), oracled.Options{Home: s.home})
			require.Equal(t, oracled.ExitBadConfig, code)
			require.ErrorContains(t, err, tc.want)
			require.Zero(t, s.node.RequestCount(), "the chain was not contacted")
		})
	}
}

// An unreachable chain at start, or the WebSocket refused more than
// retry.max_attempts times later, ends the daemon with ExitFatal.
func TestRunFatal(t *testing.T) {
	t.Run("chain unreachable", func(t *testing.T) {
		s := newSetup(t, "")
		s.node.Close()
		code, err := oracled.Run(context.Background(), oracled.Options{Home: s.home})
		require.Equal(t, oracled.ExitFatal, code)
		require.ErrorContains(t, err, "connect")
	})
	t.Run("re-subscription exhausted", func(t *testing.T) {
		s := newSetup(t, "[retry]\nmax_attempts = 2\nmax_delay_sec = 1\n")
		d := s.run()
		eventually(t, func() bool { return containsOutput(d.outputs(), ports.TraceStep, ports.StepRunning) }, "running")
		s.node.SetRefuseWS(true)
		s.node.DropAll()
		d.wait(t, 20*time.Second)
		require.Equal(t, oracled.ExitFatal, d.code)
		require.ErrorContains(t, d.err, "re-subscription")
		require.Equal(t, wantShutdown, shutdownTrace(d.outputs()))
	})
}
