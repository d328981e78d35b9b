package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
)

// Rows are most of a run's bytes: every pass of a coordinator lists the
// fleet. AppendWorkspace writes a row as json.Marshal(FromWorkspace(w))
// does, and ParseWorkspaces reads exactly that layout back, both without
// reflection; anything else (another field order, white space, an escape
// this reader leaves alone) is left to encoding/json, which reads it as
// before. TestRowCodecAgreesWithEncodingJSON and FuzzParseWorkspaces hold
// them to encoding/json.

// AppendWorkspaces appends rows as json.Marshal(FromWorkspaces(rows))
// writes them.
func AppendWorkspaces(b []byte, rows []contracts.Workspace) []byte {
	b = append(b, '[')
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendWorkspace(b, &rows[i])
	}
	return append(b, ']')
}

// AppendWorkspace appends w as json.Marshal(FromWorkspace(w)) writes it.
func AppendWorkspace(b []byte, w *contracts.Workspace) []byte {
	b = appendStr(append(b, `{"id":`...), w.ID)
	b = appendStr(append(b, `,"owner_user_id":`...), w.OwnerUserID)
	b = appendStr(append(b, `,"name":`...), w.Name)
	b = appendNullStr(append(b, `,"description":`...), w.Description)
	b = appendNullStr(append(b, `,"memo":`...), w.Memo)
	b = appendStr(append(b, `,"image_ref":`...), w.ImageRef)
	b = appendStr(append(b, `,"instance_backend":`...), string(w.InstanceBackend))
	b = appendStr(append(b, `,"storage_backend":`...), string(w.StorageBackend))
	b = appendStr(append(b, `,"home_store_key":`...), w.HomeStoreKey)
	b = append(b, `,"home_ctx":`...)
	switch {
	case w.HomeCtx == nil:
		b = append(b, null...)
	case w.HomeCtx.RestoreMarker == "":
		b = append(b, '{', '}')
	default:
		b = append(appendStr(append(b, `{"restore_marker":`...), w.HomeCtx.RestoreMarker), '}')
	}
	b = appendStr(append(b, `,"observed_status":`...), string(w.ObservedStatus))
	b = appendStr(append(b, `,"health_status":`...), string(w.HealthStatus))
	b = appendTime(append(b, `,"observed_at":`...), w.ObservedAt)
	b = appendStr(append(b, `,"operation":`...), string(w.Operation))
	b = appendTime(append(b, `,"op_started_at":`...), w.OpStartedAt)
	b = appendNullStr(append(b, `,"op_id":`...), w.OpID)
	b = appendNullStr(append(b, `,"archive_key":`...), w.ArchiveKey)
	b = strconv.AppendInt(append(b, `,"error_count":`...), int64(w.ErrorCount), 10)
	b = append(b, `,"error_info":`...)
	if w.ErrorInfo == nil {
		b = append(b, null...)
	} else {
		b = appendMarshal(b, FromErrorInfo(w.ErrorInfo))
	}
	b = appendNullStr(append(b, `,"error_message":`...), w.ErrorMessage)
	b = appendNullStr(append(b, `,"previous_status":`...), string(w.PreviousStatus))
	b = appendStr(append(b, `,"desired_state":`...), string(w.DesiredState))
	b = appendTime(append(b, `,"deleted_at":`...), w.DeletedAt)
	b = strconv.AppendInt(append(b, `,"standby_ttl_seconds":`...), int64(w.StandbyTTLSeconds), 10)
	b = strconv.AppendInt(append(b, `,"archive_ttl_seconds":`...), int64(w.ArchiveTTLSeconds), 10)
	b = appendTime(append(b, `,"last_access_at":`...), w.LastAccessAt)
	b = appendTime(append(b, `,"created_at":`...), w.CreatedAt)
	b = appendTime(append(b, `,"updated_at":`...), w.UpdatedAt)
	return append(b, '}')
}

