package oracle

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/creachadair/taskgroup"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
	"github.com/wsconverge/converge/refimpl/oracle/cometclient"
	"github.com/wsconverge/converge/refimpl/oracle/core"
	"github.com/wsconverge/converge/refimpl/oracle/internal/conntrack"
	"github.com/wsconverge/converge/wire/cometrpc"
	"github.com/wsconverge/converge/wire/keyring"
	"github.com/wsconverge/converge/wire/keys"
)

// Exit statuses of Run.
const (
	ExitOK        = 0 // stopped on request
	ExitFatal     = 1 // a fatal condition, or the chain unreachable at start
	ExitBadConfig = 2 // the configuration or the key is unusable; the chain was not contacted
)

// The HTTP GET an execution makes (ORACLE-SPEC 3.4).
const (
	AcceptHeader = "application/json"
	UserAgent    = "Oracle-Daemon/1.0"
	maxBody      = 8 << 20 // a data-source body larger than this fails the attempt
)

// Options configure Run.
type Options struct {
	// Home holds config.toml, the logs and (by default) the keyring.
	Home string
	// Stdout, when set, gets a copy of every log line.
	Stdout io.Writer
	// LogLevel is the least level logged (default Info; Debug adds the
	// trace points).
	LogLevel slog.Level
	// Observe, when set, sees every output of the core as the loop carries
	// it out (tests watch the §3.7 order with it).
	Observe func(ports.Output)
}

// Run runs the daemon until ctx is cancelled (a graceful stop, §3.7) or a
// fatal condition, and returns the exit status with the reason for a
// non-zero one. The configuration and the key are checked before the chain
// is contacted (ExitBadConfig).
func Run(ctx context.Context, opts Options) (int, error) {
	cfg, err := LoadConfig(opts.Home)
	if err != nil {
		return ExitBadConfig, err
	}
	if err := keyring.CheckBackend(cfg.Key.KeyringBackend); err != nil {
		return ExitBadConfig, fmt.Errorf("config: key.keyring_backend: %w", err)
	}
	key, err := keyring.Load(cfg.Key.KeyringDir, cfg.Key.Name)
	if err != nil {
		return ExitBadConfig, err
	}
	client, err := cometclient.New(cfg.Chain.Endpoint)
	if err != nil {
		return ExitBadConfig, fmt.Errorf("config: chain.endpoint: %w", err)
	}
	c, err := core.New(cfg, keys.KeySigner{Key: key}, rand.New(rand.NewPCG(seed(), seed())))
	if err != nil {
		return ExitBadConfig, err
	}
	logger, logPath, logFile, err := openLog(opts.Home, opts.Stdout, opts.LogLevel, time.Now())
	if err != nil {
		return ExitBadConfig, err
	}
	defer logFile.Close()
	logger.Info("oracled starting", "home", opts.Home, "log", logPath, "chain", cfg.Chain.ID,
		"endpoint", cfg.Chain.Endpoint, "provider", c.Self())

	d := newDaemon(cfg, c, client, logger, opts.Observe)
	code, reason := d.run(ctx)
	if code != ExitOK {
		return code, errors.New(reason)
	}
	return ExitOK, nil
}

func seed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// daemon is the production runtime: one loop goroutine owns the core and
// carries out its outputs with I/O goroutines that post their results
// back. The channels are those of §3.7 and close when the core's trace says
// so, so the trace order is the real order: closing shutdownCh stops the
// watcher's forwarders; EventCh and ErrorCh close once they have exited;
// ResultCh (the GETs' answers) closes once the task group has drained;
// submitSemaphore, which every broadcast goroutine holds a token of, closes
// after the last broadcast; fatalCh closes last.
type daemon struct {
	cfg     oracle.Config
	core    *core.Core
	client  *cometclient.Client
	web     *conntrack.Client // the data sources
	log     *slog.Logger
	observe func(ports.Output)

	shutdownCh chan struct{}
	eventCh    chan ports.Frame
	errorCh    chan ports.ConnClosed
	resultCh   chan ports.Fetched
	submitSem  chan struct{}
	fatalCh    chan struct{}
	replies    chan ports.Reply // RPC answers
	dials      chan dialed
	ioDone     chan struct{} // closed with the RPC client: late answers are dropped

	ioCtx    context.Context // cancelled with the RPC client
	ioCancel context.CancelFunc
	wg       sync.WaitGroup // every I/O goroutine but the GETs and the forwarders
	watchers sync.WaitGroup // the watcher's forwarders
	closing  sync.WaitGroup // WebSocket closes in progress
	tasks    *taskgroup.Group
	start    taskgroup.StartFunc

	// Owned by the loop goroutine.
	conns  map[ports.ID]*cometclient.Conn
	aborts map[ports.ID]context.CancelFunc
	closed map[string]bool // the §3.7 channels closed so far
	exit   *ports.Exit
}

