package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// epoch is the modification time of every packed entry.
var epoch = time.Unix(0, 0).UTC()

const (
	fileMode = 0o644
	execMode = 0o755
	dirMode  = 0o755
	linkMode = 0o777
)

// Pack returns the tar.zst of a file tree given as slash-separated relative
// paths (see CheckPath) to contents. Parent directories are implied. The
// same map always yields the same bytes, equal to PackDir's of the same
// tree of non-executable files.
func Pack(files map[string][]byte) ([]byte, error) {
	data, _, err := PackMeta(files)
	return data, err
}

// PackMeta is Pack, also returning the archive's extended .meta.
func PackMeta(files map[string][]byte) ([]byte, Meta, error) {
	data, stats, err := pack(files)
	if err != nil {
		return nil, Meta{}, err
	}
	sum := sha256.Sum256(data)
	stats.SHA256 = hex.EncodeToString(sum[:])
	return data, stats, nil
}

func pack(files map[string][]byte) ([]byte, Meta, error) {
	stats := Meta{Sized: true}
	names := make([]string, 0, len(files))
	for p := range files {
		if err := CheckPath(p); err != nil {
			return nil, Meta{}, err
		}
		names = append(names, p)
	}
	slices.SortFunc(names, treeCompare)
	var buf bytes.Buffer
	enc, err := getEncoder(&buf)
	if err != nil {
		return nil, Meta{}, err
	}
	tw := tarCounter{tar.NewWriter(enc), &stats}
	written := make(map[string]bool) // directories already emitted
	for _, p := range names {
		err := parents(p, func(dir string) error {
			if _, isFile := files[dir]; isFile {
				return fmt.Errorf("%w: %q is a file and a directory", ErrConflict, dir)
			}
			if written[dir] {
				return nil
			}
			written[dir] = true
			return tw.WriteHeader(dirHeader(dir))
		})
		if err != nil {
			putEncoder(enc)
			return nil, Meta{}, fmt.Errorf("archive: pack: %w", err)
		}
		data := files[p]
		if err := tw.WriteHeader(fileHeader(p, int64(len(data)), fileMode)); err != nil {
			putEncoder(enc)
			return nil, Meta{}, fmt.Errorf("archive: pack %q: %w", p, err)
		}
		if _, err := tw.Write(data); err != nil {
			putEncoder(enc)
			return nil, Meta{}, fmt.Errorf("archive: pack %q: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		putEncoder(enc)
		return nil, Meta{}, fmt.Errorf("archive: pack: %w", err)
	}
	if err := enc.Close(); err != nil {
		putEncoder(enc)
		return nil, Meta{}, fmt.Errorf("archive: pack: %w", err)
	}
	putEncoder(enc)
	return buf.Bytes(), stats, nil
}

// PackDir writes the tar.zst of the directory tree under root to w and
// returns its extended .meta (the hex SHA-256 of the bytes written, and
// what they unpack to). Regular files keep only their executable bit (0755
// or 0644), directories are 0755, symbolic links are kept as links with
// their target verbatim, and sockets, devices and FIFOs are skipped. Hard
// links are stored as separate copies.
func PackDir(root string, w io.Writer) (Meta, error) {
	h := sha256.New()
	enc, err := getEncoder(io.MultiWriter(w, h))
	if err != nil {
		return Meta{}, err
	}
	defer putEncoder(enc)
	stats := Meta{Sized: true}
	tw := tarCounter{tar.NewWriter(enc), &stats}
	err = filepath.WalkDir(root, func(full string, d fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			return walkErr
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		if rel == "." {
			if !d.IsDir() {
				return fmt.Errorf("%s is not a directory", root)
			}
			return nil
		}
		name := filepath.ToSlash(rel)
		if err := depthError(ErrInvalidPath, name); err != nil {
			return err
		}
		switch t := d.Type(); {
		case t.IsDir():
			return tw.WriteHeader(dirHeader(name))
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{
				Typeflag: tar.TypeSymlink, Name: name, Linkname: target,
				Mode: linkMode, ModTime: epoch,
			})
		case t.IsRegular():
			return packFile(tw, full, name)
		}
		return nil // socket, device, FIFO, irregular: skipped
	})
	if err != nil {
		return Meta{}, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	if err := tw.Close(); err != nil {
		return Meta{}, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	if err := enc.Close(); err != nil {
		return Meta{}, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	stats.SHA256 = hex.EncodeToString(h.Sum(nil))
	return stats, nil
}

func packFile(tw tarCounter, full, name string) error {
	f, err := os.Open(full)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil // replaced by something else since the walk listed it
	}
	mode := int64(fileMode)
	if fi.Mode().Perm()&0o111 != 0 {
		mode = execMode
	}
	size := fi.Size()
	if err := tw.WriteHeader(fileHeader(name, size, mode)); err != nil {
		return err
	}
	n, err := io.CopyN(tw, f, size)
	if err != nil {
		return fmt.Errorf("%s: read %d of %d bytes (changed while packing?): %w", name, n, size, err)
	}
	return nil
}

func dirHeader(name string) *tar.Header {
	if !strings.HasSuffix(name, "/") {
		name += "/"
	}
	return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: dirMode, ModTime: epoch}
}

func fileHeader(name string, size, mode int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode, ModTime: epoch}
}

// tarCounter is a tar.Writer that counts what it writes as a restore
// counts it (Meta's Entries and Bytes).
type tarCounter struct {
	*tar.Writer
	meta *Meta
}

func (t tarCounter) WriteHeader(h *tar.Header) error {
	t.meta.Entries++
	if h.Typeflag == tar.TypeReg {
		t.meta.Bytes += h.Size
	}
	return t.Writer.WriteHeader(h)
}
