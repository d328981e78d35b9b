package conntrack_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/refimpl/oracle/internal/conntrack"
)

// Close closes the kept-alive idle connections and those still in use,
// so their goroutines end, and refuses new connections.
func TestClose(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			w.(http.Flusher).Flush()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c := conntrack.New()
	before := runtime.NumGoroutine()

	slow, err := c.Get(srv.URL + "/slow") // in use: the body never ends
	require.NoError(t, err)
	resp, err := c.Get(srv.URL + "/fast") // a second connection, then idle
	require.NoError(t, err)
	_, _ = io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, 2, c.Open(), "one idle, one in use")

	c.Close()
	require.Zero(t, c.Open())
	_, err = io.ReadAll(slow.Body)
	require.Error(t, err, "the connection in use was closed")
	slow.Body.Close()
	close(release) // the server's handler ends too
	// Polled here: testify's Eventually runs its condition on a goroutine
	// of its own, which would be counted.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines back to the baseline")
	_, err = c.Get(srv.URL + "/fast")
	require.Error(t, err)
}