// plain reports whether encoding/json writes s between quotes as it is:
// printable ASCII but for the quote, the backslash and the HTML
// characters it escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func appendStr(b []byte, s string) []byte {
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return appendMarshal(b, s)
}

func appendNullStr(b []byte, s string) []byte {
	if s == "" {
		return append(b, null...)
	}
	return appendStr(b, s)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, null...)
	}
	b = append(b, '"')
	b = AppendRFC3339(b, t)
	return append(b, '"')
}

// appendMarshal appends v as encoding/json writes it (for what the fast
// writer leaves to it; none of it can fail).
func appendMarshal(b []byte, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("wire: " + err.Error())
	}
	return append(b, raw...)
}

// ParseWorkspaces reads a list of rows in the layout AppendWorkspaces
// writes; ok is false for anything else (read it with encoding/json).
func ParseWorkspaces(raw []byte) (rows []Workspace, ok bool) {
	var r RowReader
	return r.ParseWorkspaces(raw)
}

// ParseWorkspace reads one row in the layout AppendWorkspace writes.
func ParseWorkspace(raw []byte) (w Workspace, ok bool) {
	var r RowReader
	return r.ParseWorkspace(raw)
}

// RowReader reads rows as ParseWorkspaces does, and keeps the text and
// value of the last version of each row it read, by id. A coordinator
// lists the fleet at every pass, and from one pass to the next most of a
// row's fields have the same text (a health pass changes two times): a
// field whose text has not changed is taken from the last value, not
// read again — no string is allocated, no time parsed. An object field
// (home_ctx, error_info) whose text has not changed is copied deeply from
// the last value: a caller gets its own. The zero
// RowReader is ready, and remembers nothing (every row is read).
type RowReader struct {
	last map[string]*readRow
	// keep: remember rows (NewRowReader).
	keep bool
	// changes: a row held comes as its changes (protocol version 3,
	// TakeChanges).
	changes bool
}

// NewRowReader returns a RowReader that remembers the rows it reads.
func NewRowReader() *RowReader { return &RowReader{last: map[string]*readRow{}, keep: true} }

// readRow is the last version of a row read: its text, where each field's
// value lies in it, and its value.
type readRow struct {
	raw  []byte
	span [len(rowFields)][2]int32
	w    Workspace
}

// ParseWorkspaces reads a list of rows in the layout AppendWorkspaces
// writes; ok is false for anything else (read it with encoding/json).
func (r *RowReader) ParseWorkspaces(raw []byte) (rows []Workspace, ok bool) {
	return r.AppendWorkspaces(nil, raw)
}

// AppendWorkspaces reads rows as ParseWorkspaces does and appends them to
// dst, whose room it reuses: a caller that lists the fleet at every pass
// and is done with the last listing's rows passes them back (the rows are
// overwritten whole, objects included). rows is never nil when ok; it
// is nil when ok is false.
func (r *RowReader) AppendWorkspaces(dst []Workspace, raw []byte) (rows []Workspace, ok bool) {
	p := parser{b: raw}
	if !p.lit("[") {
		return nil, false
	}
	rows = dst
	if rows == nil {
		rows = []Workspace{}
	}
	if p.lit("]") {
		return rows, p.end()
	}
	for {
		rows = append(rows, Workspace{})
		if !r.workspace(&p, &rows[len(rows)-1]) {
			return nil, false
		}
		if p.lit("]") {
			return rows, p.end()
		}
		if !p.lit(",") {
			return nil, false
		}
	}
}

// ParseWorkspace reads one row in the layout AppendWorkspace writes.
func (r *RowReader) ParseWorkspace(raw []byte) (w Workspace, ok bool) {
	p := parser{b: raw}
	return w, r.workspace(&p, &w) && p.end()
}

