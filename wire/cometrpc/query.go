package cometrpc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a parsed subscription query of CometBFT's event query language,
// restricted to what the oracle system needs: conditions `key='value'` and
// `key EXISTS` joined by AND. Hand-written because CometBFT's own parser
// lives in the node module this project does not import; it follows that
// grammar (keys of letters, digits, '.', '_', '-'; values in single quotes,
// with no escapes) and rejects the rest (numbers, dates, <, >, CONTAINS)
// with an error.
type Query struct {
	text  string
	conds []condition
}

type condition struct {
	key    string
	exists bool   // key EXISTS
	value  string // key='value'
}

// ParseQuery parses s.
func ParseQuery(s string) (*Query, error) {
	p := &queryParser{s: s}
	q := &Query{text: s}
	for {
		c, err := p.condition()
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", s, err)
		}
		q.conds = append(q.conds, c)
		p.space()
		if p.eof() {
			return q, nil
		}
		if !p.keyword("AND") {
			return nil, fmt.Errorf("query %q: want AND at offset %d", s, p.i)
		}
	}
}

// String is the query as written.
func (q *Query) String() string { return q.text }

// Matches reports whether a frame's events map satisfies every condition:
// key='value' when one of the key's values equals value, key EXISTS when
// the key has at least one value.
func (q *Query) Matches(events map[string][]string) bool {
	return q.MatchesLookup(eventsMap(events))
}

// Lookup answers a query's conditions about a frame's events without the
// events map being built: a producer with many frames and few subscribers
// can match its frames cheaply.
type Lookup interface {
	// HasValue reports whether key has value among its values.
	HasValue(key, value string) bool
	// Exists reports whether key has at least one value.
	Exists(key string) bool
}

// MatchesLookup is Matches over a Lookup.
func (q *Query) MatchesLookup(l Lookup) bool {
	for _, c := range q.conds {
		if c.exists {
			if !l.Exists(c.key) {
				return false
			}
		} else if !l.HasValue(c.key, c.value) {
			return false
		}
	}
	return true
}

// eventsMap is a Lookup over an events map.
type eventsMap map[string][]string

func (m eventsMap) HasValue(key, value string) bool {
	for _, v := range m[key] {
		if v == value {
			return true
		}
	}
	return false
}

func (m eventsMap) Exists(key string) bool { return len(m[key]) > 0 }

type queryParser struct {
	s string
	i int
}

func (p *queryParser) eof() bool { return p.i >= len(p.s) }

func (p *queryParser) peek() rune {
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return r
}

func (p *queryParser) space() {
	for !p.eof() {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !unicode.IsSpace(r) {
			return
		}
		p.i += n
	}
}

// word reads a run of tag characters.
func (p *queryParser) word() string {
	start := p.i
	for !p.eof() {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !(r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			break
		}
		p.i += n
	}
	return p.s[start:p.i]
}

// keyword consumes kw if it is the next whole word.
func (p *queryParser) keyword(kw string) bool {
	save := p.i
	if p.word() == kw {
		return true
	}
	p.i = save
	return false
}

func (p *queryParser) condition() (condition, error) {
	p.space()
	if p.eof() {
		return condition{}, fmt.Errorf("want a condition at offset %d", p.i)
	}
	if r := p.peek(); !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
		return condition{}, fmt.Errorf("invalid input %q at offset %d", r, p.i)
	}
	key := p.word()
	if key == "AND" || key == "EXISTS" || key == "CONTAINS" {
		return condition{}, fmt.Errorf("want a key, got %s at offset %d", key, p.i-len(key))
	}
	p.space()
	if p.keyword("EXISTS") {
		return condition{key: key, exists: true}, nil
	}
	if p.eof() || p.s[p.i] != '=' {
		return condition{}, fmt.Errorf("want = or EXISTS after %s at offset %d (only = and EXISTS are supported)", key, p.i)
	}
	p.i++
	p.space()
	if p.eof() || p.s[p.i] != '\'' {
		return condition{}, fmt.Errorf("want a quoted value after %s= at offset %d (numbers and dates are not supported)", key, p.i)
	}
	end := strings.IndexByte(p.s[p.i+1:], '\'')
	if end < 0 {
		return condition{}, fmt.Errorf("unterminated value at offset %d", p.i)
	}
	value := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return condition{key: key, value: value}, nil
}
