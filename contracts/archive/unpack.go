package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
)

// Unpack reads a tar.zst into a map of file paths to contents (the in-memory
// twin of ExtractTo, for the fakes), with no limits but the memory bound of
// its decompression. Directories are implied by the paths; a hard link
// becomes a copy of its target (their copies together are bounded like the
// decompression). Unsafe entries, sparse files included, are refused with
// ErrUnsafeEntry; a symbolic link that stays inside the root cannot be held
// in a map and is refused with ErrUnsupportedEntry.
func Unpack(data []byte) (map[string][]byte, error) { return UnpackWithin(data, Limits{}) }

// UnpackWithin is Unpack within lim, as ExtractTo: a restore in memory.
func UnpackWithin(data []byte, lim Limits) (map[string][]byte, error) {
	raw, err := decodeAll(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("archive: unpack: %w: no tar.zst stream (empty)", ErrCorrupt)
	}
	if n, over := lim.streamLimit(); n > 0 && int64(len(raw)) > n {
		return nil, fmt.Errorf("archive: unpack: %w: the decompressed stream is larger than it allows", over)
	}
	b := budget{lim: lim}
	copied := 0 // bytes duplicated for hard links
	tr := tar.NewReader(bytes.NewReader(raw))
	files := make(map[string][]byte)
	dirs := make(map[string]bool)
	// addDirs records p's parents (and p when self is set) as
	// directories, innermost first, stopping at the first one already
	// known: its own parents were recorded with it, so each directory is
	// looked at once however many entries lie beneath it.
	addDirs := func(p string, self bool) error {
		dir := p
		if !self {
			dir = path.Dir(p)
		}
		for dir != "." && !dirs[dir] {
			if _, isFile := files[dir]; isFile {
				return fmt.Errorf("%w: %q is a file and a directory", ErrConflict, dir)
			}
			dirs[dir] = true
			dir = path.Dir(dir)
		}
		return nil
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if err := b.finish(); err != nil {
				return nil, fmt.Errorf("archive: unpack: %w", err)
			}
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("archive: unpack: %w: %w", ErrCorrupt, err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // PAX global metadata, not a file
		}
		if err := b.entry(hdr); err != nil {
			return nil, fmt.Errorf("archive: unpack: %w", err)
		}
		name, err := entryPath(hdr.Name)
		if err != nil {
			return nil, fmt.Errorf("archive: unpack: %w", err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if name != "" {
				if err := addDirs(name, true); err != nil {
					return nil, fmt.Errorf("archive: unpack: %w", err)
				}
			}
		case tar.TypeReg, tar.TypeLink:
			if name == "" {
				return nil, fmt.Errorf("archive: unpack: %w: file entry %q names the root", ErrConflict, hdr.Name)
			}
			if dirs[name] {
				return nil, fmt.Errorf("archive: unpack: %w: %q is a directory and a file", ErrConflict, name)
			}
			if err := addDirs(name, false); err != nil {
				return nil, fmt.Errorf("archive: unpack: %w", err)
			}
			var content []byte
			if hdr.Typeflag == tar.TypeLink {
				content, err = linkedContent(files, name, hdr.Linkname)
				if copied += len(content); err == nil && copied > maxDecoded {
					err = fmt.Errorf("%w: hard links copy more than %d bytes", ErrUnsupportedEntry, maxDecoded)
				}
			} else if content, err = readEntry(tr, hdr, len(raw)); errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			if err != nil {
				return nil, fmt.Errorf("archive: unpack: %w", err)
			}
			files[name] = content
		case tar.TypeSymlink:
			if err := checkLinkTarget(name, hdr.Linkname); err != nil {
				return nil, fmt.Errorf("archive: unpack: %w", err)
			}
			return nil, fmt.Errorf("archive: unpack: %w: symbolic link %q", ErrUnsupportedEntry, name)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return nil, fmt.Errorf("archive: unpack: %w: special file %q (type %q)", ErrUnsafeEntry, hdr.Name, hdr.Typeflag)
		default:
			return nil, fmt.Errorf("archive: unpack: %w: %q has type %q", ErrUnsupportedEntry, hdr.Name, hdr.Typeflag)
		}
	}
}

// readEntry reads a regular entry, refusing a declared size larger than the
// whole decompressed archive (which would otherwise allocate unboundedly).
func readEntry(tr *tar.Reader, hdr *tar.Header, limit int) ([]byte, error) {
	if hdr.Size < 0 || hdr.Size > int64(limit) {
		return nil, fmt.Errorf("entry %q: size %d exceeds the archive", hdr.Name, hdr.Size)
	}
	buf := make([]byte, hdr.Size)
	if _, err := io.ReadFull(tr, buf); err != nil {
		return nil, fmt.Errorf("entry %q: %w", hdr.Name, err)
	}
	return buf, nil
}

// linkedContent resolves a hard link to a file unpacked before it.
func linkedContent(files map[string][]byte, name, linkname string) ([]byte, error) {
	target, err := entryPath(linkname)
	if err != nil {
		return nil, fmt.Errorf("hard link %q: %w", name, err)
	}
	content, ok := files[target]
	if !ok {
		return nil, fmt.Errorf("%w: hard link %q to %q, which is not a file of the archive", ErrUnsafeEntry, name, linkname)
	}
	return slices.Clone(content), nil
}
