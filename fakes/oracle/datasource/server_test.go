package datasource

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/refimpl/oracle/core"
)

// records is a concurrency-safe sink.
type records struct {
	mu  sync.Mutex
	evs []history.Event
}

func (r *records) add(e history.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

// done waits (with a deadline) for the done record of the n-th exchange.
func (r *records) done(t *testing.T, exchange int64) *history.Src {
	t.Helper()
	var got *history.Src
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, e := range r.evs {
			if e.Src.Exchange == exchange && e.Src.Phase == history.PhaseDone {
				got = e.Src
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no done record for exchange %d", exchange)
	return got
}

func (r *records) recv(t *testing.T, exchange int64) *history.Src {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.Src.Exchange == exchange && e.Src.Phase == history.PhaseRecv {
			return e.Src
		}
	}
	t.Fatalf("no recv record for exchange %d", exchange)
	return nil
}

func get(t *testing.T, client *http.Client, url string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Oracle-Daemon/1.0")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// The loopback server answers each class as a daemon's HTTP client sees
// it, and records every exchange.
func TestServerAnswersEveryClass(t *testing.T) {
	rec := &records{}
	src := New(5, rec.add)
	src.HangFor = time.Minute
	srv, err := src.Serve("127.0.0.1:0", nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

	classes := []Class{ClassOK, ClassStatus, ClassMalformed, ClassMissing, ClassNull, ClassArray, ClassEmpty, ClassReset, ClassHang}
	exchange := int64(0)
	for i, c := range classes {
		r := uint64(i + 1)
		require.NoError(t, src.Set(r, Script{Path: "data.price", Mix: []Weight{{c, 1}}, Statuses: []int{503}}))
		if c == ClassHang {
			client.Timeout = 300 * time.Millisecond
		}
		resp, body, err := get(t, client, srv.URL(r, 0))
		exchange++
		in := rec.recv(t, exchange)
		require.Equal(t, r, in.RequestID)
		require.Contains(t, in.Headers, history.Header{Name: "User-Agent", Value: "Oracle-Daemon/1.0"})
		require.Contains(t, in.Headers, history.Header{Name: "Accept", Value: "application/json"})
		out := rec.done(t, exchange)
		require.Equal(t, string(c), out.Class)
		switch c {
		case ClassReset:
			require.Error(t, err, "a reset connection is a transport error")
			require.False(t, out.Aborted)
		case ClassHang:
			require.Error(t, err)
			var timeout interface{ Timeout() bool }
			require.True(t, errors.As(err, &timeout) && timeout.Timeout(), "the client gave up: %v", err)
			require.True(t, out.Aborted, "the client went away first")
		case ClassStatus:
			require.NoError(t, err)
			require.Equal(t, 503, resp.StatusCode)
			require.Equal(t, string(body), out.Body)
		default:
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			require.Equal(t, string(body), out.Body)
			v, err := core.Extract(body, "data.price")
			if c == ClassOK {
				require.NoError(t, err)
				require.Equal(t, src.Value(r, 0, rec.evsAt(exchange)), v)
			} else {
				require.ErrorIs(t, err, core.ErrParse, "%s: %s", c, body)
			}
		}
	}

	resp, _, err := get(t, client, srv.BaseURL()+"/nope")
	require.NoError(t, err)
	require.Equal(t, 404, resp.StatusCode)
	post, err := client.Post(srv.URL(1, 0), "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, post.Body.Close())
	require.Equal(t, http.StatusMethodNotAllowed, post.StatusCode)
}

// evsAt is the arrival time of an exchange (the value is the one of its
// second).
func (r *records) evsAt(exchange int64) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.Src.Exchange == exchange && e.Src.Phase == history.PhaseRecv {
			return e.At
		}
	}
	return time.Time{}
}

// Closing the server ends a hanging GET at once, recorded as aborted.
func TestCloseEndsHangs(t *testing.T) {
	rec := &records{}
	src := New(1, rec.add)
	require.NoError(t, src.Set(1, Script{Mix: []Weight{{ClassHang, 1}}}))
	srv, err := src.Serve("127.0.0.1:0", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL(1, 0), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errs <- err
	}()
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.evs) == 1
	}, 10*time.Second, 5*time.Millisecond, "the GET arrives")
	require.NoError(t, srv.Close())
	require.True(t, rec.done(t, 1).Aborted)
	cancel()
	require.Error(t, <-errs)

	_, err = src.Serve("256.0.0.1:0", nil)
	require.Error(t, err)
}
