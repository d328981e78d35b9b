package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ExtractTo extracts a tar.zst read from r into dir (created if missing),
// for the storage job's restore into a staging directory, within lim:
// it stops at the first entry that would take it past the quota
// (ErrQuotaExceeded) or past what the archive's .meta declares
// (ErrMetaMismatch), before writing that entry, and the decompressed
// stream is bounded too. Every file is created through an os.Root on dir,
// so no entry can reach outside it even through links; on top of that,
// unsafe entries are refused before anything is written for them
// (ErrUnsafeEntry): absolute names, ".." components, paths deeper than
// MaxDepth, symbolic links whose target could leave the root, hard links
// to anything but a regular file extracted inside the root, entries
// beneath a symbolic link, sparse files, and device, character and FIFO
// entries. Data that is no tar.zst (empty, not zstd, a broken or
// truncated stream) is ErrCorrupt. Owners and modification times are not
// restored; files keep their permission bits (owner read and write always
// set), directories are 0755. An existing file or link is replaced by an
// entry of the same name; an existing directory is not.
//
// The work is linear in the archive: each entry is created relative to
// its own directory, held open from the entry before (an archive in tree
// order, as Pack writes, walks each directory once), so a deep path is
// never resolved again from the root.
func ExtractTo(r io.Reader, dir string, lim Limits) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("archive: extract: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("archive: extract: %w", err)
	}
	defer root.Close()
	dec, err := getStreamDecoder(r)
	if err != nil {
		return err
	}
	defer putStreamDecoder(dec)
	src := &sourceReader{r: dec}
	x := extractor{root: root, budget: budget{lim: lim}}
	defer x.closeDirs(0)
	tr := tar.NewReader(lim.bound(src))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) && src.n == 0 {
			return fmt.Errorf("archive: extract: %w: no tar.zst stream (empty)", ErrCorrupt)
		}
		if errors.Is(err, io.EOF) {
			if err := x.budget.finish(); err != nil {
				return fmt.Errorf("archive: extract: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("archive: extract: %w", src.corrupt(err))
		}
		if err := x.entry(tr, hdr); err != nil {
			return fmt.Errorf("archive: extract: %w", src.corrupt(err))
		}
	}
}

