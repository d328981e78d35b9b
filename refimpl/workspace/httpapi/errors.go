package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/wsconverge/converge/contracts"
)

// Error codes of the transport's own rejections (the service layer's are
// in contracts).
const (
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	CodeUnavailable          = "UNAVAILABLE"
	CodeTooManyStreams       = "TOO_MANY_STREAMS"

	// The answers net/http gives before any handler runs, in JSON
	// through JSONErrors (400 is BAD_REQUEST).
	CodeHeadersTooLarge         = "HEADERS_TOO_LARGE"
	CodeNotImplemented          = "NOT_IMPLEMENTED"
	CodeHTTPVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED"
)

// errorBody is {"error":{…}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

// errorDetail carries the code and message, plus the limit details of a
// 429 and the offending field of a 400 when there is one.
type errorDetail struct {
	Code              string    `json:"code"`
	Message           string    `json:"message"`
	Field             string    `json:"field,omitempty"`
	LimitType         string    `json:"limit_type,omitempty"`
	Current           *int      `json:"current,omitempty"`
	Max               *int      `json:"max,omitempty"`
	RunningWorkspaces *[]string `json:"running_workspaces,omitempty"`
}

// detailOf renders an APIError, with the limit details at the top level of
// "error" (running_workspaces for per_user only, always an array there).
func detailOf(e *contracts.APIError) errorDetail {
	d := errorDetail{Code: e.Code, Message: e.Message}
	if l := e.Limit; l != nil {
		cur, maxN := l.Current, l.Max
		d.LimitType, d.Current, d.Max = l.LimitType, &cur, &maxN
		if l.LimitType == "per_user" {
			ids := append([]string{}, l.RunningWorkspaces...)
			d.RunningWorkspaces = &ids
		}
	}
	return d
}

func apiError(status int, code, msg string) *contracts.APIError {
	return &contracts.APIError{Status: status, Code: code, Message: msg}
}

// fieldError is a 400 about one field of the body.
type fieldError struct {
	*contracts.APIError
	field string
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Our own views always encode; this is a bug, not a client mistake.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"INTERNAL","message":"response encoding failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *contracts.APIError) {
	writeJSON(w, e.Status, errorBody{Error: detailOf(e)})
}

func writeFieldError(w http.ResponseWriter, e *fieldError) {
	d := detailOf(e.APIError)
	d.Field = e.field
	writeJSON(w, e.Status, errorBody{Error: d})
}

// fail answers a failed service call: an APIError as it is; an unavailable
// dependency or a timeout as 503; anything else as 500 (logged, with no
// detail for the client).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *contracts.APIError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae)
	case r.Context().Err() != nil:
		// The client went away; nobody reads this answer.
		h.log.Debug("request abandoned", "path", r.URL.Path, "err", err)
		writeError(w, apiError(http.StatusServiceUnavailable, CodeUnavailable, "request cancelled"))
	case errors.Is(err, contracts.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		h.log.Warn("dependency unavailable", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, apiError(http.StatusServiceUnavailable, CodeUnavailable, "a dependency is unavailable: retry shortly"))
	default:
		h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, apiError(http.StatusInternalServerError, contracts.APIInternal, "internal error"))
	}
}
