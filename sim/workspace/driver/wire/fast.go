package wire

import (
	"bytes"
	"encoding/json"
	"time"
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
	stepPrefix    = `{"type":"step","now":"`
)

var (
	boolTrue  = true
	boolFalse = false
)

// fastFromChild reads a call or a step's done.
func fastFromChild(line []byte) (FromChild, bool) {
	if rest, ok := bytes.CutPrefix(line, []byte(callPrefix)); ok {
		return fastCall(rest)
	}
	if rest, ok := bytes.CutPrefix(line, []byte(donePrefix)); ok {
		return fastDone(rest)
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

// fastDone reads `T","leader":B}` (after the done prefix).
func fastDone(rest []byte) (FromChild, bool) {
	i := bytes.IndexByte(rest, '"')
	if i <= 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return FromChild{}, false
	}
	m := FromChild{Type: TDone}
	switch string(rest[i:]) {
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
	if rest, ok := bytes.CutPrefix(line, []byte(stepPrefix)); ok {
		t, ok := bytes.CutSuffix(rest, []byte(`"}`))
		if !ok || len(t) == 0 || bytes.IndexByte(t, '"') >= 0 || bytes.IndexByte(t, '\\') >= 0 {
			return FromHarness{}, false
		}
		now, err := parseTime(t)
		if err != nil {
			return FromHarness{}, false
		}
		return FromHarness{Type: TStep, Now: &now}, true
	}
	return FromHarness{}, false
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
	b = now.UTC().AppendFormat(b, time.RFC3339Nano)
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
