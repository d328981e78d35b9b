package wire

import (
	"encoding/json"
	"fmt"

	"github.com/wsconverge/converge/contracts"
)

// Version is the highest protocol version this package speaks, and
// MinVersion the lowest. A session speaks the lower of the harness's
// version (hello) and the child's (ready): a child answers a hello with
// the highest version it speaks that is not above the hello's. Version 2
// adds batches, pipelining and wake-ups; version 3 sends a row the child
// was sent before as its changes (RowWriter, RowReader).
const (
	Version    = 3
	MinVersion = 1
)

// Negotiate is the version a child that speaks up to mine answers a
// hello of version offered with (0 when offered is below MinVersion: it
// cannot speak to that harness).
func Negotiate(offered, mine int) int {
	switch {
	case offered < MinVersion:
		return 0
	case offered < mine:
		return offered
	}
	return mine
}

// Roles a child process plays.
const (
	RoleCoordinator = "coordinator"
	RoleAPI         = "api"
)

// Message types from the harness to the child.
const (
	// THello opens a session (Protocol, Role, Instance, Limits).
	THello = "hello"
	// TStep asks a coordinator to do everything due at Now.
	TStep = "step"
	// TAPI asks an API process to serve one call (Method, Now, Args).
	TAPI = "api"
	// TClose asks a coordinator to shut down cleanly at Now.
	TClose = "close"
	// TOK answers a port call with its Value.
	TOK = "ok"
	// TError answers a port call with its Error.
	TError = "error"
	// TAnswers answers a batch (version 2): Answers, one ok or error per
	// call, in order.
	TAnswers = "answers"
)

// Version 2's messages and fields. A step may carry Answers: the answers
// of the first calls of the child's wake-up (Wake), which the harness
// made for it at this step's now. A done of a step may carry Wake. A
// child may send a Batch of calls (answered by one ok or error line per
// call, in order) and may pipeline calls: send more before it has read
// the answers to the first (the harness answers in order).
const (
	// TBatch is several port calls in one message (Calls, optionally
	// Leader).
	TBatch = "batch"
)

// Message types from the child to the harness.
const (
	// TReady ends the hello exchange (Protocol, Name, StderrSync).
	TReady = "ready"
	// TCall is a port call (Method, Args, and for a coordinator
	// optionally Leader).
	TCall = "call"
	// TNote leaves a note in the run's history (Text); no answer.
	TNote = "note"
	// TDone ends a step (Next, Leader, or Error), an API call (Value or
	// Error) or a close.
	TDone = "done"
)

// StderrMarker is what a child that declared stderr_sync writes to its
// standard error just before each message that ends an exchange (ready
// and done): everything it wrote to standard error before the marker
// belongs to that exchange.
const StderrMarker = "\x1e\n"

// Limits are the running-workspace limits (SPEC 4.3).
type Limits struct {
	MaxRunningPerUser int `json:"max_running_per_user"`
	MaxRunningGlobal  int `json:"max_running_global"`
}

// FromLimits is l's wire form.
func FromLimits(l contracts.Limits) Limits {
	return Limits{MaxRunningPerUser: l.MaxRunningPerUser, MaxRunningGlobal: l.MaxRunningGlobal}
}

// Contracts is l as the contracts type.
func (l Limits) Contracts() contracts.Limits {
	return contracts.Limits{MaxRunningPerUser: l.MaxRunningPerUser, MaxRunningGlobal: l.MaxRunningGlobal}
}

