package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// maxBody is the largest file a PUT accepts.
const maxBody = 16 << 20

// agent serves the home directory.
type agent struct {
	home string
	log  *slog.Logger
	seq  atomic.Uint64 // names temporary files
}

func newAgent(home string, log *slog.Logger) *agent {
	return &agent{home: home, log: log}
}

func (a *agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Routing is done here, not by http.ServeMux, which would answer a
	// path with ".." by a redirect to its cleaned form instead of a 400.
	p := r.URL.Path
	switch {
	case p == "/healthz":
		if !allow(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		a.healthz(w)
	case p == "/files" || p == "/files/":
		if !allow(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		a.list(w)
	case strings.HasPrefix(p, "/files/"):
		if !allow(w, r, http.MethodGet, http.MethodHead, http.MethodPut) {
			return
		}
		rel, err := checkPath(strings.TrimPrefix(p, "/files/"))
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if r.Method == http.MethodPut {
			a.put(w, r, rel)
		} else {
			a.get(w, r, rel)
		}
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+p)
	}
}

func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed")
	return false
}

// checkPath accepts a relative, clean, slash-separated file path.
func checkPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty file path")
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("file path %q is absolute", p)
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("file path contains a NUL byte")
	}
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "..":
			return "", fmt.Errorf("file path %q has a .. component", p)
		case "", ".":
			return "", fmt.Errorf("file path %q is not clean", p)
		}
	}
	return p, nil
}

// openHome opens the home as an os.Root: nothing reached through it can
// lie outside, symbolic links included.
func (a *agent) openHome() (*os.Root, error) {
	return os.OpenRoot(a.home)
}

func (a *agent) healthz(w http.ResponseWriter) {
	if err := a.probe(); err != nil {
		a.log.Warn("home not writable", "home", a.home, "err", err)
		writeError(w, http.StatusServiceUnavailable, "home not writable: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok")
}

// probe writes and removes a file in the home.
func (a *agent) probe() error {
	root, err := a.openHome()
	if err != nil {
		return err
	}
	defer root.Close()
	name := a.tempName("healthz")
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString("ok")
	cerr := f.Close()
	rerr := root.Remove(name)
	return errors.Join(werr, cerr, rerr)
}

func (a *agent) tempName(kind string) string {
	return fmt.Sprintf(".converge-agent-%s-%d-%d", kind, os.Getpid(), a.seq.Add(1))
}

func (a *agent) put(w http.ResponseWriter, r *http.Request, rel string) {
	if r.ContentLength > maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes exceeds %d", r.ContentLength, maxBody))
		return
	}
	root, err := a.openHome()
	if err != nil {
		a.fail(w, "open home", rel, err)
		return
	}
	defer root.Close()
	dir := path.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			a.fail(w, "create directories", rel, err)
			return
		}
	}
	created := true
	if fi, err := root.Lstat(rel); err == nil {
		if fi.IsDir() {
			writeError(w, http.StatusConflict, fmt.Sprintf("%s is a directory", rel))
			return
		}
		created = false
	}
	// Write beside the target, then rename: readers never see half a file.
	tmp := path.Join(dir, a.tempName("upload"))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		a.fail(w, "create", rel, err)
		return
	}
	n, err := io.Copy(f, http.MaxBytesReader(w, r.Body, maxBody))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", maxBody))
			return
		}
		a.fail(w, "write", rel, err)
		return
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		a.fail(w, "rename", rel, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, fileInfo{Path: rel, Size: n})
}

func (a *agent) get(w http.ResponseWriter, r *http.Request, rel string) {
	root, err := a.openHome()
	if err != nil {
		a.fail(w, "open home", rel, err)
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		a.fail(w, "open", rel, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		a.fail(w, "stat", rel, err)
		return
	}
	if !fi.Mode().IsRegular() {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is not a regular file", rel))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, f); err != nil {
		a.log.Warn("send file", "path", rel, "err", err)
	}
}

type fileInfo struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

type listing struct {
	Files []fileInfo `json:"files"`
}

// list returns every regular file under the home, in path order; symbolic
// links are not followed.
func (a *agent) list(w http.ResponseWriter) {
	root, err := a.openHome()
	if err != nil {
		a.fail(w, "open home", ".", err)
		return
	}
	defer root.Close()
	out := listing{Files: []fileInfo{}}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".converge-agent-") {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while listing
		}
		if err != nil {
			return err
		}
		out.Files = append(out.Files, fileInfo{Path: p, Size: fi.Size()})
		return nil
	})
	if err != nil {
		a.fail(w, "list", ".", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// fail answers a file-system error with the matching status.
func (a *agent) fail(w http.ResponseWriter, op, rel string, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		status = http.StatusNotFound
	case isEscape(err):
		status = http.StatusBadRequest
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, fs.ErrExist):
		status = http.StatusConflict
	case errors.Is(err, fs.ErrPermission):
		status = http.StatusForbidden
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		status = http.StatusInsufficientStorage
	}
	if status == http.StatusInternalServerError {
		a.log.Error("file operation failed", "op", op, "path", rel, "err", err)
	}
	writeError(w, status, fmt.Sprintf("%s %s: %v", op, rel, unwrapPath(err)))
}

// isEscape reports an os.Root refusal to leave the root (through a symbolic
// link pointing outside, or an absolute one). The os package does not export
// this error, so it is recognised by its text; the tests pin the behaviour.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// unwrapPath drops the *fs.PathError wrapper, whose path is the internal one.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
