package ports

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
)

// ID names one request the daemon made (a dial, an RPC call, an HTTP GET), so
// that its answer can come back as an input. IDs start at 1 and increase by
// one per request; a connection is named by the ID of its Dial.
type ID uint64

// ---------------------------------------------------------------------------
// Outputs: what the driver must do.

// Output is one thing the daemon asks its driver to do: a request to carry
// out (answered later by an input with the same ID), a connection to
// close, a trace point, a log line, or the exit. Outputs are returned in
// the order the driver must act on them.
type Output interface{ isOutput() }

// Dial asks for a WebSocket connection to the chain's /websocket endpoint.
// Answer: Dialed{Conn: ID}. Once dialed, the connection's frames come as
// Frame inputs and its end (closed by the server or a failed read) as
// ConnClosed.
type Dial struct {
	ID      ID
	Timeout time.Duration
}

// CloseConn asks the driver to close a connection the daemon no longer uses.
// No answer: the daemon ignores everything that connection still delivers.
type CloseConn struct{ Conn ID }

// Subscribe sends `subscribe` with Query on connection Conn. Answer: Reply
// with no result (Err or RPCError on failure).
type Subscribe struct {
	ID      ID
	Conn    ID
	Query   string
	Timeout time.Duration
}

// UnsubscribeAll sends `unsubscribe_all` on connection Conn (graceful
// shutdown). Answer: Reply, which the daemon need not wait for.
type UnsubscribeAll struct {
	ID      ID
	Conn    ID
	Timeout time.Duration
}

// StatusCall is a `status` call over HTTP. Answer: Reply with Status.
type StatusCall struct {
	ID      ID
	Timeout time.Duration
}

// QueryCall is an `abci_query` call on Path with the protobuf request Data
// (height 0, no proof). Answer: Reply with Query.
type QueryCall struct {
	ID      ID
	Path    string
	Data    []byte
	Timeout time.Duration
}

// BroadcastCall is a `broadcast_tx_sync` of the TxRaw bytes Tx (Hash is
// their upper-case hex SHA-256). Answer: Reply with Broadcast, or an
// RPCError (mempool full, tx already in cache), or Err when no answer came.
type BroadcastCall struct {
	ID      ID
	Tx      []byte
	Hash    string
	Timeout time.Duration
}

// Fetch is one HTTP GET attempt of an execution: URL with `Accept:
// application/json` and `User-Agent: Oracle-Daemon/1.0`, the whole body
// read, abandoned after Timeout. RequestID is the oracle request the
// execution is for, Attempt its 1-based number within the execution.
// Answer: Fetched.
type Fetch struct {
	ID        ID
	RequestID uint64
	Attempt   int
	URL       string
	Timeout   time.Duration
}

// AbortFetch asks the driver to abort an in-flight Fetch at once (its job
// was removed). The Fetch is still answered, by a Fetched with an error;
// its slot is free only then.
type AbortFetch struct{ ID ID }

// Exit: the daemon has finished (§3.7 done, or a fatal condition). Code is
// the process's exit status: 0 after a requested stop, 1 after a fatal
// condition or a failed start. The daemon handles no input after it.
type Exit struct {
	Code   int
	Reason string
}

// Log is a log line for the daemon's log.
type Log struct {
	Level slog.Level
	Msg   string
	Attrs []slog.Attr
}

// TraceKind says what a Trace records.
type TraceKind int

const (
	// TraceJob: a job transition (RequestID, Rows, Job after it, nil when
	// removed).
	TraceJob TraceKind = iota
	// TraceClose: a channel of §3.7 closed (Name).
	TraceClose
	// TraceStop: a component stopped (Name).
	TraceStop
	// TraceDrained: the executor's task group has drained.
	TraceDrained
	// TraceHealth: HealthStatus changed (Health).
	TraceHealth
	// TraceStep: a lifecycle step of §3.1 was reached (Name).
	TraceStep
	// TraceResult: a result changed hands in the Submitter (Name: queued,
	// abandoned, submitted, on-chain, gave-up; RequestID, Nonce).
	TraceResult
)

func (k TraceKind) String() string {
	switch k {
	case TraceJob:
		return "job"
	case TraceClose:
		return "close"
	case TraceStop:
		return "stop"
	case TraceDrained:
		return "drained"
	case TraceHealth:
		return "health"
	case TraceStep:
		return "step"
	case TraceResult:
		return "result"
	}
	return fmt.Sprintf("TraceKind(%d)", int(k))
}

// The channels of §3.7, in the order a shutdown closes them.
const (
	ChanShutdown  = "shutdownCh"
	ChanEvent     = "EventCh"
	ChanError     = "ErrorCh"
	ChanResult    = "ResultCh"
	ChanSemaphore = "submitSemaphore"
	ChanFatal     = "fatalCh"
)

