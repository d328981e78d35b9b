package driver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// portsMethods reads contracts/ports's source and lists every method of
// every interface it declares, as "Interface.Method": a method added to
// any port (or a new port) shows up here without anyone updating a list.
func portsMethods(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "contracts", "ports")
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, nil, parser.SkipObjectResolution) //nolint:staticcheck // SA1019: contracts/ports has no build tags, so ParseDir's blind spot cannot hide a method
	require.NoError(t, err)
	var out []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok {
					return true
				}
				for _, m := range it.Methods.List {
					for _, name := range m.Names {
						out = append(out, ts.Name.Name+"."+name.Name)
					}
				}
				return false
			})
		}
	}
	sort.Strings(out)
	return out
}

// Every method of every interface of contracts/ports is covered by the
// protocol: a port call with a handler here (and a client method), a
// request the harness sends, or answered locally with a reason. A method
// added to a port fails this test until the protocol has it.
func TestEveryPortMethodIsCoveredByTheProtocol(t *testing.T) {
	methods := portsMethods(t)
	require.Contains(t, methods, "Store.Get", "the parser found the ports")
	covered := map[string]wire.Method{}
	for _, m := range append(slices.Clone(wire.PortMethods), wire.HarnessMethods...) {
		key := m.Port + "." + m.Go
		_, dup := covered[key]
		require.False(t, dup, "%s is mapped twice", key)
		covered[key] = m
	}
	for _, key := range methods {
		m, ok := covered[key]
		require.True(t, ok, "ports method %s is not in the driver protocol: add it to wire.PortMethods (or wire.HarnessMethods), a handler in sim/workspace/driver/methods.go, the Go and Python clients and docs/driver-protocol.md", key)
		require.True(t, m.Name != "" || m.Local != "", "%s neither crosses nor says how it is answered", key)
		delete(covered, key)
	}
	require.Empty(t, covered, "mapped methods that are no longer in contracts/ports")

	// Each port call the child sends has exactly one handler, and each
	// handler is a documented port call.
	calls := map[string]bool{}
	for _, m := range wire.PortMethods {
		if m.Name == "" {
			continue
		}
		calls[m.Name] = true
		_, ok := handlers[m.Name]
		require.True(t, ok, "no handler for %s", m.Name)
	}
	for name := range handlers {
		require.True(t, calls[name], "handler %s is not in wire.PortMethods", name)
	}

	// The Python client makes every call (the Go client cannot compile
	// without implementing every port).
	py, err := os.ReadFile(filepath.Join("python", "converge_driver.py"))
	require.NoError(t, err)
	for name := range calls {
		require.Contains(t, string(py), `"`+name+`"`, "the Python client has no call %s", name)
	}
}
