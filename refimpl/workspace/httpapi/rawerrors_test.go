package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

// rawExchange writes raw on a new connection to addr and reads the one
// answer.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "%q", raw)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, b
}

// What net/http answers by itself, before any handler runs, to a request
// it cannot read is the API's JSON error too through JSONErrors (issue 23:
// Go's own text/plain errors were not JSON): a missing or malformed Host,
// a header line that is not one, a request line that is not HTTP, headers
// over MaxHeaderBytes, an unknown transfer coding, an unknown HTTP
// version. The connection is closed after each. A handler's answers on the
// same listener, text ones included, pass unchanged.
func TestNetHTTPsOwnErrorsAreJSON(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.srv.Config.Handler)
	srv.Config.MaxHeaderBytes = 1 << 10
	srv.Listener = JSONErrors(srv.Listener)
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		raw    string
		status int
		code   string
		msg    string
	}{
		{"GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest, contracts.APIBadRequest, "missing required Host header"},
		{"GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n", http.StatusBadRequest, contracts.APIBadRequest, "malformed Host header"},
		{"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", http.StatusBadRequest, contracts.APIBadRequest, "invalid header name"},
		{"NOT HTTP AT ALL\r\n\r\n", http.StatusBadRequest, contracts.APIBadRequest, "malformed request"},
		{"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge, "headers are larger"},
		{"POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, CodeNotImplemented, "unsupported transfer encoding"},
		{"GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported, CodeHTTPVersionNotSupported, "unsupported protocol version"},
	} {
		resp, b := rawExchange(t, addr, c.raw)
		require.Equal(t, c.status, resp.StatusCode, "%.60q: %s", c.raw, b)
		require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"), "%.60q", c.raw)
		require.True(t, resp.Close, "the connection is closed after the answer")
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(b, &body), "%s", b)
		require.Equal(t, c.code, body.Error.Code, "%.60q", c.raw)
		require.Contains(t, body.Error.Message, c.msg, "%.60q", c.raw)
	}

	// The handler's own answers are untouched, the text of /metrics too.
	resp, b := rawExchange(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.JSONEq(t, `{"status":"ok"}`, string(b))
	resp, b = rawExchange(t, addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"))
	require.Contains(t, string(b), "converge_http_requests_total")
}

// Only net/http's own form is rewritten: a response whose headers merely
// start the same way is a handler's, and passes as it is.
func TestRewriteServerErrorTakesOnlyNetHTTPsForm(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nDate: Mon, 01 Jan 2026 00:00:00 GMT\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nhello",
		"HTTP/1.1 418 I'm a teapot\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n418",
		"data: {\"x\":1}\n\n",
		"HTTP/1.1 400",
	} {
		_, ok := rewriteServerError([]byte(p))
		require.False(t, ok, "%q", p)
	}
	b, ok := rewriteServerError([]byte("HTTP/1.1 400 Bad Request" + netHTTPErrorHeaders + "400 Bad Request"))
	require.True(t, ok)
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(b))), nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.JSONEq(t, `{"error":{"code":"BAD_REQUEST","message":"malformed request"}}`, string(body))
}
