package httpapi

// These tests hold docs/api.md to the handler: its route table against the
// routes New serves (both ways), its field tables against the request
// types, its error table against the error codes declared in the source,
// its limits against the constants, and every example request, sent to the
// real handler on the fakes, against the status, headers and body the page
// shows. "…" in an expected value matches anything; a member "…" in an
// expected object allows members the page does not show.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
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
	wsfakes "github.com/wsconverge/converge/fakes/workspace"
	"github.com/wsconverge/converge/refimpl/workspace/api"
	"github.com/wsconverge/converge/refimpl/workspace/decide"
)

// apiDocPath is docs/api.md from this package's directory.
const apiDocPath = "../../../docs/api.md"

// wild is the wildcard of the page's expected values.
const wild = "…"

func readAPIDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(apiDocPath)
	require.NoError(t, err)
	return string(b)
}

// docTable returns the body rows of the Markdown table that follows the
// line starting with marker, each row's cells trimmed.
func docTable(t *testing.T, doc, marker string) [][]string {
	t.Helper()
	i := strings.Index(doc, marker)
	require.GreaterOrEqual(t, i, 0, "docs/api.md has no %q", marker)
	lines := strings.Split(doc[i:], "\n")[1:]
	var rows [][]string
	for n, l := range lines {
		if !strings.HasPrefix(l, "|") {
			break
		}
		if n < 2 { // the header and the |---| line
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	require.NotEmpty(t, rows, "the table after %q is empty", marker)
	return rows
}

func unquote(cell string) string { return strings.Trim(cell, "`") }

// docRoute is a row of the route table.
type docRoute struct {
	method, path, who string
	success           int
}

func (r docRoute) String() string { return r.method + " " + r.path }

func docRoutes(t *testing.T, doc string) []docRoute {
	t.Helper()
	var out []docRoute
	for _, c := range docTable(t, doc, "<!-- routes:") {
		require.Len(t, c, 5, "route row %v", c)
		code, err := strconv.Atoi(strings.Fields(c[3])[0])
		require.NoError(t, err, "route row %v: success", c)
		out = append(out, docRoute{method: unquote(c[0]), path: unquote(c[1]), who: c[2], success: code})
	}
	return out
}

// servedRoutes is every method and path template the handler serves.
func servedRoutes() []string {
	var out []string
	for _, info := range routeInfo {
		for _, m := range info.methods {
			out = append(out, m+" "+info.label)
		}
	}
	slices.Sort(out)
	return out
}

// TestAPIDocRoutesAreTheHandlersRoutes: no route served but undocumented,
// none documented but not served, and each route's "who" is what the
// handler enforces.
func TestAPIDocRoutesAreTheHandlersRoutes(t *testing.T) {
	routes := docRoutes(t, readAPIDoc(t))
	var documented []string
	for _, r := range routes {
		documented = append(documented, r.String())
	}
	slices.Sort(documented)
	require.Equal(t, servedRoutes(), documented, "docs/api.md's route table against the routes the handler serves")

	e := newDocEnv(t)
	for _, r := range routes {
		path := strings.ReplaceAll(r.path, "{id}", e.create(alice, `{"name":"who","image_ref":"img","desired_state":"PENDING"}`))
		status := func(token string) int {
			t.Helper()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel() // ends an event stream
			req, err := http.NewRequestWithContext(ctx, r.method, e.srv.URL+path, nil)
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		switch r.who {
		case "anyone":
			require.NotEqual(t, http.StatusUnauthorized, status(""), "%s needs no token", r)
		case "user":
			require.Equal(t, http.StatusUnauthorized, status(""), "%s needs a token", r)
			require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status(alice), "%s: any user", r)
		case "admin":
			require.Equal(t, http.StatusUnauthorized, status(""), "%s needs a token", r)
			require.Equal(t, http.StatusForbidden, status(alice), "%s: a user without the admin role", r)
			require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status(root), "%s: an administrator", r)
		default:
			t.Fatalf("%s: who is %q: want anyone, user or admin", r, r.who)
		}
	}
}

// TestAPIDocFieldsAreTheRequestsFields: the field tables name every member
// of the request types with its JSON type, required exactly when the
// member is not omitempty; and the ranges "A–B" they give are enforced.
func TestAPIDocFieldsAreTheRequestsFields(t *testing.T) {
	doc := readAPIDoc(t)
	e := newDocEnv(t)
	for _, c := range []struct {
		route string
		req   any
	}{
		{"POST /api/v1/workspaces", ports.CreateRequest{}},
		{"PATCH /api/v1/workspaces/{id}", ports.PatchRequest{}},
	} {
		want := map[string]string{}
		rt := reflect.TypeOf(c.req)
		for i := range rt.NumField() {
			f := rt.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			typ := f.Type
			if typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			kind := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer"}[typ.Kind()]
			require.NotEmpty(t, kind, "%s: %s has a type this test does not describe", c.route, name)
			required := "yes"
			if strings.Contains(opts, "omitempty") {
				required = "no"
			}
			want[name] = kind + " " + required
		}
		got := map[string]string{}
		method, path, _ := strings.Cut(c.route, " ")
		for _, row := range docTable(t, doc, "<!-- fields: "+c.route+" -->") {
			require.Len(t, row, 4, "%s field row %v", c.route, row)
			name := unquote(row[0])
			got[name] = row[1] + " " + row[2]
			probeRange(t, e, method, path, name, row[3])
		}
		require.Equal(t, want, got, "docs/api.md's fields of %s against %T", c.route, c.req)
	}
}

// rangeRe is a field's documented range: "1–255 characters", "1–315360000".
var rangeRe = regexp.MustCompile(`^(\d+)–(\d+)( characters)?\b`)

// probeRange sends a field's documented bounds, and one past each, and
// checks that the handler accepts exactly the values within.
func probeRange(t *testing.T, e *env, method, path, field, limits string) {
	t.Helper()
	m := rangeRe.FindStringSubmatch(limits)
	if m == nil {
		return
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	value := func(n int) string {
		if m[3] != "" {
			return strconv.Quote(strings.Repeat("a", n))
		}
		return strconv.Itoa(n)
	}
	for _, p := range []struct {
		n  int
		ok bool
	}{{lo - 1, false}, {lo, true}, {hi, true}, {hi + 1, false}} {
		members := map[string]string{"name": `"n"`, "image_ref": `"i"`, "desired_state": `"PENDING"`}
		if method == http.MethodPatch {
			members = map[string]string{}
		}
		members[field] = value(p.n)
		var parts []string
		for k, v := range members {
			parts = append(parts, strconv.Quote(k)+":"+v)
		}
		target := path
		if strings.Contains(path, "{id}") {
			target = strings.ReplaceAll(path, "{id}", e.create(alice, `{"name":"probe","image_ref":"img","desired_state":"PENDING"}`))
		}
		r := e.call(method, target, alice, "{"+strings.Join(parts, ",")+"}")
		if p.ok {
			require.Less(t, r.status, 300, "%s %s with %s of %d: documented %q; body: %s", method, path, field, p.n, limits, r.body)
		} else {
			r.errorOf(t, http.StatusBadRequest, contracts.APIBadRequest)
		}
	}
}

// declaredCodes is every error code the source declares: contracts' API*
// constants and this package's Code* constants.
func declaredCodes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, src := range []struct{ file, prefix string }{
		{"../../../contracts/apierror.go", "API"},
		{"errors.go", "Code"},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), src.file, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, src.prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						out = append(out, v)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestAPIDocErrorCodesAreTheDeclaredCodes: the error table lists every
// code the source declares, and no other.
func TestAPIDocErrorCodesAreTheDeclaredCodes(t *testing.T) {
	var codes []string
	for _, row := range docErrors(t, readAPIDoc(t)) {
		codes = append(codes, row[1])
	}
	slices.Sort(codes)
	require.Equal(t, declaredCodes(t), slices.Compact(codes))
}

// docErrors is the error table as [status, code] pairs.
func docErrors(t *testing.T, doc string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, c := range docTable(t, doc, "<!-- errors:") {
		require.Len(t, c, 3, "error row %v", c)
		out = append(out, [2]string{c[0], unquote(c[1])})
	}
	return out
}

// TestAPIDocLimitsAreTheDefaults: every limit the page states is the
// default the code has.
func TestAPIDocLimitsAreTheDefaults(t *testing.T) {
	want := map[string]string{
		"request body":                strconv.Itoa(MaxBodyBytes) + " bytes",
		"running workspaces per user": strconv.Itoa(contracts.DefaultLimits.MaxRunningPerUser),
		"running workspaces in all":   strconv.Itoa(contracts.DefaultLimits.MaxRunningGlobal),
		"event streams per user":      strconv.Itoa(DefaultMaxStreamsPerUser),
		"event streams in all":        strconv.Itoa(DefaultMaxStreams),
		"event stream heartbeat":      strconv.Itoa(int(DefaultHeartbeat/time.Second)) + " seconds",
	}
	got := map[string]string{}
	for _, c := range docTable(t, readAPIDoc(t), "<!-- limits:") {
		require.Len(t, c, 3, "limit row %v", c)
		v, _, _ := strings.Cut(c[1], " (")
		got[c[0]] = v
	}
	require.Equal(t, want, got)
}

// docExample is one example of the page: a curl command and the answer.
type docExample struct {
	name    string
	curl    string
	status  int
	headers [][2]string
	body    string
}

var exampleRe = regexp.MustCompile("(?s)<!-- example: ([a-z-]+) -->\n```sh\n(.*?)```\n\n```http\n(.*?)```")

func docExamples(t *testing.T, doc string) []docExample {
	t.Helper()
	var out []docExample
	for _, m := range exampleRe.FindAllStringSubmatch(doc, -1) {
		ex := docExample{name: m[1], curl: m[2]}
		head, body, _ := strings.Cut(m[3], "\n\n")
		lines := strings.Split(strings.TrimSpace(head), "\n")
		f := strings.SplitN(lines[0], " ", 3)
		require.Len(t, f, 3, "example %s: status line %q", ex.name, lines[0])
		require.Equal(t, "HTTP/1.1", f[0], "example %s", ex.name)
		code, err := strconv.Atoi(f[1])
		require.NoError(t, err, "example %s", ex.name)
		require.Equal(t, http.StatusText(code), f[2], "example %s: the reason phrase of %d", ex.name, code)
		ex.status = code
		for _, l := range lines[1:] {
			k, v, ok := strings.Cut(l, ": ")
			require.True(t, ok, "example %s: header line %q", ex.name, l)
			ex.headers = append(ex.headers, [2]string{k, v})
		}
		ex.body = strings.TrimSpace(body)
		out = append(out, ex)
	}
	require.Equal(t, strings.Count(doc, "<!-- example: "), len(out), "every example marker is followed by a sh block and an http block")
	return out
}

// shellWords splits a command as sh would: backslash-newline joins lines,
// '…' is literal, "…" and bare words expand $NAME and ${NAME} from vars
// (an unknown name is an error).
func shellWords(cmd string, vars map[string]string) ([]string, error) {
	cmd = strings.ReplaceAll(cmd, "\\\n", " ")
	var (
		words []string
		cur   strings.Builder
		in    bool // a word has started
	)
	expand := func(s string, i int) (int, error) {
		j := i + 1
		braced := j < len(s) && s[j] == '{'
		if braced {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || k > j && s[k] >= '0' && s[k] <= '9') {
			k++
		}
		name := s[j:k]
		if braced {
			if k >= len(s) || s[k] != '}' {
				return 0, fmt.Errorf("unclosed ${ at %d", i)
			}
			k++
		}
		v, ok := vars[name]
		if !ok {
			return 0, fmt.Errorf("unknown variable $%s", name)
		}
		cur.WriteString(v)
		return k, nil
	}
	for i := 0; i < len(cmd); {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			i++
		case c == '\'':
			end := strings.IndexByte(cmd[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed ' at %d", i)
			}
			cur.WriteString(cmd[i+1 : i+1+end])
			in, i = true, i+end+2
		case c == '"':
			in, i = true, i+1
			for {
				if i >= len(cmd) {
					return nil, fmt.Errorf("unclosed \"")
				}
				switch d := cmd[i]; {
				case d == '"':
					i++
				case d == '\\' && i+1 < len(cmd) && strings.IndexByte("\"\\$`", cmd[i+1]) >= 0:
					cur.WriteByte(cmd[i+1])
					i += 2
					continue
				case d == '$':
					var err error
					if i, err = expand(cmd, i); err != nil {
						return nil, err
					}
					continue
				default:
					cur.WriteByte(d)
					i++
					continue
				}
				break
			}
		case c == '$':
			var err error
			if i, err = expand(cmd, i); err != nil {
				return nil, err
			}
			in = true
		case c == '\\' && i+1 < len(cmd):
			cur.WriteByte(cmd[i+1])
			in, i = true, i+2
		default:
			cur.WriteByte(c)
			in, i = true, i+1
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// curlRequest builds the request a curl command line sends, for the flags
// the page uses: -s -S -N -i (no effect on the request), -I, -X, -H, -d.
func curlRequest(ctx context.Context, words []string) (*http.Request, error) {
	if len(words) == 0 || words[0] != "curl" {
		return nil, fmt.Errorf("not a curl command: %q", words)
	}
	var (
		method, url, data string
		hasData, head     bool
		headers           [][2]string
	)
	for i := 1; i < len(words); i++ {
		w := words[i]
		arg := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s needs a value", w)
			}
			i++
			return words[i], nil
		}
		var err error
		switch w {
		case "-s", "-S", "-sS", "-N", "-i":
		case "-I":
			head = true
		case "-X":
			method, err = arg()
		case "-H":
			var h string
			if h, err = arg(); err == nil {
				k, v, ok := strings.Cut(h, ":")
				if !ok {
					return nil, fmt.Errorf("header %q", h)
				}
				headers = append(headers, [2]string{k, strings.TrimSpace(v)})
			}
		case "-d", "--data":
			data, err = arg()
			hasData = true
		default:
			if strings.HasPrefix(w, "-") {
				return nil, fmt.Errorf("curl flag %s: this test does not know it", w)
			}
			if url != "" {
				return nil, fmt.Errorf("two URLs: %s and %s", url, w)
			}
			url = w
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case method != "":
	case head:
		method = http.MethodHead
	case hasData:
		method = http.MethodPost
	default:
		method = http.MethodGet
	}
	var body io.Reader
	if hasData {
		body = strings.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if hasData {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's default
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	return req, nil
}

// globMatch reports whether s matches pattern, in which "…" matches any
// run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, wild)
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// jsonMatch compares a value the handler sent with the page's: strings by
// globMatch, objects member by member (a member "…" allows more), arrays
// element by element, anything else exactly.
func jsonMatch(at string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %v", at, got)
		}
		_, open := w[wild]
		for k, wv := range w {
			if k == wild {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: member %q missing", at, k)
			}
			if err := jsonMatch(at+"."+k, wv, gv); err != nil {
				return err
			}
		}
		if !open {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Errorf("%s: member %q is sent but not shown", at, k)
				}
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %d elements, got %v", at, len(w), got)
		}
		for i := range w {
			if err := jsonMatch(fmt.Sprintf("%s[%d]", at, i), w[i], g[i]); err != nil {
				return err
			}
		}
	case string:
		g, ok := got.(string)
		if !ok || !globMatch(w, g) {
			return fmt.Errorf("%s: want %q, got %v", at, w, got)
		}
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("%s: want %v, got %v", at, want, got)
		}
	}
	return nil
}

func requireJSONMatch(t *testing.T, name, want, got string) {
	t.Helper()
	var w, g any
	require.NoError(t, json.Unmarshal([]byte(want), &w), "example %s: the page's body is not JSON", name)
	require.NoError(t, json.Unmarshal([]byte(got), &g), "example %s: the answer is not JSON: %s", name, got)
	require.NoError(t, jsonMatch(name, w, g), "example %s: answer %s", name, got)
}

// newDocEnv is the API on the fakes with the default limits, as
// `converge serve --fake` runs it.
func newDocEnv(t *testing.T) *env {
	t.Helper()
	world := wsfakes.NewWorld(wsfakes.NewClock(t0), history.NewRecorder())
	deps := world.Deps("api")
	deps.IDs = wsfakes.NewIDs(7)
	done := make(chan struct{})
	cfg := Config{
		API:         api.New(deps),
		Tokens:      map[string]string{alice: "alice", bob: "bob", root: "root"},
		Admins:      map[string]bool{"root": true},
		Bus:         deps.Bus,
		Clock:       world.Clock,
		Heartbeat:   time.Hour,
		StreamsDone: done,
	}
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	return &env{t: t, world: world, srv: srv}
}

// docRun runs the page's examples in order, as a reader would: $ID is the
// last workspace created (or the one a step below prepares).
type docRun struct {
	*env
	vars map[string]string
	hits map[string]int // "METHOD path template" → statuses seen, by example
	seen []string
}

// docSteps is what the fakes' coordinator would have done before an
// example (before) or while its event stream is open (during).
var docSteps = map[string]struct{ before, during func(r *docRun) }{
	// The coordinator has claimed PROVISIONING.
	"busy": {before: func(r *docRun) {
		r.setRow(r.vars["ID"], contracts.CompStateReconciler, contracts.Patch{
			Operation: contracts.Some(contracts.OpProvisioning), OpStartedAt: contracts.Some(t0)})
	}},
	// An attempt fails and is retried; the volume is made; it starts.
	"events": {during: func(r *docRun) {
		id := r.vars["ID"]
		row := r.row(id)
		p, terminal := decide.FailurePatch(&row, contracts.CodeVolumeCreateFailed, "volume create failed", nil, t0.Add(2*time.Second))
		require.False(r.t, terminal)
		r.setRow(id, contracts.CompStateReconciler, p)
		r.publishRow(id, 2)
		r.setRow(id, contracts.CompStateReconciler, contracts.Patch{
			ObservedStatus: contracts.Some(contracts.ObservedStandby), Operation: contracts.Some(contracts.OpStarting)})
		r.publishRow(id, 5)
		r.setRow(id, contracts.CompStateReconciler, contracts.Patch{
			ObservedStatus: contracts.Some(contracts.ObservedRunning), Operation: contracts.Some(contracts.OpNone),
			ErrorCount: contracts.Some(0), ErrorInfo: contracts.Some[*contracts.ErrorInfo](nil), ErrorMessage: contracts.Some("")})
		r.publishRow(id, 7)
	}},
	// The user already has every event stream one user may.
	"stream-cap": {before: func(r *docRun) {
		for range DefaultMaxStreamsPerUser {
			r.holdStream(alice, r.vars["ID"])
		}
	}},
	// Two workspaces of the user's count toward the limit.
	"limit": {before: func(r *docRun) {
		r.create(alice, `{"name":"one","image_ref":"img"}`)
		r.create(alice, `{"name":"two","image_ref":"img"}`)
	}},
	// A workspace of alice's failed for good.
	"admin-list": {before: func(r *docRun) {
		id := r.create(alice, `{"name":"broken","image_ref":"img","desired_state":"STANDBY"}`)
		info := &contracts.ErrorInfo{Reason: contracts.ReasonRetryExceeded, Message: "image not found", IsTerminal: true,
			Operation: contracts.OpStarting, ErrorCount: 3, OccurredAt: t0}
		r.setRow(id, contracts.CompStateReconciler, contracts.Patch{HealthStatus: contracts.Some(contracts.HealthError),
			ErrorInfo: contracts.Some(info), ErrorCount: contracts.Some(3), ErrorMessage: contracts.Some("image not found")})
		r.vars["ID"] = id
	}},
}

// publishRow publishes the row's state as the EventListener would, at t0
// plus sec seconds.
func (r *docRun) publishRow(id string, sec int) {
	r.t.Helper()
	row := r.row(id)
	r.publish(ports.ChangeOf(&row, t0.Add(time.Duration(sec)*time.Second)))
}

// holdStream opens an event stream and keeps it open until the test ends,
// waiting out a slot an ended stream has not yet given back.
func (r *docRun) holdStream(token, id string) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithCancel(r.t.Context())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.srv.URL+"/api/v1/workspaces/"+id+"/events", nil)
		require.NoError(r.t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := r.srv.Client().Do(req)
		require.NoError(r.t, err)
		if resp.StatusCode == http.StatusOK {
			r.t.Cleanup(func() { cancel(); resp.Body.Close() })
			return
		}
		resp.Body.Close()
		cancel()
		require.Equal(r.t, http.StatusTooManyRequests, resp.StatusCode)
		require.True(r.t, time.Now().Before(deadline), "a stream slot was never given back")
		time.Sleep(10 * time.Millisecond)
	}
}

