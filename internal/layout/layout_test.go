package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/wsconverge/converge"

// room is a package's place in the house: its top folder and, below the
// shared floors, its world.
type room struct{ top, world string }

func roomOf(rel string) room {
	parts := strings.Split(rel, "/")
	r := room{top: parts[0]}
	worldAt := map[string]int{"judge": 1, "sim": 1, "fakes": 1, "refimpl": 1, "contracts": 1}
	if i, ok := worldAt[r.top]; ok && len(parts) > i {
		switch parts[i] {
		case "workspace", "oracle":
			r.world = parts[i]
		}
	}
	if r.top == "scenarios" && len(parts) > 2 && parts[1] == "mutants" {
		r.world = parts[2]
	}
	if r.top == "wire" {
		r.world = "oracle" // the oracle's wire codecs
	}
	return r
}

// may lists, per top folder, the top folders its non-test code may import
// (docs/architecture.md draws the same floors).
var may = map[string][]string{
	"internal":  {},
	"contracts": {"contracts"},
	"wire":      {"wire", "contracts"},
	"judge":     {"judge", "contracts", "wire"},
	"fakes":     {"fakes", "contracts", "wire", "internal"},
	"refimpl":   {"refimpl", "contracts", "wire"},
	"sim":       {"sim", "judge", "fakes", "contracts", "wire", "internal"},
	"scenarios": {"scenarios", "sim", "judge", "fakes", "refimpl", "contracts", "wire", "internal"},
	"cmd":       {"cmd", "scenarios", "sim", "judge", "fakes", "refimpl", "contracts", "wire", "internal"},
	"examples":  {"cmd", "scenarios", "sim", "judge", "fakes", "refimpl", "contracts", "wire", "internal"},
}

// shared lists the packages both worlds build on: the rest of a world's
// room never imports the other world's.
func crossesWorlds(from, to room, toRel string) bool {
	if from.world == "" || to.world == "" {
		return false
	}
	return from.world != to.world
}

// known lists the imports that still break a rule, each with the change
// that removes it. The test fails on any other, and on a listed one that
// no longer exists (so the list only shrinks).
var known = map[string]string{
	"sim/workspace/conform -> refimpl/testenv":           "the drill starts real services with the real tier's starter: it moves up to a floor that may import refimpl (it is reached only from cmd/converge/realcli, never from a third party's build: docs/decisions/architecture.md, DR370)",
	"sim/workspace/conform -> refimpl/workspace/pgstore": "the drill reads PostgreSQL's audit trail with the real tier's reader: goes with the drill",
	"sim/workspace/conform -> refimpl/workspace/runner":  "the drill's wall clock for that reader: goes with it",
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		err := dec.Decode(&p)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestNoImportRunsUp checks every package's non-test imports against the
// floors of may and the separation of the two worlds.
func TestNoImportRunsUp(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		from := roomOf(rel)
		allowed, ok := may[from.top]
		require.True(t, ok, "%s: top folder %q has no rule in layout_test.go (and docs/architecture.md)", rel, from.top)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			to := roomOf(irel)
			edge := rel + " -> " + irel
			var why string
			switch {
			case !contains(allowed, to.top):
				why = "runs up: " + from.top + " may import only " + strings.Join(allowed, ", ")
			case from.world == "" && (from.top == "judge" || from.top == "sim") && to.world != "":
				why = "a shared core imports a world: " + to.world
			case crossesWorlds(from, to, irel) && from.top != "cmd" && !(from.top == "scenarios" && path.Base(rel) == "conformance"):
				why = "crosses worlds: " + from.world + " imports " + to.world
			}
			if why == "" {
				continue
			}
			if _, ok := known[edge]; ok {
				seen[edge] = true
				continue
			}
			t.Errorf("%s: %s", edge, why)
		}
	}
	for edge, fix := range known {
		if !seen[edge] {
			t.Errorf("known exception %q no longer exists (%s): remove it from the list", edge, fix)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
