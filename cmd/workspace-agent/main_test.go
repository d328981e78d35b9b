package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	cfg, err := parseConfig(env(nil))
	require.NoError(t, err)
	require.Equal(t, config{Addr: ":8080", Home: "/home/coder"}, cfg)

	cfg, err = parseConfig(env(map[string]string{"AGENT_ADDR": "127.0.0.1:9000", "HOME_DIR": "/w/home/"}))
	require.NoError(t, err)
	require.Equal(t, config{Addr: "127.0.0.1:9000", Home: "/w/home"}, cfg)

	_, err = parseConfig(env(map[string]string{"AGENT_ADDR": "8080"}))
	require.ErrorContains(t, err, "AGENT_ADDR")
	_, err = parseConfig(env(map[string]string{"HOME_DIR": "home"}))
	require.ErrorContains(t, err, "HOME_DIR")
}

// TestServeShutsDownGracefully: a request in flight when the context ends
// still gets its answer, and serve returns without error.
func TestServeShutsDownGracefully(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	started := make(chan struct{})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, h, slog.New(slog.DiscardHandler)) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{body: string(b), err: err}
	}()
	<-started
	cancel()
	// Shutdown has begun: new connections are refused while the old one lives.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 10*time.Millisecond)
	close(release)
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "finished", r.body)
	require.NoError(t, <-served)
}

func TestRunRefusesBadSettings(t *testing.T) {
	status := run(context.Background(), func(k string) string {
		if k == "HOME_DIR" {
			return "relative"
		}
		return ""
	}, io.Discard)
	require.Equal(t, 2, status)
}