// workspace reads the row p begins with into w.
func (r *RowReader) workspace(p *parser, w *Workspace) bool {
	start := p.b
	var prev *readRow
	if r.keep {
		if id, ok := plainStringAt(p.b, len(`{"id":`)); ok {
			prev = r.last[string(id)]
		}
	}
	if prev != nil && r.changes {
		return r.changesOf(p, w, prev)
	}
	if prev != nil {
		*w = prev.w
		if n := len(prev.raw); len(p.b) > n && (p.b[n] == ',' || p.b[n] == ']') && bytes.Equal(p.b[:n], prev.raw) {
			// The row has not changed since: only its objects are made
			// anew, the caller's own.
			p.b = p.b[n:]
			return r.freshObjects(w, prev)
		}
	}
	var span [len(rowFields)][2]int32
	at := func() int32 { return int32(len(start) - len(p.b)) }
	// read: the fields read from the text (the others, w has from
	// prev).
	var read [len(rowFields)]bool
	for i := range rowFields {
		f := &rowFields[i]
		p.field(f.key)
		if p.bad {
			return false
		}
		span[i][0] = at()
		if prev != nil {
			v := prev.raw[prev.span[i][0]:prev.span[i][1]]
			if len(p.b) > len(v) && bytes.HasPrefix(p.b, v) && (p.b[len(v)] == ',' || p.b[len(v)] == '}') {
				p.b = p.b[len(v):]
				span[i][1] = at()
				continue
			}
		}
		f.read(p, w)
		read[i] = true
		span[i][1] = at()
	}
	p.field("}")
	if p.bad {
		return false
	}
	if prev != nil {
		// An object taken from the last version is the reader's own:
		// the caller gets a copy.
		if !read[homeCtxField] {
			w.HomeCtx = copyHomeCtx(w.HomeCtx)
		}
		if !read[errorInfoField] {
			w.ErrorInfo = copyErrorInfo(w.ErrorInfo)
		}
	}
	if r.keep {
		text := start[:len(start)-len(p.b)]
		if prev == nil {
			prev = &readRow{}
			r.last[w.ID] = prev
		}
		prev.raw = append(prev.raw[:0], text...)
		// The caller's objects may change: the row keeps its own.
		prev.span, prev.w = span, *w
		prev.w.HomeCtx, prev.w.ErrorInfo = copyHomeCtx(w.HomeCtx), copyErrorInfo(w.ErrorInfo)
	}
	return true
}

// freshObjects gives w, a copy of the last version of its row, objects of
// its own.
func (r *RowReader) freshObjects(w *Workspace, prev *readRow) bool {
	w.HomeCtx, w.ErrorInfo = copyHomeCtx(prev.w.HomeCtx), copyErrorInfo(prev.w.ErrorInfo)
	return true
}

// homeCtxField and errorInfoField are the indexes in rowFields of the
// two object fields.
const (
	homeCtxField   = 9
	errorInfoField = 18
)

func copyHomeCtx(h *contracts.HomeCtx) *contracts.HomeCtx {
	if h == nil {
		return nil
	}
	c := *h
	return &c
}

// copyErrorInfo is a deep copy of e, as encoding/json would read it again
// from its text (DR606): its context holds only what encoding/json makes
// of a JSON object (maps, slices, strings, float64s, booleans, nil).
// Copying it costs a fraction of reading it: rows in error keep their
// error_info through pass after pass.
func copyErrorInfo(e *ErrorInfo) *ErrorInfo {
	if e == nil {
		return nil
	}
	c := *e
	c.Context = copyJSONObject(e.Context)
	return &c
}

func copyJSONObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = copyJSONValue(v)
	}
	return c
}

func copyJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyJSONObject(x)
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = copyJSONValue(x[i])
		}
		return c
	}
	return v
}

// plainStringAt returns the text of the string at b[i:] when it has no
// escape (a row's id).
func plainStringAt(b []byte, i int) ([]byte, bool) {
	if len(b) <= i || b[i] != '"' {
		return nil, false
	}
	b = b[i+1:]
	j := bytes.IndexByte(b, '"')
	if j < 0 || bytes.IndexByte(b[:j], '\\') >= 0 {
		return nil, false
	}
	return b[:j], true
}

