package driver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/contracts/ports"
	wssim "github.com/wsconverge/converge/sim/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/drivertest"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// docExample is one example of docs/driver-protocol.md: a fenced block
// after an <!-- example: KIND --> comment.
type docExample struct {
	kind string
	text string
	line int
}

var exampleRE = regexp.MustCompile("(?s)<!-- example: ([a-z]+) -->\n```[a-z]*\n(.*?)```")

func docExamples(t *testing.T) []docExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "driver-protocol.md"))
	require.NoError(t, err)
	var out []docExample
	for _, m := range exampleRE.FindAllSubmatchIndex(b, -1) {
		out = append(out, docExample{kind: string(b[m[2]:m[3]]), text: string(b[m[4]:m[5]]),
			line: strings.Count(string(b[:m[0]]), "\n") + 1})
	}
	return out
}

// childTypes are the message types a child sends.
var childTypes = []string{wire.TReady, wire.TCall, wire.TBatch, wire.TNote, wire.TDone}

// Every example of the protocol's document is what it says it is: each
// message decodes strictly in its direction with valid contents, each
// value as its type with valid enums, and the hand-written child runs
// (TestTheDocumentsChildRuns).
func TestTheDocumentsExamples(t *testing.T) {
	kinds := map[string]int{}
	var row []byte // the last workspace example: what a changes example changes
	for _, ex := range docExamples(t) {
		kinds[ex.kind]++
		at := func(what string) string { return "docs/driver-protocol.md:" + strconv.Itoa(ex.line) + ": " + what }
		switch ex.kind {
		case "messages":
			for _, line := range strings.Split(strings.TrimSpace(ex.text), "\n") {
				checkDocMessage(t, []byte(line), at(line))
			}
		case "workspace":
			var w wire.Workspace
			require.NoError(t, wire.Strict([]byte(ex.text), &w), at("workspace"))
			_, err := w.Contracts()
			require.NoError(t, err, at("workspace"))
			row = []byte(strings.TrimSpace(ex.text))
		case "changes":
			checkDocChanges(t, row, []byte(strings.TrimSpace(ex.text)), at("changes"))
		case "patch":
			var p wire.Patch
			require.NoError(t, json.Unmarshal([]byte(ex.text), &p), at("patch"))
		case "cond":
			var c wire.Cond
			require.NoError(t, wire.Strict([]byte(ex.text), &c), at("cond"))
			_, err := c.Contracts()
			require.NoError(t, err, at("cond"))
		case "writer":
			var w wire.Writer
			require.NoError(t, wire.Strict([]byte(ex.text), &w), at("writer"))
			_, err := w.Contracts()
			require.NoError(t, err, at("writer"))
		case "wake":
			var w wire.Wake
			require.NoError(t, wire.Strict([]byte(ex.text), &w), at("wake"))
			checkDocWake(t, &w, at("wake"))
		case "change":
			var ch ports.Change
			require.NoError(t, wire.Strict([]byte(ex.text), &ch), at("change"))
			w := contracts.Workspace{ObservedStatus: ch.ObservedStatus, HealthStatus: ch.HealthStatus, ArchiveKey: ch.ArchiveKey}
			require.Equal(t, contracts.Display(&w), ch.Display, at("the display state is SPEC 1.3's"))
		case "child":
		default:
			t.Fatalf("%s", at("unknown example kind "+ex.kind))
		}
	}
	for _, k := range []string{"messages", "workspace", "changes", "patch", "cond", "writer", "wake", "change", "child"} {
		require.Positive(t, kinds[k], "the document has no %s example", k)
	}
}

// checkDocChanges checks a version-3 row's changes of the document
// against the workspace example before it: laid over that row they make
// a valid row, and they are exactly what the harness sends a child that
// holds that row when the row becomes so.
func checkDocChanges(t *testing.T, row, changes []byte, at string) {
	t.Helper()
	require.NotNil(t, row, "%s: no workspace example before it", at)
	var merged map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(row, &merged), at)
	var over map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(changes, &over), at)
	require.Equal(t, string(merged["id"]), string(over["id"]), "%s: the changes of the example's row", at)
	for k, v := range over {
		_, known := merged[k]
		require.True(t, known, "%s: no column %s", at, k)
		merged[k] = v
	}
	text, err := json.Marshal(merged)
	require.NoError(t, err, at)
	var before, after wire.Workspace
	require.NoError(t, wire.Strict(row, &before), at)
	require.NoError(t, wire.Strict(text, &after), at)
	b, err := before.Contracts()
	require.NoError(t, err, at)
	a, err := after.Contracts()
	require.NoError(t, err, at)
	w := wire.NewRowWriter()
	w.SendChanges()
	w.AppendWorkspace(nil, &b)
	require.Equal(t, string(changes), string(w.AppendWorkspace(nil, &a)), "%s: what the harness sends", at)
	// And the Go client's reader makes the row of them.
	r := wire.NewRowReader()
	r.TakeChanges()
	_, ok := r.ParseWorkspace(row)
	require.True(t, ok, at)
	got, ok := r.ParseWorkspace(changes)
	require.True(t, ok, at)
	require.Equal(t, after, got, at)
}

