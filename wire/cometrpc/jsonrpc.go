package cometrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Version is the JSON-RPC version every message carries.
const Version = "2.0"

// ID is a JSON-RPC id kept as its raw JSON text, so that a response echoes
// the request's id with its type and value exactly. The zero ID is an absent
// id (a notification); it is written as null, never omitted.
type ID struct{ raw []byte }

// IntID is an integer id, as CometBFT's Go clients send (0, 1, 2, …).
func IntID(n int64) ID { return ID{raw: []byte(strconv.FormatInt(n, 10))} }

// StringID is a string id.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a Go string always marshals
	return ID{raw: b}
}

// Present reports whether the message carried an id (null counts as
// present).
func (id ID) Present() bool { return id.raw != nil }

// Int is the id as an integer, if it is a JSON integer; CometBFT clients
// discard responses and frames whose id is not one.
func (id ID) Int() (int64, bool) {
	n, err := strconv.ParseInt(string(id.raw), 10, 64)
	return n, err == nil
}

// Equal reports whether two ids are the same JSON text.
func (id ID) Equal(o ID) bool { return bytes.Equal(id.raw, o.raw) }

func (id ID) String() string {
	if id.raw == nil {
		return "<none>"
	}
	return string(id.raw)
}

func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == nil {
		return []byte("null"), nil
	}
	return id.raw, nil
}

func (id *ID) UnmarshalJSON(b []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	id.raw = buf.Bytes()
	return nil
}

// Request is a JSON-RPC request.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// NewRequest is a request with params marshalled from p (nil for none).
func NewRequest(id ID, method string, p any) (Request, error) {
	r := Request{JSONRPC: Version, ID: id, Method: method}
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return Request{}, fmt.Errorf("%s params: %w", method, err)
		}
		r.Params = b
	}
	return r, nil
}

// DecodeParams reads the request's params into p; a missing params is an
// empty object. It returns an Invalid params error on failure.
func (r Request) DecodeParams(p any) *RPCError {
	b := r.Params
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		b = []byte("{}")
	}
	if err := json.Unmarshal(b, p); err != nil {
		return ErrInvalidParams(fmt.Sprintf("error converting json params to arguments: %v", err))
	}
	return nil
}

// ParseRequests reads a POST body: one request, or a batch (a JSON array).
// A body that is not JSON is a Parse error; a request without a method, or
// with another jsonrpc version, is an Invalid request.
func ParseRequests(body []byte) (reqs []Request, batch bool, rpcErr *RPCError) {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return nil, false, ErrParse("error unmarshaling request: invalid JSON")
	}
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &reqs); err != nil {
			return nil, true, ErrInvalidRequest(fmt.Sprintf("error unmarshaling request: %v", err))
		}
		if len(reqs) == 0 {
			return nil, true, ErrInvalidRequest("empty batch")
		}
		batch = true
	} else {
		var r Request
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, false, ErrInvalidRequest(fmt.Sprintf("error unmarshaling request: %v", err))
		}
		reqs = []Request{r}
	}
	for _, r := range reqs {
		if r.JSONRPC != Version {
			return nil, batch, ErrInvalidRequest(fmt.Sprintf("jsonrpc must be %q, got %q", Version, r.JSONRPC))
		}
		if r.Method == "" {
			return nil, batch, ErrInvalidRequest("missing method")
		}
	}
	return reqs, batch, nil
}

// Response is a JSON-RPC response: a result or an error. Event frames are
// responses too, reusing the id of their subscribe request.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// NewResult is a response carrying result, marshalled.
func NewResult(id ID, result any) (Response, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return Response{}, fmt.Errorf("result: %w", err)
	}
	return Response{JSONRPC: Version, ID: id, Result: b}, nil
}

// NewErrorResponse is a response carrying err.
func NewErrorResponse(id ID, err *RPCError) Response {
	return Response{JSONRPC: Version, ID: id, Error: err}
}

// DecodeResponse reads one response (or event frame).
func DecodeResponse(b []byte) (Response, error) {
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		return Response{}, fmt.Errorf("response: %w", err)
	}
	if r.JSONRPC != Version {
		return Response{}, fmt.Errorf("response: jsonrpc %q, want %q", r.JSONRPC, Version)
	}
	if r.Error == nil && len(r.Result) == 0 {
		return Response{}, fmt.Errorf("response: neither result nor error")
	}
	return r, nil
}

// DecodeResult reads the result into v, or returns the response's error
// (an *RPCError).
func (r Response) DecodeResult(v any) error {
	if r.Error != nil {
		return r.Error
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// The JSON-RPC error codes CometBFT uses.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ErrParse is -32700 Parse error.
func ErrParse(data string) *RPCError {
	return &RPCError{Code: CodeParseError, Message: "Parse error", Data: data}
}

// ErrInvalidRequest is -32600 Invalid Request.
func ErrInvalidRequest(data string) *RPCError {
	return &RPCError{Code: CodeInvalidRequest, Message: "Invalid Request", Data: data}
}

// ErrMethodNotFound is -32601 Method not found.
func ErrMethodNotFound() *RPCError {
	return &RPCError{Code: CodeMethodNotFound, Message: "Method not found"}
}

// ErrInvalidParams is -32602 Invalid params.
func ErrInvalidParams(data string) *RPCError {
	return &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: data}
}

// ErrInternal is -32603 Internal error, with the reason in data (mempool
// full, tx in cache, already subscribed, …).
func ErrInternal(data string) *RPCError {
	return &RPCError{Code: CodeInternalError, Message: "Internal error", Data: data}
}
