package archive

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Sentinel errors. Every error of this package that concerns the content of
// an archive wraps one of them.
var (
	// ErrUnsafeEntry: an entry that could reach outside the target (absolute
	// name, ".." component, escaping link, entry beneath a symbolic link) or
	// a device, character or FIFO entry.
	ErrUnsafeEntry = errors.New("archive: unsafe entry")
	// ErrUnsupportedEntry: an entry kind this reader does not extract (for
	// Unpack, any symbolic link, which a map of files cannot hold).
	ErrUnsupportedEntry = errors.New("archive: unsupported entry")
	// ErrConflict: an entry collides with another (a file where a
	// directory is needed, or the reverse).
	ErrConflict = errors.New("archive: conflicting entries")
	// ErrInvalidPath: a file path given to Pack is not a clean relative
	// slash-separated path.
	ErrInvalidPath = errors.New("archive: invalid path")
	// ErrChecksumMismatch: an archive does not match its .meta checksum.
	ErrChecksumMismatch = errors.New("archive: checksum mismatch")
	// ErrCorrupt: the data is no tar.zst at all (empty, not zstd, a
	// broken or truncated stream): whatever it held is lost, as with a
	// checksum mismatch.
	ErrCorrupt = errors.New("archive: corrupt")
)

// MaxDepth is the most components a path in an archive may have (a file
// 256 directories deep): a deeper entry is refused (ErrUnsafeEntry when
// reading, ErrInvalidPath when packing, so a tree that could not be
// restored is never archived). It bounds the work and the open
// directories one entry may cost an extraction.
const MaxDepth = 256

// depthError refuses a path of more than MaxDepth components.
func depthError(sentinel error, p string) error {
	if n := strings.Count(p, "/") + 1; n > MaxDepth {
		return fmt.Errorf("%w: a path %d components deep (at most %d): %.80q…", sentinel, n, MaxDepth, p)
	}
	return nil
}

// CheckPath reports whether p can name a file in a packed tree: relative,
// slash-separated, clean (no "", ".", ".." or empty components, no trailing
// slash) and free of NUL bytes.
func CheckPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", ErrInvalidPath)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: %q is absolute", ErrInvalidPath, p)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("%w: %q contains NUL", ErrInvalidPath, p)
	case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%w: %q is not clean", ErrInvalidPath, p)
	}
	return depthError(ErrInvalidPath, p)
}

// entryPath turns a tar entry name into a clean relative path; "" is the
// root itself ("./"). Absolute names, ".." components and NUL bytes are
// refused.
func entryPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty name", ErrUnsafeEntry)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: %q is absolute", ErrUnsafeEntry, name)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%w: %q contains NUL", ErrUnsafeEntry, name)
	}
	var b strings.Builder
	for part := range strings.SplitSeq(name, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("%w: %q has a .. component", ErrUnsafeEntry, name)
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(part)
	}
	if err := depthError(ErrUnsafeEntry, b.String()); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkLinkTarget refuses a symbolic link at name (a clean entry path) whose
// target could resolve outside the root. The target must be relative and of
// the form ("../")* followed by plain components: the leading ".." climb
// from the link's own directory (which has no symbolic link among its
// parents, as the readers enforce) and may not climb above the root; a ".."
// after a plain component could step back through another link, so it is
// refused too.
func checkLinkTarget(name, target string) error {
	if target == "" {
		return fmt.Errorf("%w: link %q has an empty target", ErrUnsafeEntry, name)
	}
	if strings.HasPrefix(target, "/") {
		return fmt.Errorf("%w: link %q has absolute target %q", ErrUnsafeEntry, name, target)
	}
	if strings.IndexByte(target, 0) >= 0 {
		return fmt.Errorf("%w: link %q target contains NUL", ErrUnsafeEntry, name)
	}
	depth := 0
	if dir := path.Dir(name); dir != "." {
		depth = strings.Count(dir, "/") + 1
	}
	up, plain := 0, false
	for part := range strings.SplitSeq(target, "/") {
		switch part {
		case "", ".":
		case "..":
			if plain {
				return fmt.Errorf("%w: link %q target %q steps back after descending", ErrUnsafeEntry, name, target)
			}
			up++
			if up > depth {
				return fmt.Errorf("%w: link %q target %q leaves the root", ErrUnsafeEntry, name, target)
			}
		default:
			plain = true
		}
	}
	return nil
}

// treeCompare orders paths so that a directory comes right before its
// contents: byte order with '/' below every other byte. This is the order
// filepath.WalkDir visits a tree in.
func treeCompare(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// parents calls fn with each proper parent directory of p, outermost first.
func parents(p string, fn func(dir string) error) error {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			if err := fn(p[:i]); err != nil {
				return err
			}
		}
	}
	return nil
}
