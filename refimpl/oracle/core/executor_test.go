package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/ports"
)

func fetchTimes(w *world, r uint64) []time.Duration {
	var d []time.Duration
	for _, f := range w.fetchesOf(r) {
		d = append(d, f.at.Sub(t0))
	}
	return d
}

// An execution makes up to 4 GETs, 1 s, 2 s and 4 s apart (D1); when all
// fail the job runs again 1 min later; a body that does not parse makes it
// run again 5 min later (§3.3.3).
func TestFetchRetriesAndFailureBackoffs(t *testing.T) {
	t.Run("fetch failure", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.sources[url(1, 0)] = func(a int) (int, string, error) {
			if a%2 == 0 {
				return 0, "", errors.New("connection reset")
			}
			return 503, "busy", nil
		}
		w.advance(time.Minute + 8*time.Second)
		s := time.Second
		require.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 68 * s}, fetchTimes(w, 1))
		require.Equal(t, []oracle.Row{oracle.RowCreate, oracle.RowSelect, oracle.RowFetchFailed, oracle.RowSelect}, w.rows(1))
		for i, f := range outputsOf[ports.Fetch](w)[:4] {
			require.Equal(t, i+1, f.Attempt)
			require.Equal(t, 30*time.Second, f.Timeout, "worker.timeout_sec per attempt")
		}
	})
	t.Run("parse failure", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.sources[url(1, 0)] = body(`{"data":{"cost":1}}`)
		w.advance(5*time.Minute + 2*time.Second)
		require.Equal(t, []time.Duration{time.Second, 5*time.Minute + time.Second}, fetchTimes(w, 1))
		require.Equal(t, oracle.RowParseFailed, w.rows(1)[2])
		require.Empty(t, w.broadcasts())
	})
	t.Run("success after failures", func(t *testing.T) {
		w := newWorld(t).withDoc(doc(1)).startRunning()
		w.sources[url(1, 0)] = func(a int) (int, string, error) {
			if a < 4 {
				return 500, "", nil
			}
			return 200, `{"data":{"price":12.5}}`, nil
		}
		w.advance(10 * time.Second)
		require.Len(t, w.fetchesOf(1), 4)
		subs := w.broadcasts()
		require.Len(t, subs, 1)
		require.Equal(t, "12.5", subs[0].raw)
	})
}

// The value submitted is the §3.4 rendering of the path's value; a null,
// a missing key, an empty string or a body that is not an object is a
// parse failure.
func TestExtraction(t *testing.T) {
	for _, tc := range []struct {
		body string
		raw  string // "" for a parse failure
	}{
		{`{"data":{"price":1e21}}`, "1000000000000000000000"},
		{`{"data":{"price":0.1}}`, "0.1"},
		{`{"data":{"price":1234567.8901234}}`, "1234567.8901234"},
		{`{"data":{"price":"abc"}}`, "abc"},
		{`{"data":{"price":true}}`, "true"},
		{`{"data":{"price":{"b":1,"a":[2,3]}}}`, `{"a":[2,3],"b":1}`},
		{`{"data":{"price":null}}`, ""},
		{`{"data":{"price":""}}`, ""},
		{`{"data":{}}`, ""},
		{`[{"data":{"price":1}}]`, ""},
		{`{"data":{"price":1}`, ""},
	} {
		t.Run(tc.body, func(t *testing.T) {
			w := newWorld(t).withDoc(doc(1)).startRunning()
			w.sources[url(1, 0)] = body(tc.body)
			w.advance(time.Second)
			subs := w.broadcasts()
			if tc.raw == "" {
				require.Empty(t, subs)
				require.Equal(t, oracle.RowParseFailed, w.rows(1)[2])
				return
			}
			require.Len(t, subs, 1)
			require.Equal(t, tc.raw, subs[0].raw)
		})
	}
}

// The endpoint is endpoints[AssignedIndex mod len(endpoints)] (D8).
func TestEndpointChoice(t *testing.T) {
	two := func(d *oracle.RequestDoc) {
		d.Endpoints = []oracle.Endpoint{{URL: url(d.RequestID, 0), ParseRule: "data.price"}, {URL: url(d.RequestID, 1), ParseRule: "data.price"}}
	}
	w := newWorld(t).
		withDoc(doc(1, accounts(peer1, self), two)).
		withDoc(doc(2, accounts(peer1, peer2, self), two)).
		startRunning()
	w.advance(time.Second)
	require.Equal(t, url(1, 1), w.fetchesOf(1)[0].out.(ports.Fetch).URL)
	require.Equal(t, url(2, 0), w.fetchesOf(2)[0].out.(ports.Fetch).URL)
}

// A slot is held for the whole execution, retry waits included: with one
// slot, a second job starts only when the first execution has ended.
func TestSlotHeldDuringRetryWaits(t *testing.T) {
	w := newWorld(t, poolSize(1)).withDoc(doc(1)).withDoc(doc(2)).startRunning()
	w.sources[url(1, 0)] = func(int) (int, string, error) { return 502, "", nil }
	w.advance(10 * time.Second)
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, fetchTimes(w, 1))
	require.Equal(t, []time.Duration{8 * time.Second}, fetchTimes(w, 2), "right after the first execution ended")
}

// With more ready jobs than slots, the GETs in flight never exceed
// pool_size (O7).
func TestFetchConcurrencyBound(t *testing.T) {
	w := newWorld(t, poolSize(3))
	for r := uint64(1); r <= 8; r++ {
		w.withDoc(doc(r))
	}
	w.hold = func(o ports.Output) bool { _, ok := o.(ports.Fetch); return ok }
	w.startRunning()
	w.advance(time.Second)
	for round := 0; round < 4; round++ {
		inFlight := 0
		for _, o := range w.held {
			if _, ok := o.(ports.Fetch); ok {
				inFlight++
			}
		}
		require.LessOrEqual(t, inFlight, 3)
		first := w.held[0].(ports.Fetch).RequestID
		w.release(isFetch(first))
	}
	require.Len(t, outputsOf[ports.Fetch](w), 7)
}