// dialed is a dial's result on its way to the loop.
type dialed struct {
	id   ports.ID
	conn *cometclient.Conn
	err  error
}

func newDaemon(cfg oracle.Config, c *core.Core, client *cometclient.Client, log *slog.Logger, observe func(ports.Output)) *daemon {
	ioCtx, ioCancel := context.WithCancel(context.Background())
	d := &daemon{
		cfg: cfg, core: c, client: client, log: log, observe: observe,
		web:        conntrack.New(),
		shutdownCh: make(chan struct{}),
		eventCh:    make(chan ports.Frame, cfg.Worker.ChannelSize),
		errorCh:    make(chan ports.ConnClosed, 1),
		resultCh:   make(chan ports.Fetched, cfg.Worker.PoolSize),
		submitSem:  make(chan struct{}, cfg.Worker.PoolSize),
		fatalCh:    make(chan struct{}),
		replies:    make(chan ports.Reply, 16),
		dials:      make(chan dialed, 1),
		ioDone:     make(chan struct{}),
		ioCtx:      ioCtx,
		ioCancel:   ioCancel,
		conns:      map[ports.ID]*cometclient.Conn{},
		aborts:     map[ports.ID]context.CancelFunc{},
		closed:     map[string]bool{},
	}
	d.tasks, d.start = taskgroup.New(nil).Limit(cfg.Worker.PoolSize)
	return d
}

// run is the loop: it feeds the core one input at a time — a frame (only
// when the core takes one: until then frames wait in EventCh, and a full
// EventCh stops the WebSocket reader), a closed connection, a GET's
// answer, an RPC answer, a dial, the timer, the stop — and carries out
// the outputs.
func (d *daemon) run(ctx context.Context) (int, string) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	stop := ctx.Done()
	d.exec(d.core.Start(time.Now()))
	for d.exit == nil {
		if at, ok := d.core.NextWake(); ok {
			timer.Reset(max(time.Until(at), 0))
		} else {
			timer.Stop()
		}
		var events <-chan ports.Frame
		if !d.closed[ports.ChanEvent] && d.core.AcceptsFrames() {
			events = d.eventCh
		}
		var errs <-chan ports.ConnClosed
		if !d.closed[ports.ChanError] {
			errs = d.errorCh
		}
		var results <-chan ports.Fetched
		if !d.closed[ports.ChanResult] {
			results = d.resultCh
		}
		var in ports.Input
		select {
		case f := <-events:
			in = f
		case c := <-errs:
			in = c
		case r := <-results:
			delete(d.aborts, r.ID)
			in = r
		case r := <-d.replies:
			in = r
		case r := <-d.dials:
			in = d.adopt(r)
		case <-timer.C:
			in = ports.Wake{}
		case <-stop:
			stop = nil
			in = ports.Stop{}
		}
		d.exec(d.core.Handle(time.Now(), in))
	}
	return d.exit.Code, d.exit.Reason
}

// adopt takes a dialled connection: the core hears of it, and a forwarder
// carries its frames to EventCh and its end to ErrorCh.
func (d *daemon) adopt(r dialed) ports.Input {
	if r.err != nil {
		return ports.Dialed{Conn: r.id, Err: r.err}
	}
	d.conns[r.id] = r.conn
	if !d.closed[ports.ChanShutdown] {
		d.watchers.Add(1)
		go d.forward(r.id, r.conn)
	}
	return ports.Dialed{Conn: r.id}
}

// forward is the EventWatcher's goroutine for one connection.
func (d *daemon) forward(id ports.ID, conn *cometclient.Conn) {
	defer d.watchers.Done()
	for {
		select {
		case ev := <-conn.Events():
			select {
			case d.eventCh <- ports.Frame{Conn: id, Query: ev.Query, Events: ev.Events, Err: ev.Err}:
			case <-d.shutdownCh:
				return
			}
		case <-conn.Done():
			select {
			case d.errorCh <- ports.ConnClosed{Conn: id, Err: conn.Err()}:
			case <-d.shutdownCh:
			}
			return
		case <-d.shutdownCh:
			return
		}
	}
}

