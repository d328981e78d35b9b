package driver

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits on what a child's standard error leaves in the history.
const (
	// maxSegment is the most bytes of one exchange's standard error kept
	// (the rest is counted).
	maxSegment = 64 << 10
	// maxNoteLines is the most lines of one segment made into notes.
	maxNoteLines = 50
	// maxNoteLine is the longest note, in bytes.
	maxNoteLine = 500
)

// stderrMarkerByte starts wire.StderrMarker; the newline after it is
// dropped.
const stderrMarkerByte = 0x1e

// segment is a child's standard error between two markers.
type segment struct {
	text      []byte
	truncated int
}

// stderrTap reads a child's standard error as it comes, splitting it at
// the markers a stderr_sync child writes before each message that ends an
// exchange. Reading goes on in a goroutine so that a chatty child never
// blocks on a full pipe; what each exchange wrote is taken out when the
// exchange ends (sync), or, for a child that does not sync, when the
// process ends.
type stderrTap struct {
	mu   sync.Mutex
	done []segment // completed by a marker, oldest first
	cur  segment
	eof  bool
	// skipNL: the byte before was a marker; a newline now belongs to it.
	skipNL bool
	signal chan struct{}
}

func newStderrTap(r io.ReadCloser) *stderrTap {
	t := &stderrTap{signal: make(chan struct{}, 1)}
	go t.read(r)
	return t
}

func (t *stderrTap) read(r io.ReadCloser) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			t.add(buf[:n])
		}
		if err != nil {
			t.mu.Lock()
			t.eof = true
			t.mu.Unlock()
			t.notify()
			return
		}
	}
}

func (t *stderrTap) notify() {
	select {
	case t.signal <- struct{}{}:
	default:
	}
}

func (t *stderrTap) add(b []byte) {
	t.mu.Lock()
	marked := false
	for len(b) > 0 {
		if t.skipNL {
			t.skipNL = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		i := bytes.IndexByte(b, stderrMarkerByte)
		if i < 0 {
			t.cur.append(b)
			break
		}
		t.cur.append(b[:i])
		t.done = append(t.done, t.cur)
		t.cur = segment{}
		t.skipNL = true
		marked = true
		b = b[i+1:]
	}
	t.mu.Unlock()
	if marked {
		t.notify()
	}
}

func (s *segment) append(b []byte) {
	room := maxSegment - len(s.text)
	if room < len(b) {
		s.truncated += len(b) - max(room, 0)
		b = b[:max(room, 0)]
	}
	s.text = append(s.text, b...)
}

var errNoMarker = errors.New("no standard-error marker")

// sync waits (at most timeout) for the next marker and returns what was
// written before it.
func (t *stderrTap) sync(timeout time.Duration) (segment, error) {
	var timer *time.Timer
	for {
		t.mu.Lock()
		if len(t.done) > 0 {
			s := t.done[0]
			t.done = t.done[1:]
			t.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return s, nil
		}
		eof := t.eof
		t.mu.Unlock()
		if eof {
			return segment{}, errNoMarker
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
		}
		select {
		case <-t.signal:
		case <-timer.C:
			return segment{}, errNoMarker
		}
	}
}

// rest waits (at most timeout) for the end of the stream and returns
// everything not taken yet; complete is false if the stream did not end.
func (t *stderrTap) rest(timeout time.Duration) (s segment, complete bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		if t.eof {
			s = t.takeAll()
			t.mu.Unlock()
			return s, true
		}
		t.mu.Unlock()
		select {
		case <-t.signal:
		case <-deadline.C:
			t.mu.Lock()
			s = t.takeAll()
			t.mu.Unlock()
			return s, false
		}
	}
}

// takeAll joins every pending segment; t.mu is held.
func (t *stderrTap) takeAll() segment {
	var all segment
	for _, s := range append(t.done, t.cur) {
		all.append(s.text)
		all.truncated += s.truncated
	}
	t.done, t.cur = nil, segment{}
	return all
}

// notes renders a segment as history notes: one per line, each cut to
// maxNoteLine bytes, at most maxNoteLines of them.
func (s segment) notes() []string {
	var out []string
	lines := bytes.Split(s.text, []byte{'\n'})
	more := 0
	for _, l := range lines {
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if len(out) == maxNoteLines {
			more++
			continue
		}
		out = append(out, "stderr: "+cut(l, maxNoteLine))
	}
	if more > 0 {
		out = append(out, "stderr: … "+strconv.Itoa(more)+" more lines")
	}
	if s.truncated > 0 {
		out = append(out, "stderr: … "+strconv.Itoa(s.truncated)+" more bytes")
	}
	return out
}

// tail is the last n bytes of a segment, for an error message.
func (s segment) tail(n int) string {
	b := bytes.TrimSpace(s.text)
	if len(b) > n {
		b = b[len(b)-n:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
		return "…" + string(b)
	}
	return string(b)
}

// cut shortens b to at most n bytes on a rune boundary, marking the cut.
func cut(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}
