package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits bound what one extraction may write (a restore, SPEC 5.3): a
// quota set by whoever runs it, and what the archive's own .meta declares.
// Extraction stops at the first entry that would go past either, before
// writing it.
type Limits struct {
	// MaxBytes is the quota on the regular-file bytes written (0: none).
	MaxBytes int64
	// MaxEntries is the quota on the entries extracted (0: none).
	MaxEntries int64
	// Declared is the archive's .meta; when it is Sized, the archive must
	// hold exactly the bytes and entries it declares.
	Declared *Meta
}

var (
	// ErrQuotaExceeded: the archive holds more than the restore's quota
	// allows (the storage job reports DISK_FULL).
	ErrQuotaExceeded = errors.New("archive: over the restore quota")
	// ErrMetaMismatch: the archive does not hold what its .meta declares
	// (the storage job reports CHECKSUM_MISMATCH: the archive lies about
	// itself, its data cannot be trusted).
	ErrMetaMismatch = errors.New("archive: does not match its .meta")
)

// entryOverhead is how much decompressed tar stream an entry may take
// besides its file bytes: headers, PAX records, long names, padding. The
// decompressed stream is bounded by it, so a stream of empty padding or
// huge headers cannot keep a restore busy either.
const entryOverhead = 16 << 10

// streamSlack is the decompressed stream allowed beyond the entries' share
// (the end-of-archive blocks, a global header).
const streamSlack = 1 << 20

// budget accounts an extraction against its Limits.
type budget struct {
	lim            Limits
	bytes, entries int64
}

// entry accounts one tar entry before anything is written for it: it
// refuses a sparse entry (converge never writes one, and a hole can
// declare terabytes in a few bytes), data carried by anything but a
// regular file, and an entry past a limit.
func (b *budget) entry(hdr *tar.Header) error {
	if hdr.Typeflag == tar.TypeGNUSparse || isPAXSparse(hdr) {
		return fmt.Errorf("%w: %q is a sparse file", ErrUnsafeEntry, hdr.Name)
	}
	size := int64(0)
	if hdr.Typeflag == tar.TypeReg {
		size = hdr.Size
	} else if hdr.Size != 0 && hdr.Typeflag != tar.TypeXGlobalHeader {
		return fmt.Errorf("%w: %q (type %q) carries %d bytes of data", ErrUnsupportedEntry, hdr.Name, hdr.Typeflag, hdr.Size)
	}
	if size < 0 {
		return fmt.Errorf("%w: %q has a negative size", ErrUnsafeEntry, hdr.Name)
	}
	b.entries++
	b.bytes += size
	if d := b.lim.Declared; d != nil && d.Sized && (b.entries > d.Entries || b.bytes > d.Bytes) {
		return fmt.Errorf("%w: more than the %d bytes in %d entries it declares (at %q)", ErrMetaMismatch, d.Bytes, d.Entries, hdr.Name)
	}
	if q := b.lim.MaxEntries; q > 0 && b.entries > q {
		return fmt.Errorf("%w: more than %d entries", ErrQuotaExceeded, q)
	}
	if q := b.lim.MaxBytes; q > 0 && b.bytes > q {
		return fmt.Errorf("%w: more than %d bytes (at %q, %d bytes)", ErrQuotaExceeded, q, hdr.Name, size)
	}
	return nil
}

// finish checks the whole archive against what its .meta declared.
func (b *budget) finish() error {
	if d := b.lim.Declared; d != nil && d.Sized && (b.entries != d.Entries || b.bytes != d.Bytes) {
		return fmt.Errorf("%w: %d bytes in %d entries, it declares %d in %d", ErrMetaMismatch, b.bytes, b.entries, d.Bytes, d.Entries)
	}
	return nil
}

// streamLimit is how much decompressed tar stream the limits allow, or 0
// for no bound; exceeding it is over the .meta's declaration when there is
// one, else over the quota.
func (l Limits) streamLimit() (n int64, over error) {
	if d := l.Declared; d != nil && d.Sized {
		return d.Bytes + d.Entries*entryOverhead + streamSlack, ErrMetaMismatch
	}
	if l.MaxBytes > 0 && l.MaxEntries > 0 {
		return l.MaxBytes + l.MaxEntries*entryOverhead + streamSlack, ErrQuotaExceeded
	}
	return 0, nil
}

// boundedReader fails with over once more than n bytes were read.
type boundedReader struct {
	r    io.Reader
	n    int64
	over error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n < 0 {
		return 0, b.over
	}
	if int64(len(p)) > b.n+1 {
		p = p[:b.n+1]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if b.n < 0 {
		return n, fmt.Errorf("%w: the decompressed stream is larger than it allows", b.over)
	}
	return n, err
}

// bound wraps r with the stream limit of l.
func (l Limits) bound(r io.Reader) io.Reader {
	n, over := l.streamLimit()
	if n == 0 {
		return r
	}
	return &boundedReader{r: r, n: n, over: over}
}

func isPAXSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}