// checkDocMessage decodes a message of the document strictly, in the
// direction its type says, and checks what it carries.
func checkDocMessage(t *testing.T, line []byte, at string) {
	t.Helper()
	var probe struct{ Type string }
	require.NoError(t, json.Unmarshal(line, &probe), at)
	if slices.Contains(childTypes, probe.Type) {
		var m wire.FromChild
		require.NoError(t, wire.Strict(line, &m), at)
		_, err := wire.DecodeFromChild(line)
		require.NoError(t, err, at)
		if m.Error != nil {
			_, invalid := m.Error.Err()
			require.NoError(t, invalid, at)
		}
		if m.Wake != nil {
			checkDocWake(t, m.Wake, at)
		}
		calls := m.Calls
		if m.Type == wire.TCall {
			calls = []wire.Call{{Method: m.Method, Args: m.Args}}
		}
		for _, c := range calls {
			_, ok := handlers[c.Method]
			require.True(t, ok, "%s: unknown method %s", at, c.Method)
			if c.Method == wire.MStoreUpdate {
				var a wire.StoreUpdate
				require.NoError(t, wire.Strict(c.Args, &a), at)
				_, err := a.Writer.Contracts()
				require.NoError(t, err, at)
				_, err = a.Cond.Contracts()
				require.NoError(t, err, at)
			}
		}
		return
	}
	m, err := wire.DecodeFromHarness(line)
	require.NoError(t, err, at)
	var strict wire.FromHarness
	require.NoError(t, wire.Strict(line, &strict), at)
	for _, a := range append(strict.Answers, strict) {
		if a.Error != nil {
			_, invalid := a.Error.Err()
			require.NoError(t, invalid, at)
		}
	}
	for _, a := range m.Answers {
		require.Contains(t, []string{wire.TOK, wire.TError}, a.Type, at)
	}
	if m.Type == wire.TAPI {
		var a wire.APIArgs
		require.NoError(t, wire.Strict(m.Args, &a), at)
	}
}

func checkDocWake(t *testing.T, w *wire.Wake, at string) {
	t.Helper()
	require.Positive(t, w.EveryNs, at)
	require.NotEmpty(t, w.Calls, at)
	for _, c := range w.Calls {
		require.Contains(t, wire.WakeMethods, c.Method, at)
	}
}

// The document's child without a client library runs as it is printed:
// it takes the lock, is woken by a change on its listener and republishes
// it, and the harness takes its quiet steps meanwhile.
func TestTheDocumentsChildRuns(t *testing.T) {
	py := drivertest.Python(t)
	var code string
	for _, ex := range docExamples(t) {
		if ex.kind == "child" {
			code = ex.text
		}
	}
	require.NotEmpty(t, code)
	script := filepath.Join(t.TempDir(), "child.py")
	require.NoError(t, os.WriteFile(script, []byte(code), 0o644))
	sys, err := New(Options{Command: []string{py, "-S", script}, Env: drivertest.PythonEnv(t)})
	require.NoError(t, err)
	defer sys.Close()
	s, err := wssim.New(Judged(wssim.Config{Seed: 1, Duration: 10 * time.Minute, System: sys, Workload: wssim.Workload{Disabled: true}}))
	require.NoError(t, err)
	s.Schedule(s.Start().Add(time.Minute+300*time.Millisecond), "a row changes", func(s *wssim.Sim) {
		ctx := context.Background()
		writer := contracts.Writer{Component: contracts.CompAPI, Instance: "api"}
		require.NoError(t, s.World().Store.Insert(ctx, writer, contracts.NewWorkspace("w1", "u1", "dev", "img", s.Now())))
		_, err := s.World().Store.Update(ctx, writer, "w1", contracts.Cond{}, contracts.Patch{DesiredState: contracts.Some(contracts.DesiredStandby)})
		require.NoError(t, err)
	})
	require.NoError(t, s.RunFor(10*time.Minute))
	require.Empty(t, sys.Failures())
	var acquired, published bool
	for _, e := range s.History().Events() {
		acquired = acquired || e.Kind == history.KindLeader && e.Method == "acquire"
		if e.Kind == history.KindCall && e.Method == "bus.Publish" && strings.HasPrefix(e.Args, "workspace:w1") {
			published = true
			require.WithinDuration(t, s.Start().Add(time.Minute+300*time.Millisecond), e.At, time.Second, "within a second of the change")
		}
	}
	require.True(t, acquired, "the child took the lock")
	require.True(t, published, "the change was republished")
	require.Greater(t, sys.QuietSteps(), 500, "the harness took its idle steps")
	require.Less(t, sys.Messages(), 200, "and the child was seldom woken")
}