// exec carries out the core's outputs in order.
func (d *daemon) exec(outs []ports.Output) {
	for _, o := range outs {
		if d.observe != nil {
			d.observe(o)
		}
		switch o := o.(type) {
		case ports.Dial:
			d.goIO(func() { d.dial(o) })
		case ports.CloseConn:
			d.closeConn(o.Conn)
		case ports.Subscribe:
			d.wsCall(o.ID, o.Conn, o.Timeout, cometrpc.MethodSubscribe, cometrpc.SubscribeParams{Query: o.Query})
		case ports.UnsubscribeAll:
			d.wsCall(o.ID, o.Conn, o.Timeout, cometrpc.MethodUnsubscribeAll, struct{}{})
		case ports.StatusCall:
			d.goIO(func() {
				var st cometrpc.ResultStatus
				d.answer(o.ID, d.httpCall(o.Timeout, cometrpc.MethodStatus, struct{}{}, &st), func(r *ports.Reply) { r.Status = &st })
			})
		case ports.QueryCall:
			d.goIO(func() {
				var q cometrpc.ResultABCIQuery
				params := cometrpc.ABCIQueryParams{Path: o.Path, Data: o.Data}
				d.answer(o.ID, d.httpCall(o.Timeout, cometrpc.MethodABCIQuery, params, &q), func(r *ports.Reply) { r.Query = &q })
			})
		case ports.BroadcastCall:
			d.submitSem <- struct{}{}
			d.goIO(func() {
				var b cometrpc.ResultBroadcastTx
				err := d.httpCall(o.Timeout, cometrpc.MethodBroadcastTxSync, cometrpc.BroadcastTxParams{Tx: o.Tx}, &b)
				<-d.submitSem
				d.answer(o.ID, err, func(r *ports.Reply) { r.Broadcast = &b })
			})
		case ports.Fetch:
			ctx, cancel := context.WithTimeout(d.ioCtx, o.Timeout)
			d.aborts[o.ID] = cancel
			d.start.Run(func() {
				defer cancel()
				f := d.fetch(ctx, o)
				select {
				case d.resultCh <- f:
				case <-d.ioDone:
				}
			})
		case ports.AbortFetch:
			if cancel := d.aborts[o.ID]; cancel != nil {
				cancel()
			}
		case ports.Log:
			d.log.LogAttrs(context.Background(), o.Level, o.Msg, o.Attrs...)
		case *ports.Trace:
			d.trace(o)
		case ports.Exit:
			d.exit = &o
		}
	}
}

