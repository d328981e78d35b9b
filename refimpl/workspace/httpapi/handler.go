package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Config is everything the HTTP API needs. API, Bus and Clock are required.
type Config struct {
	// API is the service layer every workspace route calls.
	API ports.API
	// Tokens maps each bearer token to the user it authenticates.
	Tokens map[string]string
	// Admins holds the users with the admin role (recovery).
	Admins map[string]bool
	// Bus carries the workspace:{id} channels the event streams follow.
	Bus ports.Bus
	// Clock stamps heartbeats and the state an event stream starts from.
	Clock ports.Clock
	// Logger receives request logs (default: discarded).
	Logger *slog.Logger
	// Metrics is the registry /metrics serves (default: a new one).
	Metrics *Metrics
	// Health reports whether the process can serve (nil: always healthy).
	Health func(ctx context.Context) error
	// Heartbeat is the period of an event stream's heartbeat (default 30 s).
	Heartbeat time.Duration
	// StreamsDone, when closed, ends every open event stream: a graceful
	// shutdown closes it, since http.Server.Shutdown waits for streaming
	// responses that would otherwise never end. Optional.
	StreamsDone <-chan struct{}
	// MaxStreamsPerUser and MaxStreams bound the event streams open at
	// once, per user and in all: each holds a connection (a file
	// descriptor) and a bus subscription for as long as the client
	// likes. Beyond either, 429 TOO_MANY_STREAMS. Defaults:
	// DefaultMaxStreamsPerUser, DefaultMaxStreams.
	MaxStreamsPerUser int
	MaxStreams        int
}

// DefaultHeartbeat is the event streams' heartbeat period (SPEC 4.6).
const DefaultHeartbeat = 30 * time.Second

// Default bounds of the event streams open at once.
const (
	DefaultMaxStreamsPerUser = 8
	DefaultMaxStreams        = 1000
)

// ResponseWriteTimeout bounds the writing of one response other than an
// event stream (whose every event has its own deadline): a client that
// stops reading cannot hold a connection and its handler for ever. The
// server cannot have a WriteTimeout of its own, which would cut every
// stream.
const ResponseWriteTimeout = 30 * time.Second

// healthTimeout bounds one /healthz check.
const healthTimeout = 2 * time.Second

// handler is the http.Handler New returns.
type handler struct {
	cfg     Config
	log     *slog.Logger
	tokens  tokenTable
	metrics *Metrics
	streams *streamLimiter
}