// FromHarness is every message the harness sends; Type says which fields
// are set.
type FromHarness struct {
	Type string `json:"type"`
	// hello
	Protocol int     `json:"protocol,omitempty"`
	Role     string  `json:"role,omitempty"`
	Instance string  `json:"instance,omitempty"`
	Limits   *Limits `json:"limits,omitempty"`
	// step, api, close
	Now *Time `json:"now,omitempty"`
	// api
	Method string          `json:"method,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// step (version 2): the answers (ok or error) of the first calls of
	// the child's wake-up, made at now, in order; answers: a batch's.
	Answers []FromHarness `json:"answers,omitempty"`
	// ok
	Value json.RawMessage `json:"value,omitempty"`
	// error
	Error *Error `json:"error,omitempty"`
}

// FromChild is every message a child sends; Type says which fields are
// set.
type FromChild struct {
	Type string `json:"type"`
	// ready
	Protocol   int    `json:"protocol,omitempty"`
	Name       string `json:"name,omitempty"`
	StderrSync bool   `json:"stderr_sync,omitempty"`
	// call
	Method string          `json:"method,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// call, batch and done (coordinator): whether it believes it
	// leads.
	Leader *bool `json:"leader,omitempty"`
	// batch (version 2)
	Calls []Call `json:"calls,omitempty"`
	// note
	Text string `json:"text,omitempty"`
	// done
	Next  *Time           `json:"next,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Error *Error          `json:"error,omitempty"`
	// done of a step (version 2): what wakes the instance before Next's
	// successors.
	Wake *Wake `json:"wake,omitempty"`
}

// Call is one port call of a batch or of a wake-up.
type Call struct {
	Method string          `json:"method"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// Wake is what a coordinator declares, in the done of a step, about the
// steps it takes while nothing happens (version 2): until Until
// (exclusive; null: no limit), a step at time t makes Calls in order and,
// when each gets its quiet answer, changes nothing and asks to run again
// at t + EveryNs (or at Until, if sooner). The harness then takes those
// steps itself — it makes the calls through the instance's ports — and
// steps the child only when a call answers otherwise (a change, a
// message, the lock acquired or lost, an error), with the answers it got,
// or when Until comes.
type Wake struct {
	Calls   []Call `json:"calls"`
	EveryNs int64  `json:"every_ns"`
	Until   *Time  `json:"until,omitempty"`
}

// WakeMethods are the methods a wake-up may call, each with its quiet
// answer: a lease that still holds, a listener with no change, a
// subscription with no message, a lock that another holds.
var WakeMethods = []string{MLeaseCheck, MListenerPoll, MSubscriptionPoll, MLeadershipTryAcquire}

// DecodeFromChild reads one line of a child: a JSON object with a known
// type and no unknown fields.
func DecodeFromChild(line []byte) (FromChild, error) {
	if m, ok := fastFromChild(line); ok {
		return m, nil
	}
	var m FromChild
	if err := strictUnmarshal(line, &m); err != nil {
		return m, fmt.Errorf("not a protocol message: %w", err)
	}
	switch m.Type {
	case TReady, TCall, TNote, TDone, TBatch:
		return m, nil
	case "":
		return m, fmt.Errorf("message without a type")
	}
	return m, fmt.Errorf("unknown message type %q (a child sends ready, call, batch, note or done)", m.Type)
}

// DecodeFromHarness reads one line of the harness: a JSON object with a
// known type and no unknown fields.
func DecodeFromHarness(line []byte) (FromHarness, error) {
	if m, ok := fastFromHarness(line); ok {
		return m, nil
	}
	var m FromHarness
	if err := strictUnmarshal(line, &m); err != nil {
		return m, fmt.Errorf("not a protocol message: %w", err)
	}
	switch m.Type {
	case THello, TStep, TAPI, TClose, TOK, TError, TAnswers:
		return m, nil
	}
	return m, fmt.Errorf("unknown message type %q", m.Type)
}

// AppendOK appends the line answering a port call with value. No value
// (nil) and a json.RawMessage, which the caller vouches for, are written
// as they are: most calls answer with nothing or with an empty list.
func AppendOK(b []byte, value any) ([]byte, error) {
	b = append(b, okPrefix...)
	switch v := value.(type) {
	case nil:
		b = append(b, null...)
	case json.RawMessage:
		b = append(b, v...)
	case ValueAppender:
		b = v.AppendValue(b)
	default:
		raw, err := json.Marshal(value)
		if err != nil {
			return b, fmt.Errorf("encode result: %w", err)
		}
		b = append(b, raw...)
	}
	return append(b, '}', '\n'), nil
}

// ValueAppender is a value that writes its own JSON (AppendOK): rows
// are written straight into the answer, not into a buffer of their own
// first.
type ValueAppender interface {
	AppendValue(b []byte) []byte
}

// EmptyList is the wire form of an empty list, for AppendOK.
var EmptyList = json.RawMessage("[]")

// AppendLine appends m as one line.
func AppendLine(b []byte, m any) ([]byte, error) {
	v, err := json.Marshal(m)
	if err != nil {
		return b, fmt.Errorf("encode message: %w", err)
	}
	b = append(b, v...)
	return append(b, '\n'), nil
}
