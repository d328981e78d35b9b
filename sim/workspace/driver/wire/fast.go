package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The fast paths: the messages of a port call's round trip and of a step
// are most of a run's traffic, and encoding/json's reflection over the
// whole FromChild or FromHarness struct (a Decoder per message, unknown
// fields checked) was a quarter of the harness's CPU. Each fast path
// reads one exact byte layout — the one the Go client and the harness
// write — and gives up on anything else, which the strict decoder then
// reads as before. A fast path accepts a line only when the strict
// decoder reads it the same way; TestFastPathsAgreeWithTheStrictDecoder
// and FuzzFastPathsAgree hold it to that.

// Layouts of the fast paths.
const (
	callPrefix    = `{"type":"call","method":"`
	argsInfix     = `","args":`
	leaderTrue    = `,"leader":true`
	leaderFalse   = `,"leader":false`
	donePrefix    = `{"type":"done","next":"`
	doneLeaderFix = `","leader":`
	okPrefix      = `{"type":"ok","value":`
	batchPrefix   = `{"type":"batch","calls":`
	stepPrefix    = `{"type":"step","now":"`
	apiPrefix     = `{"type":"api","now":"`
	doneValuePfx  = `{"type":"done","value":`
)

var (
	boolTrue  = true
	boolFalse = false
)

// fastFromChild reads a call, a batch, a step's done or an API call's
// done with a value.
func fastFromChild(line []byte) (FromChild, bool) {
	if rest, ok := bytes.CutPrefix(line, []byte(callPrefix)); ok {
		return fastCall(rest)
	}
	if rest, ok := bytes.CutPrefix(line, []byte(donePrefix)); ok {
		return fastDone(rest)
	}
	if rest, ok := bytes.CutPrefix(line, []byte(doneValuePfx)); ok {
		return fastDoneValue(rest)
	}
	if rest, ok := bytes.CutPrefix(line, []byte(batchPrefix)); ok {
		return fastBatch(rest)
	}
	return FromChild{}, false
}

// fastCall reads `M","args":{…}[,"leader":B]}` (after the call prefix).
func fastCall(rest []byte) (FromChild, bool) {
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || !methodName(rest[:i]) {
		return FromChild{}, false
	}
	method := rest[:i]
	body, ok := bytes.CutPrefix(rest[i:], []byte(argsInfix))
	if !ok || len(body) == 0 || body[len(body)-1] != '}' {
		return FromChild{}, false
	}
	body = body[:len(body)-1]
	m := FromChild{Type: TCall}
	// The arguments are an object: they end with '}', a leader flag
	// after them with a letter.
	if a, ok := bytes.CutSuffix(body, []byte(leaderTrue)); ok {
		body, m.Leader = a, &boolTrue
	} else if a, ok := bytes.CutSuffix(body, []byte(leaderFalse)); ok {
		body, m.Leader = a, &boolFalse
	}
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' || !json.Valid(body) {
		return FromChild{}, false
	}
	m.Method, m.Args = string(method), bytes.Clone(body)
	return m, true
}

// fastDone reads `T","leader":B}` or `T","wake":W,"leader":B}` (after
// the done prefix), W a wake-up as the Go client writes it (fastWake).
func fastDone(rest []byte) (FromChild, bool) {
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return FromChild{}, false
	}
	m := FromChild{Type: TDone}
	tail := rest[i:]
	if w, ok := bytes.CutPrefix(tail, []byte(`","wake":`)); ok {
		wake, n, ok := fastWake(w)
		if !ok || n >= len(w) || w[n] != ',' {
			return FromChild{}, false
		}
		m.Wake = &wake
		tail = append([]byte{'"'}, w[n:]...) // `",leader":B}`, as without a wake-up
	}
	switch string(tail) {
	case doneLeaderFix + "true}":
		m.Leader = &boolTrue
	case doneLeaderFix + "false}":
		m.Leader = &boolFalse
	default:
		return FromChild{}, false
	}
	next, err := parseTime(rest[:i])
	if err != nil {
		return FromChild{}, false
	}
	m.Next = &next
	return m, true
}

// fastDoneValue reads `V}` (after the prefix of a done with a value),
// V an object or an array: an API call's row or rows (DR607).
func fastDoneValue(rest []byte) (FromChild, bool) {
	if len(rest) < 3 || rest[0] != '{' && rest[0] != '[' || rest[len(rest)-1] != '}' {
		return FromChild{}, false
	}
	v := rest[:len(rest)-1]
	if valueEnd(v) != len(v) || !json.Valid(v) {
		return FromChild{}, false
	}
	return FromChild{Type: TDone, Value: bytes.Clone(v)}, true
}