// New returns the HTTP API. It panics when cfg lacks API, Bus or Clock.
func New(cfg Config) http.Handler {
	switch {
	case cfg.API == nil:
		panic("httpapi: Config.API is required")
	case cfg.Bus == nil:
		panic("httpapi: Config.Bus is required")
	case cfg.Clock == nil:
		panic("httpapi: Config.Clock is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.MaxStreamsPerUser <= 0 {
		cfg.MaxStreamsPerUser = DefaultMaxStreamsPerUser
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	return &handler{cfg: cfg, log: cfg.Logger, tokens: newTokenTable(cfg.Tokens, cfg.Admins), metrics: cfg.Metrics,
		streams: newStreamLimiter(cfg.MaxStreamsPerUser, cfg.MaxStreams)}
}

// route identifies what a path addresses.
type route int

const (
	routeUnknown route = iota
	routeAPIUnknown
	routeHealthz
	routeMetrics
	routeWorkspaces
	routeWorkspace
	routeRecover
	routeEvents
	routeAdminWorkspaces
)

// routeInfo is each route's metrics label and allowed methods.
var routeInfo = [...]struct {
	label   string
	methods []string
}{
	routeUnknown:         {"unmatched", nil},
	routeAPIUnknown:      {"unmatched", nil},
	routeHealthz:         {"/healthz", []string{http.MethodGet, http.MethodHead}},
	routeMetrics:         {"/metrics", []string{http.MethodGet}},
	routeWorkspaces:      {"/api/v1/workspaces", []string{http.MethodGet, http.MethodPost}},
	routeWorkspace:       {"/api/v1/workspaces/{id}", []string{http.MethodGet, http.MethodPatch, http.MethodDelete}},
	routeRecover:         {"/api/v1/workspaces/{id}:recover", []string{http.MethodPost}},
	routeEvents:          {"/api/v1/workspaces/{id}/events", []string{http.MethodGet}},
	routeAdminWorkspaces: {"/api/v1/admin/workspaces", []string{http.MethodGet}},
}

const apiPrefix = "/api/v1"

// match maps a path to its route and workspace id (as given).
func match(path string) (route, string) {
	switch path {
	case "/healthz":
		return routeHealthz, ""
	case "/metrics":
		return routeMetrics, ""
	}
	rest, ok := strings.CutPrefix(path, apiPrefix+"/")
	if !ok {
		if path == apiPrefix {
			return routeAPIUnknown, ""
		}
		return routeUnknown, ""
	}
	switch rest {
	case "workspaces":
		return routeWorkspaces, ""
	case "admin/workspaces":
		return routeAdminWorkspaces, ""
	}
	rest, ok = strings.CutPrefix(rest, "workspaces/")
	if !ok {
		return routeAPIUnknown, ""
	}
	id, sub, nested := strings.Cut(rest, "/")
	switch {
	case nested && sub == "events" && id != "":
		return routeEvents, id
	case nested:
		return routeAPIUnknown, ""
	}
	if id, ok := strings.CutSuffix(id, ":recover"); ok {
		if id == "" {
			return routeAPIUnknown, ""
		}
		return routeRecover, id
	}
	if id == "" {
		return routeAPIUnknown, ""
	}
	return routeWorkspace, id
}

// normalizeID lowercases id; ok is false when it is not a UUID in its
// canonical form (such an id names no workspace: 404, never a database
// error).
func normalizeID(id string) (string, bool) {
	id = strings.ToLower(id)
	return id, len(id) == 36 && uuid.Validate(id) == nil
}

// statusWriter records the status written, for logs and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines of event streams).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rt, id := match(r.URL.Path)
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if rt != routeEvents {
		// Not supported by every ResponseWriter (a recorder): then the
		// server's own timeouts are all there is.
		_ = http.NewResponseController(w).SetWriteDeadline(start.Add(ResponseWriteTimeout))
	}
	var user string
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("handler panicked", "method", methodLabel(r.Method), "path", logPath(r.URL.Path), "panic", p, "stack", string(debug.Stack()))
			if !sw.wrote {
				writeError(sw, apiError(http.StatusInternalServerError, contracts.APIInternal, "internal error"))
			} else {
				sw.status = http.StatusInternalServerError
			}
		}
		took := time.Since(start)
		label := routeInfo[rt].label
		h.metrics.observeRequest(label, r.Method, sw.status, took, rt != routeEvents)
		level := slog.LevelInfo
		switch {
		case sw.status >= 500:
			level = slog.LevelError
		case rt == routeHealthz || rt == routeMetrics:
			level = slog.LevelDebug
		}
		h.log.Log(r.Context(), level, "http request", "method", methodLabel(r.Method), "route", label, "path", logPath(r.URL.Path),
			"status", sw.status, "duration_ms", took.Milliseconds(), "user", user)
	}()

	switch rt {
	case routeUnknown:
		writeError(sw, apiError(http.StatusNotFound, contracts.APINotFound, "no such path"))
		return
	case routeHealthz, routeMetrics:
		if !h.allowed(sw, r, rt) {
			return
		}
		if rt == routeHealthz {
			h.healthz(sw, r)
		} else {
			h.metrics.ServeHTTP(sw, r)
		}
		return
	}

	p, reason, ok := h.tokens.authenticate(r)
	if !ok {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="converge"`)
		writeError(sw, apiError(http.StatusUnauthorized, contracts.APIUnauthorized, reason))
		return
	}
	user = p.user
	if rt == routeAPIUnknown {
		writeError(sw, apiError(http.StatusNotFound, contracts.APINotFound, "no such path"))
		return
	}
	if !h.allowed(sw, r, rt) {
		return
	}
	if id != "" {
		var valid bool
		if id, valid = normalizeID(id); !valid {
			writeError(sw, apiError(http.StatusNotFound, contracts.APINotFound, "workspace not found"))
			return
		}
	}
	switch rt {
	case routeWorkspaces:
		if r.Method == http.MethodPost {
			h.create(sw, r, p)
		} else {
			h.list(sw, r, p)
		}
	case routeWorkspace:
		switch r.Method {
		case http.MethodGet:
			h.get(sw, r, p, id)
		case http.MethodPatch:
			h.patch(sw, r, p, id)
		case http.MethodDelete:
			h.delete(sw, r, p, id)
		}
	case routeRecover:
		h.recoverWorkspace(sw, r, p, id)
	case routeAdminWorkspaces:
		h.adminList(sw, r, p)
	case routeEvents:
		h.events(sw, r, p, id)
	}
}

// allowed answers 405 (with Allow) unless the method suits the route.
func (h *handler) allowed(w http.ResponseWriter, r *http.Request, rt route) bool {
	methods := routeInfo[rt].methods
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	// The body names the allowed methods, never the one asked for: a
	// client's input is not echoed.
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, apiError(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
		"method not allowed here; allowed: "+strings.Join(methods, ", ")))
	return false
}

// maxLoggedPath bounds the path a log line repeats.
const maxLoggedPath = 256

// logPath is path as logged: cut to maxLoggedPath bytes.
func logPath(path string) string {
	if len(path) <= maxLoggedPath {
		return path
	}
	return path[:maxLoggedPath] + "…"
}

// healthStatus is the /healthz body.
type healthStatus struct {
	Status string       `json:"status"`
	Error  *errorDetail `json:"error,omitempty"`
}

func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		if err := h.cfg.Health(ctx); err != nil {
			h.log.Warn("health check failed", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, healthStatus{
				Status: "unavailable",
				Error:  &errorDetail{Code: CodeUnavailable, Message: err.Error()},
			})
			return
		}
	}
	writeJSON(w, http.StatusOK, healthStatus{Status: "ok"})
}
