package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Header is the part of a replay file every world shares: which world and
// format it is, the system under test, the seed, the history hash the run
// recorded (a replay must match it) and what the run found. A world's
// replay file embeds it and adds its configuration and plan.
type Header struct {
	// World names the world ("workspace", "oracle"); Version its replay
	// format.
	World   string `json:"world,omitempty"`
	Version int    `json:"version"`
	// System is the system's name ("reference", "mutant:<name>", a third
	// party's); Mutant the mutant's name when it is one (then System is
	// "mutant:<Mutant>").
	System string `json:"system"`
	Mutant string `json:"mutant,omitempty"`
	Seed   uint64 `json:"seed"`
	// Hash is the history hash the run recorded.
	Hash string `json:"hash"`
	// Violations and Failures are what the run found; Kills, for a
	// mutant's kill, the checkers that flagged the mutant and not the
	// reference on the same run.
	Violations []string `json:"violations,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	Kills      []string `json:"kills,omitempty"`
}

// MutantPrefix starts the system name of a mutant.
const MutantPrefix = "mutant:"

// CheckSystem rejects a header whose system and mutant contradict each
// other.
func (h *Header) CheckSystem() error {
	switch {
	case h.System == "":
		return errors.New(`"system" is missing`)
	case h.Mutant != "" && h.System != MutantPrefix+h.Mutant:
		return fmt.Errorf("system %q contradicts mutant %q (a mutant's system is %q)", h.System, h.Mutant, MutantPrefix+h.Mutant)
	case h.Mutant == "" && strings.HasPrefix(h.System, MutantPrefix):
		return fmt.Errorf("system %q names a mutant but \"mutant\" is missing", h.System)
	}
	return nil
}

// CheckHash rejects a header whose hash no run records: a history hash is
// 32 lowercase hex digits (XXH3-128, record.HashSize), or 64 in a file
// written before (SHA-256, record.OldHash), which the replay then reports
// as from an older converge. Anything else is a hand edit or a corruption,
// and comparing it with a run would only say "hash differs".
func (h *Header) CheckHash() error {
	if h.Hash == "" {
		return errors.New(`"hash" is missing`)
	}
	hex := len(h.Hash) == 32 || len(h.Hash) == 64
	for i := 0; hex && i < len(h.Hash); i++ {
		c := h.Hash[i]
		hex = c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
	}
	if !hex {
		return fmt.Errorf("hash %.70q: a history hash is 32 lowercase hex digits", h.Hash)
	}
	return nil
}

// MaxReplayBytes bounds the size of a replay file read.
const MaxReplayBytes = 16 << 20

// ReadTimeout bounds the reading of one replay file.
const ReadTimeout = 30 * time.Second

// ReadFile reads a replay file: a regular file only (a FIFO, a device, a
// socket or a directory is refused before it is opened: opening a FIFO
// blocks until someone writes to it), at most MaxReplayBytes of it (one
// byte more is "too large": a sparse or growing file is never read whole),
// within ReadTimeout. Every refusal wraps ErrBadInput and names the file.
func ReadFile(path string) ([]byte, error) {
	return readFile(path, MaxReplayBytes, ReadTimeout)
}

func readFile(path string, limit int64, timeout time.Duration) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if err := regular(path, fi, limit); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path have become a FIFO since the Stat, the
	// open does not wait for a writer (and the Stat of the open file
	// below refuses it).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadInput, path, err)
	}
	if err := regular(path, fi, limit); err != nil {
		return nil, err
	}
	data, err := readWithin(f, limit, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadInput, path, err)
	}
	return data, nil
}

// regular refuses a file that is not a regular one, or larger than limit.
func regular(path string, fi os.FileInfo, limit int64) error {
	if m := fi.Mode(); !m.IsRegular() {
		kind := "not a regular file"
		switch {
		case m.IsDir():
			kind = "a directory"
		case m&os.ModeNamedPipe != 0:
			kind = "a named pipe (FIFO)"
		case m&os.ModeDevice != 0:
			kind = "a device"
		case m&os.ModeSocket != 0:
			kind = "a socket"
		}
		return fmt.Errorf("%w: %s is %s: want a regular replay file", ErrBadInput, path, kind)
	}
	if fi.Size() > limit {
		return fmt.Errorf("%w: %s is too large (%d bytes; a replay file has at most %d)", ErrBadInput, path, fi.Size(), limit)
	}
	return nil
}

// readWithin reads r to its end, at most limit bytes ("too large" beyond)
// and within timeout. A read that is still blocked at the timeout is left
// to finish on its own (the caller closes the file).
func readWithin(r io.Reader, limit int64, timeout time.Duration) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		done <- result{data, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		switch {
		case res.err != nil:
			return nil, res.err
		case int64(len(res.data)) > limit:
			return nil, fmt.Errorf("too large (more than %d bytes)", limit)
		}
		return res.data, nil
	case <-timer.C:
		return nil, fmt.Errorf("not read within %s", timeout)
	}
}

// ErrBadInput marks input (a flag, a file) that is malformed or out of
// range: the CLI answers it with exit status 2.
var ErrBadInput = errors.New("bad input")

// DecodeStrict decodes one JSON value from r into v: unknown fields,
// trailing data and input over MaxReplayBytes are errors (wrapping
// ErrBadInput), so a typo in a hand-edited file never passes silently.
func DecodeStrict(r io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxReplayBytes+1))
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if len(data) > MaxReplayBytes {
		return fmt.Errorf("%w: larger than %d bytes", ErrBadInput, MaxReplayBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON value", ErrBadInput)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: trailing data after the JSON value", ErrBadInput)
	}
	return nil
}

// DefaultReplayDir is where replay files go unless told otherwise: a
// per-user directory ($XDG_STATE_HOME/converge/replays, or
// ~/.local/state/converge/replays), else the current directory.
func DefaultReplayDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "converge", "replays")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "converge", "replays")
	}
	return "."
}

// SafeName turns s into a file-name-safe string (letters, digits, '-'
// and '_'; anything else becomes '-').
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			b[i] = '-'
		}
	}
	return string(b)
}

// WriteNew writes v as indented JSON into dir under base (".json" added),
// never overwriting a file: when base.json exists it tries base-2.json,
// base-3.json, …; a file already holding exactly these bytes is reused.
// It returns the path written (or reused).
func WriteNew(dir, base string, v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", base, err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	for n := 1; n < 10000; n++ {
		name := base + ".json"
		if n > 1 {
			name = base + "-" + strconv.Itoa(n) + ".json"
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			// The same bytes are the same run written again (a rerun of a
			// seed, or rapid reproducing a failure): reuse that file, so a
			// run's report names one file however often it is written.
			if old, rerr := os.ReadFile(path); rerr == nil && bytes.Equal(old, b) {
				return path, nil
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if _, err := f.Write(b); err != nil {
			_ = f.Close()
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("write %s: too many files named %s-N.json", dir, base)
}

// WithoutUserState runs run (a test binary's m.Run) with XDG_STATE_HOME
// pointing at a fresh temporary directory, so that nothing a test does
// reaches the user's own state directory (DefaultReplayDir, which is for
// people running converge), and turns a passing run into a failing one
// (exit 1, naming the files) when anything was written there: a test
// passes a directory of its own (t.TempDir()) instead. Child processes
// the tests start inherit the variable.
func WithoutUserState(run func() int) int {
	dir, err := os.MkdirTemp("", "converge-state-guard-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "state guard: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("XDG_STATE_HOME", dir); err != nil {
		fmt.Fprintf(os.Stderr, "state guard: %v\n", err)
		return 1
	}
	code := run()
	var written []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			written = append(written, strings.TrimPrefix(p, dir+string(filepath.Separator)))
		}
		return nil
	})
	if len(written) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "FAIL: the tests wrote %d file(s) into the per-user state directory (converge's default replay directory): %s; pass a directory of the test's own (t.TempDir())\n",
		len(written), strings.Join(written[:min(len(written), 5)], ", "))
	return max(code, 1)
}
