package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Meta is the content of an archive's .meta object, its commit marker
// (SPEC 1.4): the archive's checksum, and — in the extended format — what
// the archive unpacks to, so a restore can refuse an archive that holds
// more than it says before it fills a disk.
//
// Encoded, the first line is the checksum exactly as before,
// "sha256:<hex>"; the extended format adds "bytes=N" and "entries=N" lines.
// A .meta of the original format (the checksum alone) still parses, with
// Sized false: it declares nothing. Unknown "key=value" lines are ignored,
// for later extensions.
type Meta struct {
	// SHA256 is the hex SHA-256 of the .tar.zst bytes.
	SHA256 string
	// Sized reports whether Bytes and Entries were declared.
	Sized bool
	// Bytes is the sum of the sizes of the archive's regular files.
	Bytes int64
	// Entries is the number of its tar entries (files, directories, links).
	Entries int64
}

// Checksum is the commit-marker content of an archive: "sha256:<hex>".
func Checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Encode renders m as .meta content.
func (m Meta) Encode() []byte {
	s := "sha256:" + m.SHA256
	if m.Sized {
		s += "\nbytes=" + strconv.FormatInt(m.Bytes, 10) + "\nentries=" + strconv.FormatInt(m.Entries, 10) + "\n"
	}
	return []byte(s)
}

// ParseMeta reads .meta content of either format (surrounding white space
// ignored). A malformed .meta wraps ErrChecksumMismatch: the archive cannot
// be trusted.
func ParseMeta(b []byte) (Meta, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	first := strings.TrimSpace(lines[0])
	hexSum, ok := strings.CutPrefix(first, "sha256:")
	if !ok || len(hexSum) != 2*sha256.Size {
		return Meta{}, fmt.Errorf("%w: malformed meta (%d bytes)", ErrChecksumMismatch, len(b))
	}
	if _, err := hex.DecodeString(hexSum); err != nil {
		return Meta{}, fmt.Errorf("%w: malformed meta checksum", ErrChecksumMismatch)
	}
	m := Meta{SHA256: strings.ToLower(hexSum)}
	var haveBytes, haveEntries bool
	for _, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return Meta{}, fmt.Errorf("%w: malformed meta line", ErrChecksumMismatch)
		}
		switch key {
		case "bytes", "entries":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				return Meta{}, fmt.Errorf("%w: malformed meta %s", ErrChecksumMismatch, key)
			}
			if key == "bytes" {
				m.Bytes, haveBytes = n, true
			} else {
				m.Entries, haveEntries = n, true
			}
		}
	}
	if haveBytes != haveEntries {
		return Meta{}, fmt.Errorf("%w: meta declares bytes or entries without the other", ErrChecksumMismatch)
	}
	m.Sized = haveBytes
	return m, nil
}

// VerifyMeta checks archive data against the content of its .meta object
// (either format). A mismatch or a malformed meta wraps ErrChecksumMismatch.
func VerifyMeta(data, meta []byte) error {
	m, err := ParseMeta(meta)
	if err != nil {
		return err
	}
	return m.verify(Checksum(data))
}

// VerifySum compares the hex SHA-256 of an archive read elsewhere with m.
func (m Meta) VerifySum(sha256Hex string) error { return m.verify("sha256:" + sha256Hex) }

func (m Meta) verify(got string) error {
	if want := "sha256:" + m.SHA256; got != want {
		return fmt.Errorf("%w: archive is %s, meta says %s", ErrChecksumMismatch, got, want)
	}
	return nil
}

// MetaOf computes the extended .meta of archive data: its checksum and what
// it unpacks to, counted as a restore counts (regular-file bytes, entries).
func MetaOf(data []byte) (Meta, error) {
	sum := sha256.Sum256(data)
	m := Meta{SHA256: hex.EncodeToString(sum[:]), Sized: true}
	raw, err := decodeAll(data)
	if err != nil {
		return Meta{}, err
	}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return Meta{}, fmt.Errorf("archive: meta: %w", err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		m.Entries++
		if hdr.Typeflag == tar.TypeReg {
			m.Bytes += hdr.Size
		}
	}
}
