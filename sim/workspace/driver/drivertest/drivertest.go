package drivertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RequirePythonEnv names the variable that makes a missing Python 3 a test
// failure instead of a skip (CI and make test set it).
const RequirePythonEnv = "CONVERGE_REQUIRE_PYTHON"

var python struct {
	once sync.Once
	path string
	err  string
}

// Python is the path of the machine's Python 3 interpreter itself
// (sys.executable: a version manager's shim that forks a shell at every
// start would be measured instead of the child). Without one the test is
// skipped, with a message saying why, or fails when
// CONVERGE_REQUIRE_PYTHON=1.
func Python(t testing.TB) string {
	t.Helper()
	python.once.Do(func() {
		shim, err := exec.LookPath("python3")
		if err != nil {
			python.err = "python3 is not on PATH"
			return
		}
		out, err := exec.Command(shim, "-c", "import sys; assert sys.version_info >= (3, 9), sys.version; print(sys.executable)").Output()
		if err != nil {
			python.err = "python3 does not run, or is older than 3.9: " + err.Error()
			return
		}
		python.path = strings.TrimSpace(string(out))
	})
	if python.path == "" {
		if os.Getenv(RequirePythonEnv) == "1" {
			t.Fatalf("%s (%s=1: Python is required)", python.err, RequirePythonEnv)
		}
		t.Skipf("%s: skipped (set %s=1 to make this a failure)", python.err, RequirePythonEnv)
	}
	return python.path
}

var cache struct {
	once sync.Once
	dir  string
}

// PythonEnv is the environment for Python children: the harness's, with
// bytecode cached in a directory of the test binary's own (never in the
// source tree), so that a child does not compile its modules at every
// start.
func PythonEnv(t testing.TB) []string {
	t.Helper()
	cache.once.Do(func() {
		dir, err := os.MkdirTemp("", "converge-pycache-")
		if err == nil {
			cache.dir = dir
		}
	})
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONDONTWRITEBYTECODE=") && !strings.HasPrefix(kv, "PYTHONPYCACHEPREFIX=") {
			env = append(env, kv)
		}
	}
	if cache.dir != "" {
		env = append(env, "PYTHONPYCACHEPREFIX="+cache.dir)
	}
	return env
}

var builds struct {
	mu   sync.Mutex
	dir  string
	done map[string]string
}

// Build builds the Go main package pkg (an import path) once per test
// binary and returns the executable's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if p, ok := builds.done[pkg]; ok {
		return p
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "converge-children-")
		if err != nil {
			t.Fatalf("build %s: %v", pkg, err)
		}
		builds.dir, builds.done = dir, map[string]string{}
	}
	out := filepath.Join(builds.dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, stderr.String())
	}
	builds.done[pkg] = out
	return out
}

// Cleanup removes what the package made (call it from TestMain after
// m.Run).
func Cleanup() {
	if cache.dir != "" {
		_ = os.RemoveAll(cache.dir)
	}
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
}
