package wire

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/wsconverge/converge/contracts"
)

// FastArgs is an arguments type that can read the one layout a client
// writes for it — {"lease":7}, {"id":"…"} — without reflection: most
// calls have one argument, and decoding them with encoding/json was a
// fifth of the harness's CPU. DecodeFast reports false for anything else
// (white space, another field, an escape), which the strict decoder then
// reads; a line it accepts reads the same as with the strict decoder
// (TestFastArgsAgreeWithTheStrictDecoder, FuzzFastArgsAgree).
type FastArgs interface {
	DecodeFast(raw []byte) bool
}

// DecodeFast reads {}.
func (a *None) DecodeFast(raw []byte) bool { return string(raw) == "{}" }

// DecodeFast reads {"lease":N}.
func (a *Lease) DecodeFast(raw []byte) bool { return fastInt(raw, `{"lease":`, &a.Lease) }

// DecodeFast reads {"listener":N}.
func (a *Listener) DecodeFast(raw []byte) bool { return fastInt(raw, `{"listener":`, &a.Listener) }

// DecodeFast reads {"subscription":N}.
func (a *Subscription) DecodeFast(raw []byte) bool {
	return fastInt(raw, `{"subscription":`, &a.Subscription)
}

// DecodeFast reads {"holder":"…"}.
func (a *TryAcquire) DecodeFast(raw []byte) bool { return fastString(raw, `{"holder":`, &a.Holder) }

// DecodeFast reads {"id":"…"}.
func (a *ID) DecodeFast(raw []byte) bool { return fastString(raw, `{"id":`, &a.ID) }

// DecodeFast reads {"key":"…"}.
func (a *Key) DecodeFast(raw []byte) bool { return fastString(raw, `{"key":`, &a.Key) }

// DecodeFast reads {"filter":"…"}.
func (a *StoreList) DecodeFast(raw []byte) bool {
	var f string
	if !fastString(raw, `{"filter":`, &f) {
		return false
	}
	a.Filter = Filter(f)
	return true
}

// fastInt reads prefix, a decimal integer without sign, leading zero or
// exponent that fits an int64, and "}".
func fastInt(raw []byte, prefix string, out *int64) bool {
	rest, ok := bytes.CutPrefix(raw, []byte(prefix))
	if !ok {
		return false
	}
	digits, ok := bytes.CutSuffix(rest, []byte("}"))
	if !ok || len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return false
	}
	*out = n
	return true
}

// fastString reads prefix, a string of valid UTF-8 without escapes or
// control characters, and "}".
func fastString(raw []byte, prefix string, out *string) bool {
	rest, ok := bytes.CutPrefix(raw, []byte(prefix))
	if !ok {
		return false
	}
	q, ok := bytes.CutSuffix(rest, []byte(`"}`))
	if !ok || len(q) == 0 || q[0] != '"' {
		return false
	}
	q = q[1:]
	for _, c := range q {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	if !utf8.Valid(q) {
		return false
	}
	*out = string(q)
	return true
}

// DecodeFast reads {"writer":{…},"ids":[…],"at":…} as the Go client
// writes it: a health pass marks the whole fleet observed, and its list
// of ids was the longest arguments a run decoded with encoding/json.
func (a *StoreMarkObserved) DecodeFast(raw []byte) bool {
	p := parser{b: raw}
	if !p.lit(`{"writer":`) {
		return false
	}
	w, ok := p.writer()
	if !ok || !p.lit(`,"ids":`) {
		return false
	}
	var ids []string
	switch {
	case p.lit("null"):
	case p.lit("[]"):
		ids = []string{}
	case p.lit("["):
		for {
			ids = append(ids, p.str())
			if p.lit("]") {
				break
			}
			if !p.lit(",") {
				return false
			}
		}
	default:
		return false
	}
	if !p.lit(`,"at":`) {
		return false
	}
	at, ok := p.exactTime()
	if !ok || !p.lit("}") || !p.end() {
		return false
	}
	a.Writer, a.IDs, a.At = w, ids, at
	return true
}

// writer reads a Writer's object with its fields in the order
// encoding/json writes them.
func (p *parser) writer() (w Writer, ok bool) {
	if !p.lit(`{"component":`) {
		return w, false
	}
	w.Component = contracts.Component(p.str())
	if p.lit(`,"instance":`) {
		w.Instance = p.str()
	}
	if p.lit(`,"epoch":`) {
		w.Epoch = int64(p.int())
	}
	if p.lit(`,"on_behalf":`) {
		w.OnBehalf = contracts.Component(p.str())
	}
	return w, p.lit("}")
}

// exactTime reads null or a time in the layout AppendRFC3339 writes (no
// escape: Time.UnmarshalJSON reads the text as it is).
func (p *parser) exactTime() (Time, bool) {
	if p.lit("null") {
		return Time{}, true
	}
	if p.bad || len(p.b) == 0 || p.b[0] != '"' {
		return Time{}, false
	}
	i := bytes.IndexByte(p.b[1:], '"')
	if i < 0 {
		return Time{}, false
	}
	t, ok := parseUTC(p.b[1 : 1+i])
	if !ok {
		return Time{}, false
	}
	p.b = p.b[i+2:]
	return Time{t}, true
}