// route is the route template a request hits, "" for none.
func routeOf(req *http.Request) string {
	rt, _ := match(req.URL.Path)
	if int(rt) >= len(routeInfo) || !strings.HasPrefix(routeInfo[rt].label, "/") {
		return ""
	}
	return req.Method + " " + routeInfo[rt].label
}

func (r *docRun) run(ex docExample) {
	r.t.Helper()
	t := r.t
	step := docSteps[ex.name]
	if step.before != nil {
		step.before(r)
	}
	words, err := shellWords(ex.curl, r.vars)
	require.NoError(t, err, "example %s", ex.name)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := curlRequest(ctx, words)
	require.NoError(t, err, "example %s", ex.name)
	resp, err := r.srv.Client().Do(req)
	require.NoError(t, err, "example %s", ex.name)
	defer resp.Body.Close()
	r.seen = append(r.seen, ex.name)
	if rt := routeOf(req); rt != "" {
		r.hits[rt+" "+strconv.Itoa(resp.StatusCode)]++
	}

	var body string
	if resp.Header.Get("Content-Type") == "text/event-stream" && resp.StatusCode == http.StatusOK {
		body = r.readStream(ex, resp.Body, step.during)
	} else {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		body = string(b)
	}
	require.Equal(t, ex.status, resp.StatusCode, "example %s: body %s", ex.name, body)
	for _, h := range ex.headers {
		require.True(t, globMatch(h[1], resp.Header.Get(h[0])), "example %s: header %s: want %q, got %q", ex.name, h[0], h[1], resp.Header.Get(h[0]))
	}
	switch {
	case ex.body == "":
	case resp.Header.Get("Content-Type") == "text/event-stream":
		requireStreamMatch(t, ex, body)
	default:
		requireJSONMatch(t, ex.name, ex.body, body)
	}
	if req.Method == http.MethodPost && req.URL.Path == apiPrefix+"/workspaces" && resp.StatusCode == http.StatusCreated {
		var ws struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(body), &ws))
		r.vars["ID"] = ws.ID
	}
	// An error answer's status and code are a row of the error table.
	var e struct{ Error struct{ Code string } }
	if resp.StatusCode >= 400 && json.Unmarshal([]byte(body), &e) == nil && e.Error.Code != "" {
		require.Contains(t, docErrors(t, readAPIDoc(t)), [2]string{strconv.Itoa(resp.StatusCode), e.Error.Code},
			"example %s: its error is not in the error table", ex.name)
	}
}

