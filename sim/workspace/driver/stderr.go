package driver

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
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

// stderrTap reads a child's standard error, splitting it at the markers a
// stderr_sync child writes before each message that ends an exchange. It
// has no goroutine of its own: the marker is in the pipe before the
// message that ends the exchange is on standard output, so sync finds it
// by reading what is there, with no hand-off between threads. A child
// that writes a lot never blocks on a full pipe for long: while the
// harness waits on its standard output the watchdog drains the standard
// error (proc.watch). What each exchange wrote is taken out when the
// exchange ends (sync), or, for a child that does not sync, when the
// process ends (rest).
type stderrTap struct {
	// mu: a session is used by one goroutine at a time, but an API
	// session goes from one goroutine to another.
	mu   sync.Mutex
	file *os.File // kept open (and from the finalizer) until close
	fd   int
	buf  []byte
	done []segment // completed by a marker, oldest first
	cur  segment
	eof  bool
	// skipNL: the byte before was a marker; a newline now belongs to it.
	skipNL bool
}

// newStderrTap reads the nonblocking descriptor fd of f.
func newStderrTap(f *os.File, fd int) *stderrTap { return &stderrTap{file: f, fd: fd} }

// drain reads what the pipe holds now, without waiting.
func (t *stderrTap) drain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf == nil {
		t.buf = make([]byte, 32<<10)
	}
	for !t.eof {
		n, err := unix.Read(t.fd, t.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil || n == 0:
			t.eof = true
			return
		}
		t.add(t.buf[:n])
		if n < len(t.buf) {
			// The pipe held less than the buffer: it is drained (a read
			// more would only say EAGAIN, a system call an exchange).
			return
		}
	}
}

// ended reports whether the stream has ended.
func (t *stderrTap) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.eof
}

// add splits b at markers; t.mu is held.
func (t *stderrTap) add(b []byte) {
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
		b = b[i+1:]
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

// sync returns what was written before the next marker, waiting for it
// (at most timeout) only when it is not in the pipe already.
func (t *stderrTap) sync(timeout time.Duration) (segment, error) {
	deadline := time.Now().Add(timeout)
	for {
		t.drain()
		t.mu.Lock()
		if len(t.done) > 0 {
			s := t.done[0]
			t.done = t.done[1:]
			t.mu.Unlock()
			return s, nil
		}
		eof := t.eof
		t.mu.Unlock()
		if eof || !waitReadable(t.fd, time.Until(deadline)) {
			return segment{}, errNoMarker
		}
	}
}

// rest waits (at most timeout) for the end of the stream and returns
// everything not taken yet; complete is false if the stream did not end.
func (t *stderrTap) rest(timeout time.Duration) (s segment, complete bool) {
	deadline := time.Now().Add(timeout)
	for {
		t.drain()
		if t.ended() || !waitReadable(t.fd, time.Until(deadline)) {
			break
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.takeAll(), t.eof
}

// close releases the pipe.
func (t *stderrTap) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.eof = true
	_ = t.file.Close()
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
