package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
)

// syncFromStaging makes the directory tree dataDir equal to its
// subdirectory staging (a single path element), then removes staging.
// Entries dataDir has and staging lacks, or has as another kind (directory,
// file, symbolic link), are deleted; everything else is moved in by rename,
// which replaces files and links atomically and moves a directory missing
// from dataDir in one step. Directories that stay get staging's permission
// bits. All access goes through an os.Root on dataDir, so nothing outside
// it is touched.
func syncFromStaging(dataDir, staging string) error {
	if staging == "" || staging == "." || path.Base(staging) != staging {
		return fmt.Errorf("staging %q must be one path element", staging)
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dataDir, err)
	}
	defer root.Close()
	s := syncer{root: root, staging: staging}
	if err := s.removeExtras("."); err != nil {
		return err
	}
	if err := s.moveIn("."); err != nil {
		return err
	}
	if err := root.RemoveAll(staging); err != nil {
		return fmt.Errorf("remove staging %s: %w", staging, err)
	}
	return nil
}

type syncer struct {
	root    *os.Root
	staging string
}

type kind int

const (
	kindDir kind = iota
	kindFile
	kindSymlink
	kindOther
)

func kindOf(m fs.FileMode) kind {
	switch {
	case m.IsDir():
		return kindDir
	case m.IsRegular():
		return kindFile
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	}
	return kindOther
}

// readDir lists a directory beneath the root, sorted by name.
func (s syncer) readDir(dir string) ([]fs.DirEntry, error) {
	f, err := s.root.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return entries, nil
}

// removeExtras deletes what dir (in the data tree) holds that staging does
// not hold as the same kind.
func (s syncer) removeExtras(dir string) error {
	entries, err := s.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if p == s.staging {
			continue
		}
		sfi, err := s.root.Lstat(path.Join(s.staging, p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("stat staged %s: %w", p, err)
		case kindOf(sfi.Mode()) == kindOf(e.Type()):
			if e.IsDir() {
				if err := s.removeExtras(p); err != nil {
					return err
				}
			}
			continue // a file or link is replaced when moved in
		}
		if err := s.root.RemoveAll(p); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return nil
}

// moveIn moves staging's dir into the data tree's dir.
func (s syncer) moveIn(dir string) error {
	entries, err := s.readDir(path.Join(s.staging, dir))
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		from := path.Join(s.staging, p)
		if e.IsDir() {
			dfi, err := s.root.Lstat(p)
			switch {
			case err == nil && dfi.IsDir():
				sfi, err := s.root.Lstat(from)
				if err != nil {
					return fmt.Errorf("stat staged %s: %w", p, err)
				}
				if dfi.Mode().Perm() != sfi.Mode().Perm() {
					if err := s.root.Chmod(p, sfi.Mode().Perm()); err != nil {
						return fmt.Errorf("chmod %s: %w", p, err)
					}
				}
				if err := s.moveIn(p); err != nil {
					return err
				}
				continue
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("stat %s: %w", p, err)
			}
		}
		if err := s.root.Rename(from, p); err != nil {
			return fmt.Errorf("move %s into place: %w", p, err)
		}
	}
	return nil
}