// readStream reads an event stream: its opening comment, then (after
// during, if any, has made the changes) as many events as the page shows.
func (r *docRun) readStream(ex docExample, body io.Reader, during func(*docRun)) string {
	r.t.Helper()
	want := len(strings.Split(ex.body, "\n\n")) // the comment and the events
	blocks := make(chan string, 16)
	go func() {
		defer close(blocks)
		sc := bufio.NewScanner(body)
		var cur []string
		for sc.Scan() {
			if sc.Text() == "" {
				blocks <- strings.Join(cur, "\n")
				cur = nil
				continue
			}
			cur = append(cur, sc.Text())
		}
	}()
	var got []string
	for len(got) < want {
		select {
		case b, ok := <-blocks:
			require.True(r.t, ok, "example %s: the stream ended after %q", ex.name, got)
			got = append(got, b)
		case <-time.After(5 * time.Second):
			r.t.Fatalf("example %s: %d of %d blocks within 5 s: %q", ex.name, len(got), want, got)
		}
		if len(got) == 1 && during != nil {
			during(r)
		}
	}
	return strings.Join(got, "\n\n")
}

// requireStreamMatch compares an event stream block by block: comments
// and event lines by globMatch, data lines as JSON.
func requireStreamMatch(t *testing.T, ex docExample, got string) {
	t.Helper()
	wantBlocks, gotBlocks := strings.Split(ex.body, "\n\n"), strings.Split(got, "\n\n")
	require.Len(t, gotBlocks, len(wantBlocks), "example %s: %s", ex.name, got)
	for i := range wantBlocks {
		wl, gl := strings.Split(wantBlocks[i], "\n"), strings.Split(gotBlocks[i], "\n")
		require.Len(t, gl, len(wl), "example %s: block %d: %q", ex.name, i, gotBlocks[i])
		for j := range wl {
			if w, ok := strings.CutPrefix(wl[j], "data: "); ok {
				g, ok := strings.CutPrefix(gl[j], "data: ")
				require.True(t, ok, "example %s: %q", ex.name, gl[j])
				requireJSONMatch(t, ex.name, w, g)
				continue
			}
			require.True(t, globMatch(wl[j], gl[j]), "example %s: want %q, got %q", ex.name, wl[j], gl[j])
		}
	}
}