// rowField is one field of a row, in the order AppendWorkspace writes
// them: its name (with the punctuation before it) and its reader.
type rowField struct {
	key  string
	read func(p *parser, w *Workspace)
}

var rowFields = [...]rowField{
	{key: `{"id":`, read: func(p *parser, w *Workspace) { w.ID = p.str() }},
	{key: `,"owner_user_id":`, read: func(p *parser, w *Workspace) { w.OwnerUserID = p.str() }},
	{key: `,"name":`, read: func(p *parser, w *Workspace) { w.Name = p.str() }},
	{key: `,"description":`, read: func(p *parser, w *Workspace) { w.Description = p.nullStr() }},
	{key: `,"memo":`, read: func(p *parser, w *Workspace) { w.Memo = p.nullStr() }},
	{key: `,"image_ref":`, read: func(p *parser, w *Workspace) { w.ImageRef = p.str() }},
	{key: `,"instance_backend":`, read: func(p *parser, w *Workspace) { w.InstanceBackend = contracts.InstanceBackend(p.str()) }},
	{key: `,"storage_backend":`, read: func(p *parser, w *Workspace) { w.StorageBackend = contracts.StorageBackend(p.str()) }},
	{key: `,"home_store_key":`, read: func(p *parser, w *Workspace) { w.HomeStoreKey = p.str() }},
	{key: `,"home_ctx":`, read: func(p *parser, w *Workspace) { w.HomeCtx = p.homeCtx() }},
	{key: `,"observed_status":`, read: func(p *parser, w *Workspace) { w.ObservedStatus = contracts.ObservedStatus(p.str()) }},
	{key: `,"health_status":`, read: func(p *parser, w *Workspace) { w.HealthStatus = contracts.HealthStatus(p.str()) }},
	{key: `,"observed_at":`, read: func(p *parser, w *Workspace) { w.ObservedAt = p.time() }},
	{key: `,"operation":`, read: func(p *parser, w *Workspace) { w.Operation = contracts.Operation(p.str()) }},
	{key: `,"op_started_at":`, read: func(p *parser, w *Workspace) { w.OpStartedAt = p.time() }},
	{key: `,"op_id":`, read: func(p *parser, w *Workspace) { w.OpID = p.nullStr() }},
	{key: `,"archive_key":`, read: func(p *parser, w *Workspace) { w.ArchiveKey = p.nullStr() }},
	{key: `,"error_count":`, read: func(p *parser, w *Workspace) { w.ErrorCount = p.int() }},
	{key: `,"error_info":`, read: func(p *parser, w *Workspace) {
		w.ErrorInfo = nil
		if !p.lit("null") {
			p.object(&w.ErrorInfo)
		}
	}},
	{key: `,"error_message":`, read: func(p *parser, w *Workspace) { w.ErrorMessage = p.nullStr() }},
	{key: `,"previous_status":`, read: func(p *parser, w *Workspace) { w.PreviousStatus = p.nullStr() }},
	{key: `,"desired_state":`, read: func(p *parser, w *Workspace) { w.DesiredState = contracts.DesiredState(p.str()) }},
	{key: `,"deleted_at":`, read: func(p *parser, w *Workspace) { w.DeletedAt = p.time() }},
	{key: `,"standby_ttl_seconds":`, read: func(p *parser, w *Workspace) { w.StandbyTTLSeconds = p.int() }},
	{key: `,"archive_ttl_seconds":`, read: func(p *parser, w *Workspace) { w.ArchiveTTLSeconds = p.int() }},
	{key: `,"last_access_at":`, read: func(p *parser, w *Workspace) { w.LastAccessAt = p.time() }},
	{key: `,"created_at":`, read: func(p *parser, w *Workspace) { w.CreatedAt = p.time() }},
	{key: `,"updated_at":`, read: func(p *parser, w *Workspace) { w.UpdatedAt = p.time() }},
}

// parser reads one exact layout; any surprise makes it give up.
type parser struct {
	b   []byte
	bad bool
}

