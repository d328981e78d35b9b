package wire

import (
	"bytes"
	"strconv"
	"unicode/utf8"
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