// TestAPIDocExamplesRunAgainstTheHandler sends every example of the page
// to the handler, in order, and checks the answer the page shows; and
// checks that each route of the route table is shown answering its
// success status by some example.
func TestAPIDocExamplesRunAgainstTheHandler(t *testing.T) {
	doc := readAPIDoc(t)
	e := newDocEnv(t)
	r := &docRun{env: e, hits: map[string]int{}, vars: map[string]string{
		"API": e.srv.URL, "ALICE": alice, "ROOT": root, "ID": "",
	}}
	examples := docExamples(t, doc)
	for name := range docSteps {
		require.True(t, slices.ContainsFunc(examples, func(ex docExample) bool { return ex.name == name }),
			"the step for example %s has no example", name)
	}
	for _, ex := range examples {
		r.run(ex)
	}
	for _, rt := range docRoutes(t, doc) {
		require.Positive(t, r.hits[rt.String()+" "+strconv.Itoa(rt.success)],
			"no example shows %s answering %d (examples run: %v)", rt, rt.success, r.seen)
	}
}

// The parsers above, on their own.
func TestAPIDocParsers(t *testing.T) {
	w, err := shellWords("curl -sS -X POST \"$API/x/$ID:recover\" \\\n  -H 'A: b c' -d '{\"a\":1}' ${ID}z\\ y", map[string]string{"API": "http://h", "ID": "7"})
	require.NoError(t, err)
	require.Equal(t, []string{"curl", "-sS", "-X", "POST", "http://h/x/7:recover", "-H", "A: b c", "-d", `{"a":1}`, "7z y"}, w)
	_, err = shellWords(`curl "$NOPE"`, nil)
	require.ErrorContains(t, err, "unknown variable $NOPE")

	req, err := curlRequest(t.Context(), []string{"curl", "-d", "{}", "http://h/p"})
	require.NoError(t, err)
	require.Equal(t, http.MethodPost, req.Method)
	require.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"), "curl's default for -d")
	req, err = curlRequest(t.Context(), []string{"curl", "-I", "http://h/p"})
	require.NoError(t, err)
	require.Equal(t, http.MethodHead, req.Method)
	_, err = curlRequest(t.Context(), []string{"curl", "--upload-file", "x", "http://h/p"})
	require.Error(t, err)

	require.True(t, globMatch("a…c…e", "abbcdde"))
	require.True(t, globMatch("…", ""))
	require.False(t, globMatch("a…c", "abd"))
	require.False(t, globMatch("abc", "abcd"))

	var want, got any
	require.NoError(t, json.Unmarshal([]byte(`{"a":"x…","b":[1],"…":"…"}`), &want))
	require.NoError(t, json.Unmarshal([]byte(`{"a":"xyz","b":[1],"c":null}`), &got))
	require.NoError(t, jsonMatch("", want, got))
	require.NoError(t, json.Unmarshal([]byte(`{"a":"x…","b":[1]}`), &want))
	require.ErrorContains(t, jsonMatch("", want, got), `member "c" is sent but not shown`)
	require.NoError(t, json.Unmarshal([]byte(`{"a":"xyz","b":[1,2]}`), &got))
	require.ErrorContains(t, jsonMatch("", want, got), "want 1 elements")

	doc := "x\n<!-- t -->\n| a | b |\n|---|---|\n| `1` | two words |\n| 3 | 4 |\n\nafter | no"
	require.Equal(t, [][]string{{"`1`", "two words"}, {"3", "4"}}, docTable(t, doc, "<!-- t -->"))
}
