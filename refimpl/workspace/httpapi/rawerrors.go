package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/wsconverge/converge/contracts"
)

// JSONErrors wraps the API's listener so that the answers net/http writes
// by itself, before any handler runs, to a request it cannot read carry
// the API's JSON error body too (issue 23: they were text/plain): 400
// BAD_REQUEST (a malformed request line, Host or header), 431
// HEADERS_TOO_LARGE (headers over the server's MaxHeaderBytes), 501
// NOT_IMPLEMENTED (a Transfer-Encoding it does not know) and 505
// HTTP_VERSION_NOT_SUPPORTED. The connection is closed after each, as
// net/http does. Everything a handler writes passes unchanged.
//
// net/http writes these answers in one Write on the connection, in a form
// no response of a handler takes: the status line followed at once by
// exactly "Content-Type: text/plain; charset=utf-8", "Connection: close"
// and the blank line (a handler's response always carries Date between
// them). That form is what the connection recognises and rewrites.
func JSONErrors(ln net.Listener) net.Listener { return jsonErrorsListener{ln} }

type jsonErrorsListener struct{ net.Listener }

func (l jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorsConn{Conn: c}, nil
}

type jsonErrorsConn struct{ net.Conn }

func (c *jsonErrorsConn) Write(p []byte) (int, error) {
	if b, ok := rewriteServerError(p); ok {
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection when the wrapped one can (net/http
// does so after a 431, to let the client read the answer).
func (c *jsonErrorsConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// netHTTPErrorHeaders are the headers net/http's own error answers carry,
// right after the status line.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// rewriteServerError returns the JSON form of p when p is one of
// net/http's own error answers, and false otherwise.
func rewriteServerError(p []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) {
		return nil, false
	}
	end := bytes.IndexByte(p, '\r')
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	line := p[len(proto):end]
	if len(line) < 4 || line[3] != ' ' {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil {
		return nil, false
	}
	var code, msg string
	switch status {
	case http.StatusBadRequest:
		code, msg = contracts.APIBadRequest, "malformed request"
	case http.StatusRequestHeaderFieldsTooLarge:
		code, msg = CodeHeadersTooLarge, "the request's headers are larger than the server accepts"
	case http.StatusNotImplemented:
		code, msg = CodeNotImplemented, "unsupported transfer encoding"
	case http.StatusHTTPVersionNotSupported:
		code, msg = CodeHTTPVersionNotSupported, "unsupported protocol version"
	default:
		return nil, false
	}
	// net/http's text is fixed (it never repeats the request): "400 Bad
	// Request: missing required Host header" names what was wrong.
	body := p[end+len(netHTTPErrorHeaders):]
	if _, detail, ok := bytes.Cut(body, []byte(http.StatusText(status)+": ")); ok && len(detail) > 0 {
		msg = string(detail)
	}
	b, err := json.Marshal(errorBody{Error: errorDetail{Code: code, Message: msg}})
	if err != nil {
		return nil, false
	}
	b = append(b, '\n')
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n"+
		"X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", status, http.StatusText(status), len(b))
	return append([]byte(head), b...), true
}
