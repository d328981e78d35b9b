package driver

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
)

// DefaultTranscriptCap is how many bytes of a run's protocol transcript
// are kept as text, the first 2,000 of each message (the rest is kept as
// one hash per message).
const DefaultTranscriptCap = 64 << 20

// transcript is every protocol message of one run, in the order the
// single-threaded simulator exchanged them: a hash per message (to find
// the first difference between two runs) and the first maxShown bytes of
// each message's text while they fit in the cap (to show it). The text
// lives in blocks of textBlock bytes that are filled and never grown: a
// run's transcript is megabytes, and growing one slice by doubling copied
// it again and again.
type transcript struct {
	// mu: API calls of one run may be in progress in several goroutines
	// (the simulator handing control from one to the next).
	mu     sync.Mutex
	seed   maphash.Seed
	cap    int
	kept   int      // bytes of text kept
	blocks [][]byte // the text, message after message
	// where[i] is where message i's text is: its block, its start and
	// end in it, while kept.
	where  []span
	hashes []uint64
	// bytes counts every message's bytes, newlines included.
	bytes int64
}

type span struct{ block, start, end int32 }

// textBlock is the size of a block of transcript text.
const textBlock = 1 << 20

// Directions of a message.
const (
	toChild   = '>'
	fromChild = '<'
)

// newTranscript starts a transcript sized like like (the run before,
// nil for none): a run and its double record the same messages.
func newTranscript(seed maphash.Seed, cap int, like *transcript) *transcript {
	t := &transcript{seed: seed, cap: cap}
	if like != nil {
		like.mu.Lock()
		defer like.mu.Unlock()
		t.where = make([]span, 0, len(like.where))
		t.hashes = make([]uint64, 0, len(like.hashes))
	}
	return t
}

// add records one line exchanged with the child labelled label.
func (t *transcript) add(label string, dir byte, line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.WriteString(label)
	h.WriteByte(dir)
	h.Write(line)
	t.hashes = append(t.hashes, h.Sum64())
	t.bytes += int64(len(line)) + 1
	if len(line) > maxShown {
		// Only the start of a message is ever shown (message): a list of
		// rows need not be copied whole.
		line = line[:maxShown+1]
	}
	n := len(label) + len(line) + 3
	if len(t.where) != len(t.hashes)-1 || t.kept+n > t.cap {
		return
	}
	if len(t.blocks) == 0 || len(t.blocks[len(t.blocks)-1])+n > textBlock {
		t.blocks = append(t.blocks, make([]byte, 0, max(textBlock, n)))
	}
	b := &t.blocks[len(t.blocks)-1]
	sp := span{block: int32(len(t.blocks) - 1), start: int32(len(*b))}
	*b = append(*b, label...)
	*b = append(*b, ' ', dir, ' ')
	*b = append(*b, line...)
	sp.end = int32(len(*b))
	t.where = append(t.where, sp)
	t.kept += n
}

// Bytes is the number of bytes of the messages recorded.
func (t *transcript) Bytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

// Len is the number of messages recorded.
func (t *transcript) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.hashes)
}

// message renders message i: "coord-1#1 < {…}", or a placeholder past
// the cap.
func (t *transcript) message(i int) string {
	if i >= len(t.hashes) {
		return "(no message: the run had ended)"
	}
	if i >= len(t.where) {
		return "(not kept: past the transcript cap of " + strconv.Itoa(t.cap) + " bytes)"
	}
	sp := t.where[i]
	return cut(t.blocks[sp.block][sp.start:sp.end], maxShown)
}

// maxShown is how many bytes of a message a report shows.
const maxShown = 2000

// firstDifference describes where two runs' transcripts part, or "" when
// they are identical. Direction '<' is the child speaking: when the first
// difference is a child's message, that child answered the same
// conversation differently — it is not deterministic.
func firstDifference(a, b *transcript) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(a.hashes), len(b.hashes))
	for i := 0; i < n; i++ {
		if a.hashes[i] != b.hashes[i] {
			return fmt.Sprintf("the protocol transcripts part at message %d (> harness to child, < child to harness):\n  run 1: %s\n  run 2: %s",
				i+1, a.message(i), b.message(i))
		}
	}
	if len(a.hashes) != len(b.hashes) {
		return fmt.Sprintf("the protocol transcripts agree on %d messages, then run 1 has %d and run 2 has %d:\n  run 1: %s\n  run 2: %s",
			n, len(a.hashes), len(b.hashes), a.message(n), b.message(n))
	}
	return ""
}