// sourceReader counts the decompressed bytes and keeps the decoder's own
// error: a failure of the stream itself is corruption, whatever the tar
// reader makes of it.
type sourceReader struct {
	r   io.Reader
	n   int64
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// corrupt marks err as ErrCorrupt when the stream broke (the decoder
// failed, the tar was malformed or ended inside an entry), and leaves the
// extraction's own refusals (limits, unsafe entries) as they are.
func (s *sourceReader) corrupt(err error) error {
	switch {
	case errors.Is(err, ErrMetaMismatch), errors.Is(err, ErrQuotaExceeded), errors.Is(err, ErrUnsafeEntry),
		errors.Is(err, ErrUnsupportedEntry), errors.Is(err, ErrConflict), errors.Is(err, ErrCorrupt):
		return err
	case s.err != nil, errors.Is(err, tar.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// extractor writes entries beneath root. open holds the directories of
// the last directory used, outermost first (open[i] is named by the first
// i+1 components of openNames), each checked to be a real directory (not
// a link) when it was opened: nothing here turns one into a link.
type extractor struct {
	root      *os.Root
	open      []*os.Root
	openNames []string
	budget    budget
}

// closeDirs closes the open directories from depth n on.
func (x *extractor) closeDirs(n int) {
	for i := len(x.open) - 1; i >= n; i-- {
		_ = x.open[i].Close()
	}
	x.open, x.openNames = x.open[:n], x.openNames[:n]
}

// dirOf returns directory p ("." or "" for the root) open, creating it and
// its parents when create is set, refusing to pass through a symbolic
// link or a file. Only the components that differ from the last
// directory used are looked at.
func (x *extractor) dirOf(p string, create bool) (*os.Root, error) {
	var parts []string
	if p != "." && p != "" {
		parts = strings.Split(p, "/")
	}
	keep := 0
	for keep < len(parts) && keep < len(x.openNames) && parts[keep] == x.openNames[keep] {
		keep++
	}
	x.closeDirs(keep)
	for _, part := range parts[keep:] {
		parent := x.root
		if n := len(x.open); n > 0 {
			parent = x.open[n-1]
		}
		fi, err := parent.Lstat(part)
		switch {
		case errors.Is(err, fs.ErrNotExist) && create:
			if err := parent.Mkdir(part, dirMode); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%w: %q is a symbolic link", ErrUnsafeEntry, strings.Join(append(x.openNames, part), "/"))
		case !fi.IsDir():
			return nil, fmt.Errorf("%w: %q is not a directory", ErrConflict, strings.Join(append(x.openNames, part), "/"))
		}
		sub, err := parent.OpenRoot(part)
		if err != nil {
			return nil, err
		}
		x.open, x.openNames = append(x.open, sub), append(x.openNames, part)
	}
	if len(x.open) == 0 {
		return x.root, nil
	}
	return x.open[len(x.open)-1], nil
}

func (x *extractor) entry(tr *tar.Reader, hdr *tar.Header) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil // PAX global metadata, not a file
	}
	if err := x.budget.entry(hdr); err != nil {
		return err
	}
	name, err := entryPath(hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if name == "" {
			return nil
		}
		_, err := x.dirOf(name, true)
		return err
	case tar.TypeReg:
		dir, base, err := x.prepare(name, hdr.Name)
		if err != nil {
			return err
		}
		perm := fs.FileMode(hdr.Mode).Perm() | 0o600
		f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		// Exactly the size the budget accounted: the entry's data is in the
		// stream (sparse entries were refused), and no more is read.
		if _, err := io.CopyN(f, tr, hdr.Size); err != nil {
			_ = f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	case tar.TypeLink:
		target, err := entryPath(hdr.Linkname)
		if err != nil {
			return fmt.Errorf("hard link %q: %w", hdr.Name, err)
		}
		tdir, err := x.dirOf(path.Dir(target), false)
		if err != nil {
			return fmt.Errorf("hard link %q: %w", hdr.Name, err)
		}
		fi, err := tdir.Lstat(path.Base(target))
		if target == "" || err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: hard link %q to %q, which is not a regular file inside the root", ErrUnsafeEntry, hdr.Name, hdr.Linkname)
		}
		if _, _, err := x.prepare(name, hdr.Name); err != nil {
			return err
		}
		return x.root.Link(target, name)
	case tar.TypeSymlink:
		if name == "" {
			return fmt.Errorf("%w: symbolic link %q names the root", ErrUnsafeEntry, hdr.Name)
		}
		if err := checkLinkTarget(name, hdr.Linkname); err != nil {
			return err
		}
		dir, base, err := x.prepare(name, hdr.Name)
		if err != nil {
			return err
		}
		return dir.Symlink(hdr.Linkname, base)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return fmt.Errorf("%w: special file %q (type %q)", ErrUnsafeEntry, hdr.Name, hdr.Typeflag)
	}
	return fmt.Errorf("%w: %q has type %q", ErrUnsupportedEntry, hdr.Name, hdr.Typeflag)
}

// prepare makes name's parent directories and clears the way for a new
// non-directory entry at name: an existing file or link is removed, an
// existing directory is a conflict. It returns name's directory, open,
// and name's last component.
func (x *extractor) prepare(name, raw string) (*os.Root, string, error) {
	if name == "" {
		return nil, "", fmt.Errorf("%w: entry %q names the root", ErrConflict, raw)
	}
	dir, err := x.dirOf(path.Dir(name), true)
	if err != nil {
		return nil, "", err
	}
	base := path.Base(name)
	fi, err := dir.Lstat(base)
	if errors.Is(err, fs.ErrNotExist) {
		return dir, base, nil
	}
	if err != nil {
		return nil, "", err
	}
	if fi.IsDir() {
		return nil, "", fmt.Errorf("%w: %q is a directory", ErrConflict, name)
	}
	return dir, base, dir.Remove(base)
}