// The components of §3.7, in the order a shutdown stops them.
const (
	CompWatcher   = "watcher"
	CompScheduler = "scheduler"
	CompSubmitter = "submitter"
	CompRPCClient = "rpc-client"
)

// The lifecycle steps a TraceStep names (§3.1), and the shutdown steps
// that are not a channel or a component.
const (
	StepConnected  = "connected"  // step 2: dialed and the status probe answered
	StepSubscribed = "subscribed" // step 4: the three subscriptions are active
	StepLoaded     = "loaded"     // step 5: the initial reconciliation finished
	StepRunning    = "running"    // step 6: the loops run
	StepStopping   = "stopping"   // shutdown step 1 begins (isRunning = false)
	StepJoined     = "joined"     // shutdown step 6: every goroutine has ended
)

// The names a TraceResult carries.
const (
	ResultQueued    = "queued"    // put on the result queue
	ResultAbandoned = "abandoned" // stale, dropped without (another) broadcast
	ResultSubmitted = "submitted" // code 0, or code 19 / already in cache
	ResultOnChain   = "on-chain"  // the on-chain check found self's submission
	ResultGaveUp    = "gave-up"   // a terminal code or attempts exhausted
	ResultDropped   = "dropped"   // left unsent by a shutdown (D22)
)

// Trace is a white-box trace point of the reference (ORACLE-SPEC 4.10
// "white"): what the checkers of O15 and the timeline read. A TraceJob's
// Job is the daemon's memory, as it was after the transition until the call
// that returned the trace ends (a later transition may write there);
// Rows stay as they are.
type Trace struct {
	Kind      TraceKind
	Name      string
	RequestID uint64
	Nonce     uint64
	Rows      []oracle.Row
	Job       *oracle.Job
	Health    oracle.HealthStatus
}

func (Dial) isOutput()           {}
func (CloseConn) isOutput()      {}
func (Subscribe) isOutput()      {}
func (UnsubscribeAll) isOutput() {}
func (StatusCall) isOutput()     {}
func (QueryCall) isOutput()      {}
func (BroadcastCall) isOutput()  {}
func (Fetch) isOutput()          {}
func (AbortFetch) isOutput()     {}
func (Exit) isOutput()           {}
func (Log) isOutput()            {}
func (*Trace) isOutput()         {} // a trace is emitted by address

// ---------------------------------------------------------------------------
// Inputs: what happened.

// Input is one thing that happened to the daemon, handed to Daemon.Handle.
// A Reply or a Fetched may also be handed over by address (*Reply,
// *Fetched: a driver that keeps them in memory of its own then saves a
// copy into the interface for each one); the daemon reads it during the
// call only.
type Input interface{ isInput() }

// ByValue is in with a *Reply or a *Fetched replaced by the value it
// points to, for code that inspects inputs by their value types.
func ByValue(in Input) Input {
	switch p := in.(type) {
	case *Reply:
		return *p
	case *Fetched:
		return *p
	}
	return in
}

// Dialed answers Dial: Err is nil when the connection is open.
type Dialed struct {
	Conn ID
	Err  error
}

// Reply answers a Subscribe, UnsubscribeAll, StatusCall, QueryCall or
// BroadcastCall. Exactly one of Err (no usable answer: connection error,
// timeout, undecodable response), RPCError (a JSON-RPC error) or the result
// field of the call's kind is set.
type Reply struct {
	ID        ID
	Err       error
	RPCError  *RPCError
	Status    *ResultStatus
	Query     *ResultABCIQuery
	Broadcast *ResultBroadcastTx
}

// Frame is an event frame delivered on connection Conn: the result's query
// and events map. Err is set when the frame's data did not decode (it is
// then dropped and counted, like a frame for an unknown query).
type Frame struct {
	Conn   ID
	Query  string
	Events map[string][]string
	Err    error
}

// ConnClosed: connection Conn ended without the daemon asking (the server
// closed it, or a read failed).
type ConnClosed struct {
	Conn ID
	Err  error
}

// Fetched answers Fetch: the HTTP status and the whole body, or Err when
// the attempt failed before a complete response (connection error,
// timeout, abort, a body that could not be read).
type Fetched struct {
	ID     ID
	Status int
	Body   []byte
	Err    error
}

// Wake does nothing by itself: every Handle first fires the timers that are
// due, and Wake is what a driver passes when only time has passed (at
// NextWake).
type Wake struct{}

// Stop asks for a graceful shutdown (SIGINT, SIGTERM, context cancel).
type Stop struct{}

func (Dialed) isInput()     {}
func (Reply) isInput()      {}
func (Frame) isInput()      {}
func (ConnClosed) isInput() {}
func (Fetched) isInput()    {}
func (Wake) isInput()       {}
func (Stop) isInput()       {}