// fastWake reads a wake-up as the Go client writes it —
// {"calls":[{"method":"M","args":{…}},…],"every_ns":N,"until":"T"}, until
// optional — and says how many bytes it took.
func fastWake(b []byte) (w Wake, n int, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"calls":`))
	if !ok {
		return Wake{}, 0, false
	}
	var used int
	if w.Calls, used, ok = fastCalls(rest); !ok {
		return Wake{}, 0, false
	}
	rest, ok = bytes.CutPrefix(rest[used:], []byte(`,"every_ns":`))
	if !ok {
		return Wake{}, 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 || rest[0] == '0' {
		return Wake{}, 0, false
	}
	every, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return Wake{}, 0, false
	}
	w.EveryNs, rest = every, rest[i:]
	if r, ok := bytes.CutPrefix(rest, []byte(`,"until":"`)); ok {
		j := bytes.IndexByte(r, '"')
		if j <= 0 || bytes.IndexByte(r[:j], '\\') >= 0 {
			return Wake{}, 0, false
		}
		until, err := parseTime(r[:j])
		if err != nil {
			return Wake{}, 0, false
		}
		w.Until, rest = &until, r[j+1:]
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`}`))
	if !ok {
		return Wake{}, 0, false
	}
	return w, len(b) - len(rest), true
}

// fastCalls reads a non-empty array of calls, [{"method":"M","args":{…}},…],
// and says how many bytes it took.
func fastCalls(b []byte) (calls []Call, n int, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`[`))
	if !ok {
		return nil, 0, false
	}
	for {
		rest, ok = bytes.CutPrefix(rest, []byte(`{"method":"`))
		if !ok {
			return nil, 0, false
		}
		i := bytes.IndexByte(rest, '"')
		if i <= 0 || !methodName(rest[:i]) {
			return nil, 0, false
		}
		method := string(rest[:i])
		rest, ok = bytes.CutPrefix(rest[i:], []byte(`","args":`))
		if !ok {
			return nil, 0, false
		}
		end := objectEnd(rest)
		if end < 0 || !json.Valid(rest[:end]) {
			return nil, 0, false
		}
		calls = append(calls, Call{Method: method, Args: bytes.Clone(rest[:end])})
		rest, ok = bytes.CutPrefix(rest[end:], []byte(`}`))
		if !ok {
			return nil, 0, false
		}
		if r, more := bytes.CutPrefix(rest, []byte(`,`)); more {
			rest = r
			continue
		}
		if rest, ok = bytes.CutPrefix(rest, []byte(`]`)); !ok {
			return nil, 0, false
		}
		return calls, len(b) - len(rest), true
	}
}

// fastBatch reads `[calls][,"leader":B]}` (after the batch prefix).
func fastBatch(rest []byte) (FromChild, bool) {
	calls, n, ok := fastCalls(rest)
	if !ok {
		return FromChild{}, false
	}
	m := FromChild{Type: TBatch, Calls: calls}
	switch string(rest[n:]) {
	case "}":
	case leaderTrue + "}":
		m.Leader = &boolTrue
	case leaderFalse + "}":
		m.Leader = &boolFalse
	default:
		return FromChild{}, false
	}
	return m, true
}

// objectEnd is the length of the object b begins with (brackets and
// strings matched, not validated), or -1.
func objectEnd(b []byte) int {
	if len(b) == 0 || b[0] != '{' {
		return -1
	}
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inStr && c == '\\':
			i++
		case inStr:
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// CutOK returns the value of an ok answer in the layout the harness
// writes ({"type":"ok","value":V}), without checking V: the caller must
// read V with a decoder that rejects what is not JSON (encoding/json, or
// a reader of one exact layout such as ParseWorkspaces), which then
// checks it once instead of twice.
func CutOK(line []byte) (value []byte, ok bool) {
	v, ok := bytes.CutPrefix(line, []byte(okPrefix))
	if !ok {
		return nil, false
	}
	v, ok = bytes.CutSuffix(v, []byte("}"))
	if !ok || len(v) == 0 || space(v[0]) || space(v[len(v)-1]) {
		return nil, false
	}
	return v, true
}

// fastFromHarness reads an ok answer or a step request.
func fastFromHarness(line []byte) (FromHarness, bool) {
	if v, ok := bytes.CutPrefix(line, []byte(okPrefix)); ok {
		v, ok = bytes.CutSuffix(v, []byte("}"))
		// json.Valid allows white space around the value, which the
		// strict decoder drops.
		if !ok || len(v) == 0 || space(v[0]) || space(v[len(v)-1]) || !json.Valid(v) {
			return FromHarness{}, false
		}
		return FromHarness{Type: TOK, Value: bytes.Clone(v)}, true
	}
	if rest, ok := bytes.CutPrefix(line, []byte(apiPrefix)); ok {
		return fastAPI(rest)
	}
	if rest, ok := bytes.CutPrefix(line, []byte(stepPrefix)); ok {
		i := bytes.IndexByte(rest, '"')
		if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
			return FromHarness{}, false
		}
		m := FromHarness{Type: TStep}
		switch tail := rest[i:]; {
		case string(tail) == `"}`:
		case bytes.HasPrefix(tail, []byte(`","answers":[`)):
			if m.Answers, ok = fastOKs(tail[len(`","answers":[`):]); !ok {
				return FromHarness{}, false
			}
		default:
			return FromHarness{}, false
		}
		now, err := parseTime(rest[:i])
		if err != nil {
			return FromHarness{}, false
		}
		m.Now = &now
		return m, true
	}
	return FromHarness{}, false
}

