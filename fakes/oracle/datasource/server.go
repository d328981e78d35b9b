package datasource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
)

// Server is the loopback HTTP front end of a Sources for black-box mode:
// it answers GET /r/{r}/e/{k} on the wall clock (or the clock it is
// given), after the scripted latency.
type Server struct {
	src  *Sources
	now  func() time.Time
	ln   net.Listener
	http *http.Server
	base string

	// closing ends hangs and latencies when the server closes.
	closing   chan struct{}
	closeOnce sync.Once
	done      chan error
}

// Serve starts a server for src on addr ("127.0.0.1:0" picks a free
// port). now is its clock (nil: the wall clock).
func (s *Sources) Serve(addr string, now func() time.Time) (*Server, error) {
	if now == nil {
		now = time.Now
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("data sources: listen on %s: %w", addr, err)
	}
	srv := &Server{src: s, now: now, ln: ln, base: "http://" + ln.Addr().String(),
		closing: make(chan struct{}), done: make(chan error, 1)}
	srv.http = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { srv.done <- srv.http.Serve(ln) }()
	return srv, nil
}

// BaseURL is "http://127.0.0.1:{port}".
func (srv *Server) BaseURL() string { return srv.base }

// URL is endpoint k of request r on this server.
func (srv *Server) URL(r uint64, k int) string { return URL(srv.base, r, k) }

// Close stops the server: hanging and waiting GETs end at once with a
// reset connection (recorded as aborted), and Close returns when every
// handler has returned.
func (srv *Server) Close() error {
	srv.closeOnce.Do(func() { close(srv.closing) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.http.Shutdown(ctx)
	if serveErr := <-srv.done; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if err != nil {
		return fmt.Errorf("data sources: close: %w", err)
	}
	return nil
}

// ServeHTTP answers one GET as the script says and records it.
func (srv *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, `{"error":"only GET"}`, http.StatusMethodNotAllowed)
		return
	}
	o := srv.src.Get(srv.now(), req.URL.Path, headersOf(req.Header))
	ctx := req.Context()
	wait := o.DoneAt.Sub(o.Arrived)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		srv.src.Abort(o, srv.now())
		return
	case <-srv.closing:
		// The client must not read an empty 200 as an answer.
		srv.reset(w)
		srv.src.Abort(o, srv.now())
		return
	}
	switch o.Class {
	case ClassHang:
		// The server gives up: the client sees the connection drop.
		srv.reset(w)
		srv.src.Done(srv.at(o))
		return
	case ClassReset:
		srv.reset(w)
		srv.src.Done(srv.at(o))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(o.Status)
	if _, err := w.Write(o.Body); err != nil {
		srv.src.Abort(o, srv.now())
		return
	}
	srv.src.Done(srv.at(o))
}

// at is o completed now (the wall clock moved while it was served).
func (srv *Server) at(o Outcome) Outcome {
	o.DoneAt = srv.now()
	return o
}

// reset closes the connection with a TCP reset (SO_LINGER 0), as a
// crashed or overloaded source does.
func (srv *Server) reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		slog.Warn("data sources: cannot hijack a connection to reset it", "err", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// headersOf lists a request's headers, one per value (Sources.Get sorts
// them).
func headersOf(h http.Header) []history.Header {
	var out []history.Header
	for name, values := range h {
		for _, v := range values {
			out = append(out, history.Header{Name: name, Value: v})
		}
	}
	return out
}
