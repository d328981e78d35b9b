package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// LastMember is where the value of the last member named key starts in
// the object at b[i] (b is valid JSON), or false when the object has no
// such member or a key the scanner does not read in place (one with an
// escape or bytes that are not UTF-8): a caller then decodes. The last of
// duplicate keys is the one encoding/json keeps.
func LastMember(b []byte, i int, key string) (int, bool) {
	found := -1
	i = SkipSpace(b, i+1)
	if b[i] == '}' {
		return 0, false
	}
	for {
		// b[i] is the opening quote of a key
		end := i + 1
		for b[end] != '"' {
			if b[end] == '\\' {
				return 0, false
			}
			end++
		}
		k := b[i+1 : end]
		if !utf8.Valid(k) {
			return 0, false
		}
		i = SkipSpace(b, end+1) // at ':'
		i = SkipSpace(b, i+1)   // at the value
		if string(k) == key {
			found = i
		}
		i = SkipSpace(b, SkipValue(b, i))
		if b[i] == '}' {
			break
		}
		i = SkipSpace(b, i+1) // past ','
	}
	return found, found >= 0
}

// SkipValue is the index just past the value starting at b[i] (b is
// valid JSON).
func SkipValue(b []byte, i int) int {
	depth := 0
	for {
		switch c := b[i]; c {
		case '"':
			i++
			for b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			if isSpace(c) || c == ',' || c == ':' {
				i++
			} else { // a number or a literal
				for i < len(b) && isNumberByte(b[i]) {
					i++
				}
			}
		}
		if depth == 0 {
			return i
		}
	}
}

// isNumberByte reports whether c can belong to a number or a literal
// (true, false, null).
func isNumberByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isSpace reports whether c is JSON white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace is the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// Valid is json.Valid(b), with a quicker reading of the grammar in front
// of it.
func Valid(b []byte) bool { return quickValid(b) || json.Valid(b) }

// Lookup is Valid(b) and, when b is valid, where the value at path starts:
// path's dot-separated keys read from the root object down, each by
// LastMember (Walk). found is false where that walk stops: a level that is
// not an object, a key missing or one LastMember does not read in place.
// When quickValid reads b, both come from that one pass over it: the walk
// scanned each level's object again after the validation had.
func Lookup(b []byte, path string) (at int, found, valid bool) {
	var p pathTrack
	if p.init(path) && quickScan(b, &p) {
		at, found = p.result(b)
		return at, found, true
	}
	if !Valid(b) {
		return 0, false, false
	}
	at, found = Walk(b, path)
	return at, found, true
}

// Walk is where the value at path starts in b (valid JSON): from the root
// object, the last member named by each of path's dot-separated keys
// (LastMember), every level but the last an object.
func Walk(b []byte, path string) (int, bool) {
	i := SkipSpace(b, 0)
	for more := true; more; {
		var seg string
		seg, path, more = strings.Cut(path, ".")
		if b[i] != '{' {
			return 0, false
		}
		at, ok := LastMember(b, i, seg)
		if !ok {
			return 0, false
		}
		i = at
	}
	return i, true
}

// maxPathKeys is the most keys a path Lookup follows in quickScan's pass
// (a longer one is walked after it).
const maxPathKeys = 16

// pathTrack follows a path through quickScan's pass: the objects on the
// path are open from the root down (levels 0 … chain-1, the object at
// level d holding key d), and match[d] is where the value of the last
// member named key d of the object at level d seen so far starts (-1:
// none yet). A later member of that name replaces it and forgets what
// was found below it, as LastMember keeps the last of duplicate keys.
type pathTrack struct {
	keys  [maxPathKeys]string
	n     int
	match [maxPathKeys]int
	// escaped[d]: a key of the object at level d has an escape (LastMember
	// does not read that object).
	escaped [maxPathKeys]bool
	chain   int
	// next: the value starting is a match whose object, if it is one,
	// is on the path.
	next bool
}

// init splits path into its keys; false when it has more than
// maxPathKeys.
func (p *pathTrack) init(path string) bool {
	for more := true; more; p.n++ {
		if p.n == maxPathKeys {
			return false
		}
		p.keys[p.n], path, more = strings.Cut(path, ".")
		p.match[p.n] = -1
	}
	return true
}

// open is told each container opened, at level (the containers open
// around it): an object is on the path at the root or as a match's value.
func (p *pathTrack) open(level int, object, next bool) {
	if object && (level == 0 || next) && level == p.chain && level < p.n {
		p.chain = level + 1
		p.match[level], p.escaped[level] = -1, false
	}
}

// member is told each member's key (the text between its quotes) and
// where its value starts, in the object at level.
func (p *pathTrack) member(level int, key []byte, value int) {
	p.next = false
	if level+1 != p.chain {
		return // an object off the path
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		p.escaped[level] = true
		return
	}
	if string(key) != p.keys[level] {
		return
	}
	p.match[level] = value
	for d := level + 1; d < p.n; d++ {
		p.match[d], p.escaped[d] = -1, false
	}
	p.next = level+1 < p.n
}