// fastAPI reads `T","method":"M","args":{…}}` (after the prefix of an
// API request), as the harness writes it (DR607).
func fastAPI(rest []byte) (FromHarness, bool) {
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return FromHarness{}, false
	}
	tail, ok := bytes.CutPrefix(rest[i:], []byte(`","method":"`))
	if !ok {
		return FromHarness{}, false
	}
	j := bytes.IndexByte(tail, '"')
	if j <= 0 || !methodName(tail[:j]) {
		return FromHarness{}, false
	}
	args, ok := bytes.CutPrefix(tail[j:], []byte(argsInfix))
	if !ok || len(args) < 3 || args[0] != '{' || args[len(args)-1] != '}' {
		return FromHarness{}, false
	}
	args = args[:len(args)-1]
	if valueEnd(args) != len(args) || !json.Valid(args) {
		return FromHarness{}, false
	}
	now, err := parseTime(rest[:i])
	if err != nil {
		return FromHarness{}, false
	}
	return FromHarness{Type: TAPI, Now: &now, Method: string(tail[:j]), Args: bytes.Clone(args)}, true
}

// fastOKs reads the answers of a step, `A,…]}` (after the answers' '['),
// when every one is an ok as AppendOK writes it: null, an array or an
// object. An error (rare: a wake-up call failed) takes the strict path.
func fastOKs(b []byte) ([]FromHarness, bool) {
	var out []FromHarness
	for {
		v, ok := bytes.CutPrefix(b, []byte(okPrefix))
		if !ok || len(v) == 0 {
			return nil, false
		}
		n := 4
		switch v[0] {
		case 'n':
			if !bytes.HasPrefix(v, null) {
				return nil, false
			}
		case '[', '{':
			if n = valueEnd(v); n <= 0 || !json.Valid(v[:n]) {
				return nil, false
			}
		default:
			return nil, false
		}
		out = append(out, FromHarness{Type: TOK, Value: bytes.Clone(v[:n])})
		switch b = v[n:]; {
		case string(b) == "}]}":
			return out, true
		case bytes.HasPrefix(b, []byte("},")):
			b = b[2:]
		default:
			return nil, false
		}
	}
}

// space is JSON's white space.
func space(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// methodName reports whether b is spelt like a method: lower-case
// letters, '_' and '.' (every method is; anything else takes the strict
// path and its error).
func methodName(b []byte) bool {
	for _, c := range b {
		if (c < 'a' || c > 'z') && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// AppendStep appends the line of a step request at now: the bytes
// AppendLine writes for FromHarness{Type: TStep, Now: &now}, without
// reflection.
func AppendStep(b []byte, now Time) []byte {
	if now.IsZero() {
		return append(b, `{"type":"step","now":null}`+"\n"...)
	}
	b = append(b, stepPrefix...)
	b = AppendRFC3339(b, now.Time)
	return append(b, '"', '}', '\n')
}

// AppendStepAnswers appends the line of a step request at now that
// carries answers (version 2): each an ok or error message without its
// newline, as AppendOK and AppendLine write them.
func AppendStepAnswers(b []byte, now Time, answers [][]byte) []byte {
	b = AppendStep(b, now)
	b = append(b[:len(b)-2], `,"answers":[`...)
	for i, a := range answers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a...)
	}
	return append(b, ']', '}', '\n')
}

// AppendAnswers appends the line answering a batch: answers are its
// calls' answers, in order, each an ok or error message without its
// newline.
func AppendAnswers(b []byte, answers [][]byte) []byte {
	b = append(b, `{"type":"answers","answers":[`...)
	for i, a := range answers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a...)
	}
	return append(b, ']', '}', '\n')
}
