package layout

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// thirdPartyRoots are the packages a third party imports to judge its own
// system in the simulator: the CLI library its binary is built with
// (cli.Main), the conformance suite its go test runs, the world, the
// driver protocol and the vocabulary.
var thirdPartyRoots = []string{
	"cmd/converge/cli",
	"scenarios/conformance",
	"sim/workspace",
	"sim/workspace/driver",
	"sim/workspace/driver/client",
	"fakes/workspace",
	"contracts/...",
}

// realServices are the modules (a prefix of the import path) of the clients
// of real services and of the containers that run them, and this module's
// packages that use them: none may be in the closure of thirdPartyRoots
// (issue 24 item 6; docs/decisions/architecture.md, DR370).
var realServices = []string{
	"github.com/testcontainers/",
	"github.com/jackc/", // pgx, puddle, tern
	"github.com/minio/",
	"github.com/redis/",
	"github.com/moby/",
	"github.com/docker/",
	"github.com/prometheus/",
	module + "/refimpl/testenv",
	module + "/refimpl/workspace/pgstore",
	module + "/refimpl/workspace/redisbus",
	module + "/refimpl/workspace/s3objects",
	module + "/refimpl/workspace/dockerprov",
	module + "/refimpl/workspace/httpapi",
	module + "/sim/workspace/conform",
	module + "/cmd/converge/realcli",
}

func isRealService(path string) bool {
	for _, p := range realServices {
		if path == p || strings.HasPrefix(path, p) && (strings.HasSuffix(p, "/") || strings.HasPrefix(path[len(p):], "/")) {
			return true
		}
	}
	return false
}

// TestThirdPartiesPullNoServices: a module that imports only the packages
// a third party needs (a binary built with cli.Main, a go test running the
// conformance suite) compiles no client of PostgreSQL, Redis, MinIO or
// Docker and no testcontainers, so that go mod tidy there leaves them out.
// A failure names the chain of imports that brought one in.
func TestThirdPartiesPullNoServices(t *testing.T) {
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}
	for _, r := range thirdPartyRoots {
		args = append(args, module+"/"+r)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps")
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	require.Contains(t, imports, module+"/cmd/converge/cli")
	// Walk from the roots, remembering who imported what first.
	from := map[string]string{}
	var queue []string
	for p := range imports {
		if strings.HasPrefix(p, module+"/") && slices.ContainsFunc(thirdPartyRoots, func(r string) bool {
			r = module + "/" + r
			return p == r || strings.HasSuffix(r, "/...") && strings.HasPrefix(p, strings.TrimSuffix(r, "..."))
		}) {
			from[p] = ""
			queue = append(queue, p)
		}
	}
	slices.Sort(queue)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if isRealService(p) {
			chain := []string{p}
			for q := from[p]; q != ""; q = from[q] {
				chain = append([]string{q}, chain...)
			}
			t.Errorf("a third party's build pulls in %s: %s", p, strings.Join(chain, " -> "))
			continue
		}
		for _, imp := range imports[p] {
			if _, seen := from[imp]; !seen {
				from[imp] = p
				queue = append(queue, imp)
			}
		}
	}
}

// The example module shows the same from the outside: after go mod tidy its
// go.mod and go.sum name none of those modules (275 lines of go.sum before
// issue 24 item 6, 70 after).
func TestExampleModuleIsThin(t *testing.T) {
	for _, name := range []string{"go.mod", "go.sum"} {
		f, err := os.Open("../../examples/acme/" + name)
		require.NoError(t, err)
		s := bufio.NewScanner(f)
		var found []string
		for s.Scan() {
			for _, field := range strings.Fields(s.Text()) {
				if strings.Contains(field, ".") && isRealService(field+"/") && !slices.Contains(found, field) {
					found = append(found, field)
				}
			}
		}
		if len(found) > 0 {
			t.Errorf("examples/acme/%s names %s: run go mod tidy there, or see what pulls them in (TestThirdPartiesPullNoServices)", name, strings.Join(found, ", "))
		}
		require.NoError(t, s.Err())
		f.Close()
	}
}
