package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wsconverge/converge/contracts"
)

// Error is an error on the wire: a stable name that says what kind of
// error it is, the error's exact text, and the details of its kind.
//
//	{"name": "fenced", "text": "fenced: leader epoch is stale"}
//	{"name": "provider", "text": "DOCKER_UNREACHABLE: outage", "code": "DOCKER_UNREACHABLE", "message": "outage"}
//	{"name": "api", "text": "INVALID_STATE: operation STARTING is in progress", "status": 409, "code": "INVALID_STATE", "message": "operation STARTING is in progress"}
type Error struct {
	// Name is one of the Err* names.
	Name string `json:"name"`
	// Text is the whole error message (Go's err.Error()).
	Text string `json:"text"`
	// Code, for "provider": a SPEC 1.5 error code; for "api": the API
	// error code.
	Code string `json:"code,omitempty"`
	// Message is the provider's or the API's own message.
	Message string `json:"message,omitempty"`
	// Context, for "provider": the provider's details.
	Context map[string]any `json:"context,omitempty"`
	// Status, for "api": the HTTP status.
	Status int `json:"status,omitempty"`
	// Limit, for an API 429: the limit that was reached.
	Limit *contracts.LimitExceeded `json:"limit,omitempty"`
}

// The stable error names.
const (
	ErrNotFound    = "not_found"
	ErrFenced      = "fenced"
	ErrNotLeader   = "not_leader"
	ErrCrashed     = "crashed"
	ErrUnavailable = "unavailable"
	// ErrProvider is a *contracts.ProviderError.
	ErrProvider = "provider"
	// ErrAPI is a *contracts.APIError (an API call's rejection).
	ErrAPI = "api"
	// ErrLimitExceeded is a *contracts.LimitExceeded: a guarded store
	// write the running limits refused (Limit holds the details).
	ErrLimitExceeded = "limit_exceeded"
	// ErrInvalidInput wraps contracts.ErrInvalidInput: a value the store
	// cannot hold.
	ErrInvalidInput = "invalid_input"
	// ErrOther is any other error: only its text crosses.
	ErrOther = "error"
)

// sentinels maps each sentinel error of the ports to its name; add a new
// sentinel here and it crosses the protocol both ways.
var sentinels = []struct {
	name string
	err  error
}{
	{ErrNotFound, contracts.ErrNotFound},
	{ErrFenced, contracts.ErrFenced},
	{ErrNotLeader, contracts.ErrNotLeader},
	{ErrCrashed, contracts.ErrCrashed},
	{ErrUnavailable, contracts.ErrUnavailable},
	{ErrInvalidInput, contracts.ErrInvalidInput},
}

// ErrorNames lists every name an Error may carry.
func ErrorNames() []string {
	out := make([]string, 0, len(sentinels)+3)
	for _, s := range sentinels {
		out = append(out, s.name)
	}
	return append(out, ErrProvider, ErrAPI, ErrLimitExceeded, ErrOther)
}

// FromError is err's wire form (nil for nil). An API rejection is
// recognised before a provider error, a provider error before a sentinel.
func FromError(err error) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Name: ErrOther, Text: err.Error()}
	var ae *contracts.APIError
	var pe *contracts.ProviderError
	var le *contracts.LimitExceeded
	switch {
	case errors.As(err, &ae):
		e.Name, e.Status, e.Code, e.Message, e.Limit = ErrAPI, ae.Status, ae.Code, ae.Message, ae.Limit
	case errors.As(err, &le):
		e.Name, e.Limit = ErrLimitExceeded, le
	case errors.As(err, &pe):
		e.Name, e.Code, e.Message, e.Context = ErrProvider, string(pe.Code), pe.Message, pe.Context
	default:
		for _, s := range sentinels {
			if errors.Is(err, s.err) {
				e.Name = s.name
				break
			}
		}
	}
	return e
}

// Remote is an error that crossed the protocol: its text is the original
// error's text exactly, and it unwraps to the sentinel, the
// *contracts.ProviderError or the *contracts.APIError its name stands
// for, so errors.Is and errors.As see what the sender's side saw.
type Remote struct {
	Text  string
	cause error
}

func (r *Remote) Error() string { return r.Text }

// Unwrap is the error the name stands for (nil for ErrOther).
func (r *Remote) Unwrap() error { return r.cause }

// Err is e as a Go error; invalid reports an Error that is malformed (an
// unknown name, an API error without a status).
func (e *Error) Err() (err, invalid error) {
	if e == nil {
		return nil, fmt.Errorf("error: missing")
	}
	r := &Remote{Text: e.Text}
	switch e.Name {
	case ErrAPI:
		if e.Status < 400 || e.Status > 599 || e.Code == "" {
			return nil, fmt.Errorf("api error %q: want a 4xx or 5xx status and a code", e.Text)
		}
		// The API's rejection is the *contracts.APIError itself, as the
		// in-process service returns it.
		return &contracts.APIError{Status: e.Status, Code: e.Code, Message: e.Message, Limit: e.Limit}, nil
	case ErrLimitExceeded:
		if e.Limit == nil {
			return nil, fmt.Errorf("limit error %q: want the limit's details", e.Text)
		}
		l := *e.Limit
		// The store's refusal is the *contracts.LimitExceeded itself.
		return &l, nil
	case ErrProvider:
		if e.Code == "" {
			return nil, fmt.Errorf("provider error %q: want a code", e.Text)
		}
		r.cause = &contracts.ProviderError{Code: contracts.ErrorCode(e.Code), Message: e.Message, Context: e.Context}
	case ErrOther:
	default:
		for _, s := range sentinels {
			if s.name == e.Name {
				r.cause = s.err
				return r, nil
			}
		}
		return nil, fmt.Errorf("error name %q: want one of %s", e.Name, strings.Join(ErrorNames(), ", "))
	}
	return r, nil
}
