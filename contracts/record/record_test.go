package record

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A toy event: the recorder's tests number, keep and hash these.
type ev struct {
	seq int64
	at  time.Time
	add int
}

func events(adds ...int) []ev {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]ev, len(adds))
	for i, a := range adds {
		out[i] = ev{seq: int64(i + 1), at: t0.Add(time.Duration(i) * time.Second), add: a}
	}
	return out
}

func newToyRecorder() *Recorder[ev] {
	return NewRecorder(func(b []byte, e *ev) []byte {
		b = AppendInt(b, e.seq)
		b = AppendTime(b, e.at)
		return AppendInt(b, int64(e.add))
	}, func(e *ev, seq int64) { e.seq = seq }, func(e *ev) bool { return e.add != 0 })
}

func TestRecorderNumbersKeepsAndHashes(t *testing.T) {
	a, b := newToyRecorder(), newToyRecorder()
	var sunk []int64
	a.Sink = func(e ev) { sunk = append(sunk, e.seq) }
	for _, e := range events(1, 0, 2, 3) {
		a.Add(e)
		b.Add(e)
	}
	require.Equal(t, a.Hash(), b.Hash(), "the same events give the same hash")
	require.Equal(t, 3, a.Len())
	require.Equal(t, int64(1), a.Folded(), "the zero event is hashed, not kept")
	require.Equal(t, []int64{1, 3, 4}, sunk)
	tail := a.Tail(2, nil)
	require.Equal(t, []int64{3, 4}, []int64{tail[0].seq, tail[1].seq})
	require.Len(t, a.Tail(0, func(e *ev) bool { return e.add > 1 }), 2)

	b.Add(events(5)[0])
	require.NotEqual(t, a.Hash(), b.Hash())
	c := newToyRecorder()
	for _, e := range events(1, 0, 2, 4) { // one value differs
		c.Add(e)
	}
	require.NotEqual(t, a.Hash(), c.Hash())
	c.CountFolded(3)
	require.Equal(t, int64(4), c.Folded())
}

func TestAppendHelpersAreUnambiguous(t *testing.T) {
	// "ab"+"c" and "a"+"bc" must not encode alike.
	x := AppendString(AppendString(nil, "ab"), "c")
	y := AppendString(AppendString(nil, "a"), "bc")
	require.NotEqual(t, x, y)
	require.NotEqual(t, AppendTime(nil, time.Time{}), AppendTime(nil, time.Unix(0, 0)))
	require.NotEqual(t, AppendBool(nil, true), AppendBool(nil, false))
	require.NotEqual(t, AppendBytes(AppendBytes(nil, []byte("ab")), []byte("c")), AppendBytes(AppendBytes(nil, []byte("a")), []byte("bc")))
	require.Equal(t, AppendString(nil, "xy"), AppendBytes(nil, []byte("xy")))
	require.NotEqual(t, AppendUint(nil, 1<<63), AppendUint(nil, 1<<62))
}

// AppendUint and AppendInt are binary.AppendUvarint and AppendVarint (the
// history hash depends on every byte), their one-byte values inline.
func TestAppendIntegersAreVarints(t *testing.T) {
	for _, v := range []uint64{0, 1, 0x7f, 0x80, 0xff, 300, 1<<32 - 1, 1 << 62, 1<<64 - 1} {
		require.Equal(t, binary.AppendUvarint([]byte{9}, v), AppendUint([]byte{9}, v), "%d", v)
	}
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 40, -1 << 40, math.MaxInt64, math.MinInt64} {
		require.Equal(t, binary.AppendVarint([]byte{9}, v), AppendInt([]byte{9}, v), "%d", v)
	}
	s := strings.Repeat("x", 200)
	require.Equal(t, append(binary.AppendUvarint(nil, 200), s...), AppendString(nil, s))
}

func TestOffset(t *testing.T) {
	require.Equal(t, "+00:00:00.000", Offset(0))
	require.Equal(t, "+00:05:02.100", Offset(5*time.Minute+2100*time.Millisecond))
	require.Equal(t, "+1d02:03:04.500", Offset(26*time.Hour+3*time.Minute+4500*time.Millisecond))
	require.Equal(t, "-00:00:01.000", Offset(-time.Second))
}

// A history longer than one chunk of the store reads back whole, in order.
func TestRecorderKeepsLongHistoriesInOrder(t *testing.T) {
	r := newToyRecorder()
	n := 3*chunkLen + 17
	for i := range n {
		r.Add(ev{add: i%5 + 1})
	}
	require.Equal(t, n, r.Len())
	all := r.Events()
	require.Len(t, all, n)
	for i, e := range all {
		require.Equal(t, int64(i+1), e.seq)
	}
	var seen []ev
	for e := range r.All() {
		seen = append(seen, *e)
	}
	require.Equal(t, all, seen, "All yields what Events copies")
	stopped := 0
	for range r.All() {
		if stopped++; stopped == 2 {
			break
		}
	}
	tail := r.Tail(chunkLen+3, func(e *ev) bool { return e.add == 1 })
	require.Len(t, tail, (n+4)/5)
	require.Equal(t, int64(1), tail[0].seq)
	require.Equal(t, int64((n-1)/5*5+1), tail[len(tail)-1].seq)
	require.Len(t, r.Tail(2, nil), 2)
	require.Equal(t, int64(n), r.Tail(1, nil)[0].seq)
}

func TestRecorderAddRefIsAddInPlace(t *testing.T) {
	a, b := newToyRecorder(), newToyRecorder()
	var scratch ev
	for _, e := range events(1, 0, 2, 3) {
		a.Add(e)
		scratch = e
		seq := b.AddRef(&scratch)
		require.Equal(t, seq, scratch.seq, "the event is numbered in place")
		scratch.add = 99 // a kept event is a copy, not the scratch
	}
	require.Equal(t, a.Hash(), b.Hash())
	require.Equal(t, a.Events(), b.Events())
	require.Equal(t, a.Folded(), b.Folded())
}

func TestHashIsXXH3AndOldHashesAreKnown(t *testing.T) {
	r := newToyRecorder()
	empty := r.Hash()
	require.Len(t, empty, 2*HashSize)
	r.Add(events(1)[0])
	require.NotEqual(t, empty, r.Hash())
	require.False(t, OldHash(r.Hash()))
	require.True(t, OldHash("52d980d15f832b1d75dd7215eb596458728b8d24bf49b6338319e45d65b6d357"), "a SHA-256 history hash")
	require.False(t, OldHash("52d980d15f832b1d75dd7215eb596458728b8d24bf49b6338319e45d65b6d35z"))
}