// goIO runs an I/O goroutine counted for §3.7 step 6.
func (d *daemon) goIO(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

func (d *daemon) dial(o ports.Dial) {
	ctx, cancel := context.WithTimeout(d.ioCtx, o.Timeout)
	defer cancel()
	conn, err := d.client.Dial(ctx)
	select {
	case d.dials <- dialed{id: o.ID, conn: conn, err: err}:
	case <-d.ioDone:
		if conn != nil {
			conn.Close()
		}
	}
}

// wsCall sends a request on a connection; a connection the loop does not
// have (closed meanwhile) fails the call at once.
func (d *daemon) wsCall(id, connID ports.ID, timeout time.Duration, method string, params any) {
	conn := d.conns[connID]
	d.goIO(func() {
		if conn == nil {
			d.answer(id, fmt.Errorf("%s: connection %d is closed", method, connID), nil)
			return
		}
		ctx, cancel := context.WithTimeout(d.ioCtx, timeout)
		defer cancel()
		resp, err := conn.Call(ctx, method, params)
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		d.answer(id, err, nil)
	})
}

func (d *daemon) httpCall(timeout time.Duration, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(d.ioCtx, timeout)
	defer cancel()
	return d.client.Call(ctx, method, params, result)
}

// answer posts a Reply: a JSON-RPC error as RPCError, another error as
// Err, otherwise the result set by ok.
func (d *daemon) answer(id ports.ID, err error, ok func(*ports.Reply)) {
	r := ports.Reply{ID: id}
	var rpcErr *cometrpc.RPCError
	switch {
	case errors.As(err, &rpcErr):
		r.RPCError = rpcErr
	case err != nil:
		r.Err = err
	case ok != nil:
		ok(&r)
	}
	select {
	case d.replies <- r:
	case <-d.ioDone:
	}
}

// fetch makes one GET attempt: status and the whole body, or an error.
func (d *daemon) fetch(ctx context.Context, o ports.Fetch) ports.Fetched {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL, nil)
	if err != nil {
		return ports.Fetched{ID: o.ID, Err: err}
	}
	req.Header.Set("Accept", AcceptHeader)
	req.Header.Set("User-Agent", UserAgent)
	resp, err := d.web.Do(req)
	if err != nil {
		return ports.Fetched{ID: o.ID, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return ports.Fetched{ID: o.ID, Status: resp.StatusCode, Err: fmt.Errorf("read body: %w", err)}
	}
	if len(body) > maxBody {
		return ports.Fetched{ID: o.ID, Status: resp.StatusCode, Err: fmt.Errorf("body over %d bytes", maxBody)}
	}
	return ports.Fetched{ID: o.ID, Status: resp.StatusCode, Body: body}
}

// trace logs a trace point and performs the channel work of §3.7 it marks.
func (d *daemon) trace(t *ports.Trace) {
	switch t.Kind {
	case ports.TraceClose:
		d.closeChannel(t.Name)
	case ports.TraceDrained:
		_ = d.tasks.Wait()
	case ports.TraceStop:
		if t.Name == ports.CompRPCClient {
			d.closeClient()
		}
	case ports.TraceStep:
		if t.Name == ports.StepJoined {
			d.wg.Wait()
		}
	}
	if d.log.Enabled(context.Background(), slog.LevelDebug) {
		d.log.Debug("trace", traceAttrs(t)...)
	}
}

func (d *daemon) closeChannel(name string) {
	d.closed[name] = true
	switch name {
	case ports.ChanShutdown:
		close(d.shutdownCh)
	case ports.ChanEvent:
		d.watchers.Wait()
		close(d.eventCh)
	case ports.ChanError:
		close(d.errorCh)
	case ports.ChanResult:
		_ = d.tasks.Wait()
		close(d.resultCh)
	case ports.ChanSemaphore:
		close(d.submitSem)
	case ports.ChanFatal:
		close(d.fatalCh)
	}
}

// closeConn closes a connection with a normal closure, in the background.
func (d *daemon) closeConn(id ports.ID) {
	conn := d.conns[id]
	if conn == nil {
		return
	}
	delete(d.conns, id)
	d.closing.Add(1)
	d.goIO(func() {
		defer d.closing.Done()
		conn.Close()
	})
}

// wsCloseWait bounds how long step 5 waits for the node to answer the
// WebSocket close frames before the sockets are cut.
const wsCloseWait = time.Second

// closeClient is §3.7 step 5: every WebSocket left gets its close frame
// (the client closes first) with up to wsCloseWait for the node's answer;
// then RPC calls in flight are cancelled and every connection of the RPC
// and data-source clients is closed. The order matters: the
// unsubscribe_all of step 2 may still be writing, and coder/websocket
// closes a connection whose write is cancelled midway — the close frame
// instead waits for that write.
func (d *daemon) closeClient() {
	for _, id := range slices.Sorted(maps.Keys(d.conns)) {
		d.closeConn(id)
	}
	closed := make(chan struct{})
	d.goIO(func() {
		d.closing.Wait()
		close(closed)
	})
	wait := time.NewTimer(wsCloseWait)
	select {
	case <-closed:
	case <-wait.C:
	}
	wait.Stop()
	d.ioCancel()
	close(d.ioDone)
	d.client.Close()
	d.web.Close()
}

func traceAttrs(t *ports.Trace) []any {
	attrs := []any{"kind", t.Kind.String()}
	if t.Name != "" {
		attrs = append(attrs, "name", t.Name)
	}
	if t.RequestID != 0 {
		attrs = append(attrs, "request_id", t.RequestID)
	}
	if t.Kind == ports.TraceResult {
		attrs = append(attrs, "nonce", t.Nonce)
	}
	if len(t.Rows) > 0 {
		attrs = append(attrs, "rows", fmt.Sprint(t.Rows))
	}
	if t.Job != nil {
		attrs = append(attrs, "nonce", t.Job.Nonce, "exec", t.Job.Exec.Status.String(), "next_run", t.Job.NextRunTime)
	}
	if t.Health != "" {
		attrs = append(attrs, "health", string(t.Health))
	}
	return attrs
}