func (p *parser) end() bool { return !p.bad && len(p.b) == 0 }

// lit takes s if the input goes on with it.
func (p *parser) lit(s string) bool {
	if p.bad || !bytes.HasPrefix(p.b, []byte(s)) {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// field takes the name of the next field and its colon.
func (p *parser) field(name string) {
	if !p.lit(name) {
		p.bad = true
	}
}

// str reads a string: at once when it has no escape, else with
// encoding/json.
func (p *parser) str() string {
	if p.bad || len(p.b) == 0 || p.b[0] != '"' {
		p.bad = true
		return ""
	}
	i := 1
	for ; i < len(p.b); i++ {
		c := p.b[i]
		if c == '"' {
			break
		}
		if c < 0x20 || c == '\\' {
			return p.slowStr()
		}
	}
	if i == len(p.b) {
		p.bad = true
		return ""
	}
	if !utf8.Valid(p.b[1:i]) {
		return p.slowStr()
	}
	s := string(p.b[1:i])
	p.b = p.b[i+1:]
	return s
}

// slowStr reads a string with encoding/json.
func (p *parser) slowStr() string {
	var s string
	p.object(&s)
	return s
}

func (p *parser) nullStr() NullString {
	if p.lit("null") {
		return ""
	}
	return NullString(p.str())
}

func (p *parser) int() int {
	i := 0
	for i < len(p.b) && (p.b[i] >= '0' && p.b[i] <= '9' || i == 0 && p.b[i] == '-') {
		i++
	}
	digits := p.b[:i]
	if p.bad || len(digits) == 0 || len(digits) > 18 || digits[0] == '-' && (len(digits) == 1 || digits[1] == '0') ||
		digits[0] == '0' && len(digits) > 1 {
		p.bad = true
		return 0
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil {
		p.bad = true
		return 0
	}
	p.b = p.b[i:]
	return n
}

func (p *parser) time() Time {
	if p.lit("null") {
		return Time{}
	}
	// The text of a time has no escape: read it in place.
	if len(p.b) > 0 && p.b[0] == '"' {
		if i := bytes.IndexByte(p.b[1:], '"'); i > 0 {
			if t, ok := parseUTC(p.b[1 : 1+i]); ok {
				p.b = p.b[i+2:]
				return Time{t}
			}
		}
	}
	s := p.str()
	if p.bad {
		return Time{}
	}
	t, err := parseTime([]byte(s))
	if err != nil {
		p.bad = true
	}
	return t
}

// homeCtx reads home_ctx: null, {} and a plain restore marker at once
// (they are all a run has), anything else with encoding/json.
func (p *parser) homeCtx() *contracts.HomeCtx {
	switch {
	case p.lit("null"):
		return nil
	case p.lit("{}"):
		return &contracts.HomeCtx{}
	case bytes.HasPrefix(p.b, []byte(`{"restore_marker":"`)):
		save := p.b
		p.b = p.b[len(`{"restore_marker":`):]
		m := p.str()
		if !p.bad && m != "" && p.lit("}") {
			return &contracts.HomeCtx{RestoreMarker: m}
		}
		p.b, p.bad = save, false
	}
	var h *contracts.HomeCtx
	p.object(&h)
	return h
}

// object reads an object value (or null) with encoding/json: home_ctx
// and error_info, rare and nested.
func (p *parser) object(v any) {
	if p.bad {
		return
	}
	n := valueEnd(p.b)
	if n < 0 || json.Unmarshal(p.b[:n], v) != nil {
		p.bad = true
		return
	}
	p.b = p.b[n:]
}

// valueEnd is the length of the JSON value (an object, array, string or
// literal) b begins with, or -1; the value is not validated beyond its
// brackets and quotes (the caller decodes it).
func valueEnd(b []byte) int {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
				if depth == 0 {
					return i + 1
				}
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth < 0 {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || c == ' '):
			return i
		}
	}
	if depth == 0 && !inStr && len(b) > 0 {
		return len(b)
	}
	return -1
}
