package wire

import (
	"encoding/json"
	"fmt"

	"github.com/wsconverge/converge/contracts"
)

// Version is the protocol version this package speaks.
const Version = 1

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
	// call and done (coordinator): whether it believes it leads.
	Leader *bool `json:"leader,omitempty"`
	// note
	Text string `json:"text,omitempty"`
	// done
	Next  *Time           `json:"next,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Error *Error          `json:"error,omitempty"`
}

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
	case TReady, TCall, TNote, TDone:
		return m, nil
	case "":
		return m, fmt.Errorf("message without a type")
	}
	return m, fmt.Errorf("unknown message type %q (a child sends ready, call, note or done)", m.Type)
}

// DecodeFromHarness reads one line of the harness.
func DecodeFromHarness(line []byte) (FromHarness, error) {
	if m, ok := fastFromHarness(line); ok {
		return m, nil
	}
	var m FromHarness
	if err := strictUnmarshal(line, &m); err != nil {
		return m, fmt.Errorf("not a protocol message: %w", err)
	}
	switch m.Type {
	case THello, TStep, TAPI, TClose, TOK, TError:
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
	default:
		raw, err := json.Marshal(value)
		if err != nil {
			return b, fmt.Errorf("encode result: %w", err)
		}
		b = append(b, raw...)
	}
	return append(b, '}', '\n'), nil
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