// result is Walk's answer from the pass over b (valid JSON).
func (p *pathTrack) result(b []byte) (int, bool) {
	if b[SkipSpace(b, 0)] != '{' {
		return 0, false
	}
	for d := range p.n {
		if p.escaped[d] || p.match[d] < 0 || d < p.n-1 && b[p.match[d]] != '{' {
			return 0, false
		}
	}
	return p.match[p.n-1], true
}

// quickValid reports that b is one valid JSON value, for the bodies
// sources serve: a strict reading of the grammar as encoding/json's
// scanner reads it that never says yes to what json.Valid refuses, and
// says no (leaving json.Valid to decide) to anything it does not read: a
// byte outside ASCII, nesting deeper than 64. encoding/json's scanner was
// two fifths of extracting a value, which the daemon and the checkers do
// for every GET. TestQuickValidIsJSONValid holds it to json.Valid.
func quickValid(b []byte) bool { return quickScan(b, nil) }

// quickScan is quickValid, telling p (when not nil) the containers
// opened and closed and the members read.
func quickScan(b []byte, p *pathTrack) bool {
	var open [64]byte // the closing brackets of the containers open
	depth := 0
	i := SkipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		var ok bool
		next := false
		if p != nil {
			next, p.next = p.next, false
		}
		switch c := b[i]; c {
		case '{', '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == end {
				i++ // an empty container is a whole value
				break
			}
			if depth == len(open) {
				return false
			}
			open[depth] = end
			depth++
			if p != nil {
				p.open(depth-1, end == '}', next)
			}
			if end == '}' {
				if i, ok = member(b, i, depth-1, p); !ok {
					return false
				}
			}
			continue
		case '"':
			if i, ok = skipString(b, i); !ok {
				return false
			}
		case 't':
			if i, ok = skipLiteral(b, i, "true"); !ok {
				return false
			}
		case 'f':
			if i, ok = skipLiteral(b, i, "false"); !ok {
				return false
			}
		case 'n':
			if i, ok = skipLiteral(b, i, "null"); !ok {
				return false
			}
		default:
			if i, ok = NumberEnd(b, i); !ok {
				return false
			}
		}
		// A value ended just before b[i]: close containers, or go on to
		// the next element or member.
		for {
			i = SkipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			if b[i] == open[depth-1] {
				depth--
				i++
				if p != nil && p.chain > depth {
					p.chain = depth
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = SkipSpace(b, i+1)
			if open[depth-1] == '}' {
				if i, ok = member(b, i, depth-1, p); !ok {
					return false
				}
			}
			break
		}
	}
}

// member is memberKey in the object at level, telling p (when not nil)
// the key read.
func member(b []byte, i, level int, p *pathTrack) (int, bool) {
	v, ok := memberKey(b, i)
	if ok && p != nil {
		end := bytes.LastIndexByte(b[:v], '"') // the key's closing quote, before the colon
		p.member(level, b[i+1:end], v)
	}
	return v, ok
}

// memberKey reads a member's key and colon at b[i] and returns where its
// value starts.
func memberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := skipString(b, i)
	if !ok {
		return 0, false
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return SkipSpace(b, i+1), true
}

// skipString is the index past the string starting at b[i] (a quote):
// no control character, only the escapes JSON has, ASCII only.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20 || c >= 0x80:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// skipLiteral is the index past lit at b[i].
func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// NumberEnd is the index past the number at b[i], false when there is
// none:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func NumberEnd(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// skipDigits is the index past the decimal digits at b[i].
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// PlainString is the text of the string at b[i] (b valid JSON, b[i] its
// opening quote) when it holds no escape; false otherwise (a caller then
// decodes). The text is a sub-slice of b, not checked for UTF-8.
func PlainString(b []byte, i int) ([]byte, bool) {
	end := i + 1
	for b[end] != '"' {
		if b[end] == '\\' {
			return nil, false
		}
		end++
	}
	return b[i+1 : end], true
}

// LiteralEnd is the index just past the number or literal (true, false,
// null) starting at b[i] (b valid JSON).
func LiteralEnd(b []byte, i int) int {
	for i < len(b) && isNumberByte(b[i]) {
		i++
	}
	return i
}

// Shortest reports, without parsing it, that the number literal lit (of
// valid JSON) is strconv.FormatFloat(v, 'f', -1, 64) of the double v it
// denotes (a negative zero rendered as 0): no exponent, no trailing zero
// after a decimal point, not a negative zero, at most 15 digits from its
// first non-zero one and at most 40 bytes. A decimal of at most 15
// significant digits in the normal range is the only one of so few digits
// that reads back as its double (DBL_DIG is 15), so it is the shortest,
// and 'f' writes its digits where they stand. False says nothing: parse.
func Shortest(lit []byte) bool {
	if len(lit) == 0 || len(lit) > 40 {
		return false
	}
	sig, nonZero, point := 0, false, false
	for j, c := range lit {
		switch {
		case c == '-' && j == 0:
		case c == '.':
			point = true
		case c >= '1' && c <= '9':
			nonZero = true
			sig++
		case c == '0':
			if nonZero {
				sig++
			}
		default: // an exponent
			return false
		}
	}
	switch {
	case sig > 15, !nonZero && lit[0] == '-', point && lit[len(lit)-1] == '0':
		return false
	}
	return true
}
