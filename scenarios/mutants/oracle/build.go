package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// modulePath is the module the edits apply to; runnerPkg the command a
// source mutant is built from.
const (
	modulePath = "github.com/wsconverge/converge"
	runnerPkg  = modulePath + "/scenarios/mutants/oracle/internal/oraclerun"
)

// ErrUnavailable: source mutants cannot be built here (no Go toolchain,
// or no copy of the module's source).
var ErrUnavailable = errors.New("source mutants unavailable")

// Builder builds source mutants: each is internal/oraclerun compiled with
// `go build -overlay`, the overlay mapping each edited file to a patched
// copy in a private temporary directory. The Go build cache keeps the
// unedited packages, so a mutant recompiles only what its edits reach.
type Builder struct {
	goTool string
	root   string // the module root
	dir    string // patched files, overlays, binaries
	mu     sync.Mutex
	n      int
}

// NewBuilder finds the go command and the module's source: the directory
// this package was compiled from, else the working directory. Without
// either the error wraps ErrUnavailable and says why.
func NewBuilder(ctx context.Context) (*Builder, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("%w: no go command on PATH", ErrUnavailable)
	}
	var tried []string
	for _, dir := range sourceDirs() {
		root, err := moduleRoot(ctx, goTool, dir)
		if err == nil {
			tmp, err := os.MkdirTemp("", "oraclemutants-")
			if err != nil {
				return nil, fmt.Errorf("source mutants: %w", err)
			}
			return &Builder{goTool: goTool, root: root, dir: tmp}, nil
		}
		tried = append(tried, err.Error())
	}
	return nil, fmt.Errorf("%w: the source of %s is not here (%s)", ErrUnavailable, modulePath, strings.Join(tried, "; "))
}

// sourceDirs are where the module's source may be: this file's directory
// as compiled (absent from a binary built elsewhere or with -trimpath),
// then the working directory.
func sourceDirs() []string {
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	return dirs
}

// moduleRoot asks the go command for the main module of dir and returns
// its root when it is this module.
func moduleRoot(ctx context.Context, goTool, dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	cmd := exec.CommandContext(ctx, goTool, "list", "-m", "-f", "{{.Path}}\t{{.Dir}}")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: go list -m: %w", dir, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, root, ok := strings.Cut(line, "\t"); ok && path == modulePath && root != "" {
			return root, nil
		}
	}
	return "", fmt.Errorf("%s: not in module %s", dir, modulePath)
}

// Close removes the builder's temporary directory.
func (b *Builder) Close() error { return os.RemoveAll(b.dir) }

// Patch applies m's edits to copies of the files under root and returns
// the patched sources by file. Each snippet must occur exactly once in
// the file as the earlier edits left it, and the result must parse: a
// change of the reference that moves a snippet fails here, loudly.
func Patch(root string, m *SourceMutant) (map[string][]byte, error) {
	if len(m.Edits) == 0 {
		return nil, fmt.Errorf("mutant %s: no edits", m.name)
	}
	out := map[string][]byte{}
	for i, e := range m.Edits {
		src, ok := out[e.File]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File))); err != nil {
				return nil, fmt.Errorf("mutant %s: %w", m.name, err)
			}
		}
		if n := bytes.Count(src, []byte(e.Old)); n != 1 {
			return nil, fmt.Errorf("mutant %s, edit %d: the snippet occurs %d times in %s, want once (re-anchor it to the reference): %q",
				m.name, i+1, n, e.File, firstLine(e.Old))
		}
		out[e.File] = bytes.Replace(src, []byte(e.Old), []byte(e.New), 1)
	}
	for file, src := range out {
		if _, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution); err != nil {
			return nil, fmt.Errorf("mutant %s: the patched %s does not parse: %w", m.name, file, err)
		}
	}
	return out, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// Build patches m (nil: no edit, the reference itself) and compiles the
// runner with the patched files overlaid.
func (b *Builder) Build(ctx context.Context, m *SourceMutant) (*Built, error) {
	b.mu.Lock()
	b.n++
	dir := filepath.Join(b.dir, fmt.Sprintf("m%d", b.n))
	b.mu.Unlock()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("source mutants: %w", err)
	}
	name := "reference"
	args := []string{"build", "-o", filepath.Join(dir, "oraclerun")}
	if m != nil {
		name = m.name
		patched, err := Patch(b.root, m)
		if err != nil {
			return nil, err
		}
		overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
		i := 0
		for file, src := range patched {
			i++
			copyPath := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(file)))
			if err := os.WriteFile(copyPath, src, 0o644); err != nil {
				return nil, fmt.Errorf("mutant %s: %w", name, err)
			}
			overlay.Replace[filepath.Join(b.root, filepath.FromSlash(file))] = copyPath
		}
		js, err := json.Marshal(overlay)
		if err != nil {
			return nil, fmt.Errorf("mutant %s: overlay: %w", name, err)
		}
		ov := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(ov, js, 0o644); err != nil {
			return nil, fmt.Errorf("mutant %s: %w", name, err)
		}
		args = append(args, "-overlay", ov)
	}
	cmd := exec.CommandContext(ctx, b.goTool, append(args, runnerPkg)...)
	cmd.Dir = b.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mutant %s: go build: %w\n%s", name, err, tail(out, 2000))
	}
	return &Built{Name: name, bin: filepath.Join(dir, "oraclerun")}, nil
}

// tail is the last n bytes of b, as text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// BuildAll builds ms, GOMAXPROCS at a time; built[i] is ms[i]'s binary.
// The first failure is the error.
func (b *Builder) BuildAll(ctx context.Context, ms []*SourceMutant) ([]*Built, error) {
	built := make([]*Built, len(ms))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, m := range ms {
		g.Go(func() error {
			x, err := b.Build(ctx, m)
			built[i] = x
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return built, nil
}
