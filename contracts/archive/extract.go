package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// ExtractTo extracts a tar.zst read from r into dir (created if missing),
// for the storage job's restore into a staging directory, within lim:
// it stops at the first entry that would take it past the quota
// (ErrQuotaExceeded) or past what the archive's .meta declares
// (ErrMetaMismatch), before writing that entry, and the decompressed
// stream is bounded too. Every file is created through an os.Root on dir,
// so no entry can reach outside it even through links; on top of that,
// unsafe entries are refused before anything is written for them
// (ErrUnsafeEntry): absolute names, ".." components, symbolic links whose
// target could leave the root, hard links to anything but a regular file
// extracted inside the root, entries beneath a symbolic link, sparse
// files, and device, character and FIFO entries. Owners and modification
// times are not restored; files keep their permission bits (owner read and
// write always set), directories are 0755. An existing file or link is
// replaced by an entry of the same name; an existing directory is not.
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
	x := extractor{root: root, dirs: make(map[string]bool), budget: budget{lim: lim}}
	tr := tar.NewReader(lim.bound(dec))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if err := x.budget.finish(); err != nil {
				return fmt.Errorf("archive: extract: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("archive: extract: %w", err)
		}
		if err := x.entry(tr, hdr); err != nil {
			return fmt.Errorf("archive: extract: %w", err)
		}
	}
}

// extractor writes entries beneath root. dirs caches the directories known
// to be real directories (not links): nothing here turns one into a link.
type extractor struct {
	root   *os.Root
	dirs   map[string]bool
	budget budget
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
		return x.mkdirs(name)
	case tar.TypeReg:
		if err := x.prepare(name, hdr.Name); err != nil {
			return err
		}
		perm := fs.FileMode(hdr.Mode).Perm() | 0o600
		f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		// Exactly the size the budget accounted: the entry's data is in the
		// stream (sparse entries were refused), and no more is read.
		if _, err := io.CopyN(f, tr, hdr.Size); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		return f.Close()
	case tar.TypeLink:
		target, err := entryPath(hdr.Linkname)
		if err != nil {
			return fmt.Errorf("hard link %q: %w", hdr.Name, err)
		}
		if err := x.checkDirs(path.Dir(target)); err != nil {
			return fmt.Errorf("hard link %q: %w", hdr.Name, err)
		}
		fi, err := x.root.Lstat(target)
		if err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: hard link %q to %q, which is not a regular file inside the root", ErrUnsafeEntry, hdr.Name, hdr.Linkname)
		}
		if err := x.prepare(name, hdr.Name); err != nil {
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
		if err := x.prepare(name, hdr.Name); err != nil {
			return err
		}
		return x.root.Symlink(hdr.Linkname, name)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return fmt.Errorf("%w: special file %q (type %q)", ErrUnsafeEntry, hdr.Name, hdr.Typeflag)
	}
	return fmt.Errorf("%w: %q has type %q", ErrUnsupportedEntry, hdr.Name, hdr.Typeflag)
}

// prepare makes name's parent directories and clears the way for a new
// non-directory entry at name: an existing file or link is removed, an
// existing directory is a conflict.
func (x *extractor) prepare(name, raw string) error {
	if name == "" {
		return fmt.Errorf("%w: entry %q names the root", ErrConflict, raw)
	}
	if dir := path.Dir(name); dir != "." {
		if err := x.mkdirs(dir); err != nil {
			return err
		}
	}
	if x.dirs[name] {
		return fmt.Errorf("%w: %q is a directory", ErrConflict, name)
	}
	fi, err := x.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: %q is a directory", ErrConflict, name)
	}
	return x.root.Remove(name)
}

// mkdirs makes p and its parents as real directories, refusing to pass
// through a symbolic link or a file.
func (x *extractor) mkdirs(p string) error {
	return x.walkDirs(p, true)
}

// checkDirs verifies p and its parents are real directories.
func (x *extractor) checkDirs(p string) error {
	if p == "." {
		return nil
	}
	return x.walkDirs(p, false)
}

func (x *extractor) walkDirs(p string, create bool) error {
	visit := func(dir string) error {
		if x.dirs[dir] {
			return nil
		}
		fi, err := x.root.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist) && create:
			if err := x.root.Mkdir(dir, dirMode); err != nil {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %q is a symbolic link", ErrUnsafeEntry, dir)
		case !fi.IsDir():
			return fmt.Errorf("%w: %q is not a directory", ErrConflict, dir)
		}
		x.dirs[dir] = true
		return nil
	}
	if err := parents(p, visit); err != nil {
		return err
	}
	return visit(p)
}
