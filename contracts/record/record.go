package record

import (
	"encoding/binary"
	"encoding/hex"
	"iter"
	"sync"
	"time"

	"github.com/zeebo/xxh3"
)

// Recorder collects a run's events of type E, numbers them and folds
// each one's canonical encoding into a running hash (XXH3-128, see
// HashSize): two runs with the same hash recorded the same history. It
// is safe for concurrent use.
//
// Every event is hashed; Keep (optional) decides which are also kept for
// the checkers (a world may fold bulky events it never judges into the
// hash only). Sink, when set, sees each kept event under the recorder's
// lock (it must not record).
type Recorder[E any] struct {
	mu sync.Mutex
	// events holds the kept events in chunks of chunkLen, so a long run's
	// history is never copied to grow.
	events [][]E
	kept   int
	seq    int64
	folded int64
	h      *xxh3.Hasher
	// buf holds the encodings of the events not yet hashed: the hash of
	// the concatenation is the same written at once, and one write of a
	// few kilobytes costs less than one per event.
	buf []byte

	encode func(b []byte, e *E) []byte
	setSeq func(e *E, seq int64)
	keep   func(e *E) bool

	Sink func(E)
}

// NewRecorder returns an empty recorder. encode appends e's canonical
// encoding (its sequence number included) to b; setSeq stamps an event's
// sequence number; keep (nil: keep all) says whether an event is kept.
func NewRecorder[E any](encode func(b []byte, e *E) []byte, setSeq func(e *E, seq int64), keep func(e *E) bool) *Recorder[E] {
	return &Recorder[E]{h: xxh3.New(), encode: encode, setSeq: setSeq, keep: keep}
}

// chunkLen is the number of events in one chunk of a Recorder's store.
const chunkLen = 4096

// Add records e, assigning its sequence number, and returns that number.
func (r *Recorder[E]) Add(e E) int64 { return r.AddRef(&e) }

// AddRef is Add of *e, numbered in place: *e gets its sequence number and
// is copied only when it is kept. A caller that records from one scratch
// event this way does not move each event to the heap, as Add's argument
// does.
func (r *Recorder[E]) AddRef(e *E) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.setSeq(e, r.seq)
	r.buf = r.encode(r.buf, e)
	if len(r.buf) >= hashBatch {
		r.flush()
	}
	if r.keep != nil && !r.keep(e) {
		r.folded++
		return r.seq
	}
	if len(r.events) == 0 || len(r.events[len(r.events)-1]) == chunkLen {
		r.events = append(r.events, make([]E, 0, chunkLen))
	}
	last := &r.events[len(r.events)-1]
	*last = append(*last, *e)
	r.kept++
	if r.Sink != nil {
		r.Sink(*e)
	}
	return r.seq
}

// hashBatch is how many bytes of encodings AddRef gathers before it
// hashes them.
const hashBatch = 4096

// flush hashes the encodings gathered.
func (r *Recorder[E]) flush() {
	_, _ = r.h.Write(r.buf) // a hash's Write never fails
	r.buf = r.buf[:0]
}

// CountFolded accounts for n events applied in bulk that the recorder
// did not see one by one (they are counted, not hashed).
func (r *Recorder[E]) CountFolded(n int) {
	r.mu.Lock()
	r.folded += int64(n)
	r.mu.Unlock()
}

// Folded is the number of events hashed (or counted) but not kept.
func (r *Recorder[E]) Folded() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.folded
}

// Events returns a copy of the kept events.
func (r *Recorder[E]) Events() []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]E, 0, r.kept)
	for _, c := range r.events {
		out = append(out, c...)
	}
	return out
}

// All yields the kept events in order, in place: no copy of a long run's
// history. The recorder must not be added to while it runs.
func (r *Recorder[E]) All() iter.Seq[*E] {
	return func(yield func(*E) bool) {
		r.mu.Lock()
		chunks := r.events
		r.mu.Unlock()
		for _, c := range chunks {
			for i := range c {
				if !yield(&c[i]) {
					return
				}
			}
		}
	}
}

// Tail returns the last n kept events for which match holds (all of them
// if n ≤ 0), oldest first.
func (r *Recorder[E]) Tail(n int, match func(*E) bool) []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []E
	for i := r.kept - 1; i >= 0 && (n <= 0 || len(out) < n); i-- {
		e := &r.events[i/chunkLen][i%chunkLen]
		if match == nil || match(e) {
			out = append(out, *e)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Len is the number of kept events.
func (r *Recorder[E]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kept
}

// Hash is the hex XXH3-128 of every event's encoding added so far
// (HashSize bytes, 2×HashSize hex digits).
func (r *Recorder[E]) Hash() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	sum := r.h.Sum128().Bytes()
	return hex.EncodeToString(sum[:])
}

// HashSize is the size in bytes of a Recorder's hash. The hash only tells
// one history from another (the determinism fingerprint, a replay file's
// check): nobody forges a history against it, so it need not be
// cryptographic, and XXH3-128 costs less than a tenth of the SHA-256 it
// replaced.
const HashSize = 16

// OldHash reports whether h has the form of the SHA-256 history hash of a
// converge before the history hash became XXH3-128 (64 hex digits): a
// replay file that carries one cannot be compared with a run of this one.
func OldHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// Canonical encoding helpers for a world's encode function.

// AppendString appends a length-prefixed string.
func AppendString(b []byte, s string) []byte {
	return append(AppendUint(b, uint64(len(s))), s...)
}

// AppendBytes appends a length-prefixed byte string (nil and empty alike).
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendUint(b, uint64(len(v))), v...)
}

// AppendUint appends an unsigned integer (binary.AppendUvarint). A value
// below 0x80, the length of most strings and most numbers of a record, is
// its one byte, appended inline: the call to binary.AppendUvarint, which
// is not inlined, was a tenth of a record's encoding.
func AppendUint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// AppendInt appends a signed integer (binary.AppendVarint: zig-zag, then
// AppendUint).
func AppendInt(b []byte, v int64) []byte {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return AppendUint(b, u)
}

// AppendBool appends a boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendTime appends a time (the zero time distinctly).
func AppendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), t.UnixNano())
}
