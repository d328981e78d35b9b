package datasource

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/internal/streams"
)

// Class is what a GET gets.
type Class string

const (
	ClassOK        Class = "ok"          // 200 and the value at the path
	ClassStatus    Class = "status"      // another status (fetch failure)
	ClassMalformed Class = "malformed"   // 200 and a body that is not JSON
	ClassMissing   Class = "missing-key" // 200 and no value at the path
	ClassNull      Class = "null"        // 200 and null at the path
	ClassArray     Class = "array"       // 200 and a top-level array
	ClassEmpty     Class = "empty"       // 200 and "" at the path
	ClassReset     Class = "reset"       // the connection is reset
	ClassHang      Class = "hang"        // no answer until the client gives up
	ClassUnknown   Class = "unknown"     // 404: no such request or endpoint
)

// Classes lists every class a script can draw, in a fixed order.
var Classes = []Class{ClassOK, ClassStatus, ClassMalformed, ClassMissing, ClassNull, ClassArray, ClassEmpty,
	ClassReset, ClassHang}

// Weight is a class's relative weight in a script's mix.
type Weight struct {
	Class  Class
	Weight uint32
}

// Window forces a class on a request's GETs that arrive in [From, To)
// (fault F8); Endpoint −1 means every endpoint.
type Window struct {
	From, To time.Time
	Endpoint int
	Class    Class
}

// Script is one request's behaviour.
type Script struct {
	// Path is where the value lives in the body (the doc's parse_rule, a
	// dot path of object keys); empty: "price".
	Path string
	// Mix weighs the classes of an answer; empty: always ok.
	Mix []Weight
	// Latency is the [min, max] time from arrival to the answer.
	Latency [2]time.Duration
	// Statuses are the statuses a ClassStatus answer draws from; empty:
	// 500, 502, 503, 404, 429.
	Statuses []int
	// Windows are fault windows, applied in order (the first that holds).
	Windows []Window
}

// Healthy is a script whose GETs all succeed after 10–200 ms.
func Healthy(path string) Script {
	return Script{Path: path, Latency: [2]time.Duration{10 * time.Millisecond, 200 * time.Millisecond}}
}

// Flaky is a script that answers ok most of the time and draws every
// failure now and then.
func Flaky(path string) Script {
	return Script{Path: path, Latency: [2]time.Duration{10 * time.Millisecond, 2 * time.Second}, Mix: []Weight{
		{ClassOK, 80}, {ClassStatus, 5}, {ClassMalformed, 2}, {ClassMissing, 2}, {ClassNull, 2}, {ClassArray, 2},
		{ClassEmpty, 2}, {ClassReset, 3}, {ClassHang, 2}}}
}

// DefaultHangFor is how long a hanging endpoint holds a GET before the
// server gives up and drops the connection (well past any daemon's
// timeout).
const DefaultHangFor = 10 * time.Minute

// Sources is the fake data sources of a run. It is safe for concurrent
// use.
type Sources struct {
	mu       sync.Mutex
	seed     uint64
	scripts  map[uint64]*Script
	gets     map[endpointKey]uint64 // GETs so far, by endpoint
	exchange int64
	sink     func(history.Event)
	// headers and sorted are the last headers a GET came with and their
	// sorted copy, which its record holds: a client sends the same ones
	// every time, and records are never written to, so they share it.
	headers, sorted []history.Header
	// HangFor is how long a hang lasts before the server drops the
	// connection; set it before the first GET.
	HangFor time.Duration
}

type endpointKey struct {
	r uint64
	k int
}

// New returns sources drawing from seed and recording to sink (nil: no
// records). Every request is unknown until Set.
func New(seed uint64, sink func(history.Event)) *Sources {
	return &Sources{seed: seed, scripts: map[uint64]*Script{}, gets: map[endpointKey]uint64{}, sink: sink,
		HangFor: DefaultHangFor}
}

// Set gives request r its script (replacing any earlier one).
func (s *Sources) Set(r uint64, sc Script) error {
	if err := sc.validate(); err != nil {
		return fmt.Errorf("data source script of request %d: %w", r, err)
	}
	sc.Mix = slices.Clone(sc.Mix)
	sc.Statuses = slices.Clone(sc.Statuses)
	sc.Windows = slices.Clone(sc.Windows)
	s.mu.Lock()
	s.scripts[r] = &sc
	s.mu.Unlock()
	return nil
}

// AddWindow adds a fault window to request r's script.
func (s *Sources) AddWindow(r uint64, w Window) error {
	if !knownClass(w.Class) {
		return fmt.Errorf("fault window for request %d: unknown class %q", r, w.Class)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.scripts[r]
	if !ok {
		return fmt.Errorf("fault window for request %d: no script", r)
	}
	sc.Windows = append(sc.Windows, w)
	return nil
}

func (sc Script) validate() error {
	for _, w := range sc.Mix {
		if !knownClass(w.Class) {
			return fmt.Errorf("unknown class %q", w.Class)
		}
	}
	for _, w := range sc.Windows {
		if !knownClass(w.Class) {
			return fmt.Errorf("unknown class %q in a window", w.Class)
		}
	}
	if sc.Latency[0] < 0 || sc.Latency[1] < 0 {
		return fmt.Errorf("negative latency %v", sc.Latency)
	}
	for _, st := range sc.Statuses {
		if st < 100 || st > 999 || st == 200 {
			return fmt.Errorf("status %d is not a failure status", st)
		}
	}
	for _, seg := range strings.Split(sc.path(), ".") {
		if seg == "" {
			return fmt.Errorf("path %q has an empty segment", sc.Path)
		}
	}
	return nil
}

func knownClass(c Class) bool { return slices.Contains(Classes, c) }

func (sc *Script) path() string {
	if sc.Path == "" {
		return "price"
	}
	return sc.Path
}

// Path is the URL path of endpoint k of request r.
func Path(r uint64, k int) string { return string(appendPath(nil, r, k)) }

// appendPath appends Path(r, k) to b.
func appendPath(b []byte, r uint64, k int) []byte {
	b = strconv.AppendUint(append(b, "/r/"...), r, 10)
	return strconv.AppendInt(append(b, "/e/"...), int64(k), 10)
}

// sortedHeaders is headers sorted by name, then value (stably), for a
// record: the copy made for the last GET when they are the same.
func (s *Sources) sortedHeaders(headers []history.Header) []history.Header {
	if s.sorted != nil && slices.Equal(headers, s.headers) {
		return s.sorted
	}
	sorted := slices.Clone(headers)
	slices.SortStableFunc(sorted, func(a, b history.Header) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	s.headers, s.sorted = slices.Clone(headers), sorted
	return sorted
}

// URL is endpoint k of request r on a server at base ("http://127.0.0.1:8080").
func URL(base string, r uint64, k int) string { return strings.TrimSuffix(base, "/") + Path(r, k) }

// ParsePath reads /r/{r}/e/{k} (a URL's path; a query string is ignored).
func ParsePath(path string) (r uint64, k int, ok bool) {
	path, _, _ = strings.Cut(path, "?")
	// The five parts strings.Split(path, "/") would give, without a slice
	// for them (a path is parsed on every GET).
	if strings.Count(path, "/") != 4 {
		return 0, 0, false
	}
	var parts [5]string
	rest := path
	for i := range 4 {
		parts[i], rest, _ = strings.Cut(rest, "/")
	}
	parts[4] = rest
	if parts[0] != "" || parts[1] != "r" || parts[3] != "e" {
		return 0, 0, false
	}
	r, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil || r == 0 {
		return 0, 0, false
	}
	k, err = strconv.Atoi(parts[4])
	if err != nil || k < 0 || strconv.Itoa(k) != parts[4] || strconv.FormatUint(r, 10) != parts[2] {
		return 0, 0, false
	}
	return r, k, true
}

// Outcome is what one GET gets.
type Outcome struct {
	Exchange  int64
	RequestID uint64
	Endpoint  int
	Class     Class
	// Status and Body are the answer (none for a reset or a hang).
	Status int
	Body   []byte
	// Arrived is when the GET arrived; DoneAt when the answer is complete,
	// the connection reset, or (a hang) the server gives up.
	Arrived time.Time
	DoneAt  time.Time
	// path is the GET's path when it is Path(RequestID, Endpoint).
	path string
}

// Answered reports whether the outcome is an HTTP answer (not a reset or
// a hang).
func (o Outcome) Answered() bool { return o.Class != ClassReset && o.Class != ClassHang }

// Get is a GET of url (or just its path) arriving at at with headers. It
// records the arrival and returns the outcome; the caller then delivers it
// (Done) at DoneAt, or aborts it earlier (Abort), for example at its
// client's timeout — a hang is always one of the two.
func (s *Sources) Get(at time.Time, url string, headers []history.Header) Outcome {
	return s.GetIn(new(Exchange), at, url, headers)
}

// GetIn is Get with the exchange's memory in x: its recv record, its body
// (when it fits) and, if the caller ends it with DoneIn or AbortIn, its
// done record. A caller that keeps its own records of the GET keeps x
// with them; x must be new (the zero Exchange) and serve one GET.
func (s *Sources) GetIn(x *Exchange, at time.Time, url string, headers []history.Header) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := url
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		} else {
			path = "/"
		}
	}
	s.exchange++
	o := Outcome{Exchange: s.exchange, Arrived: at, DoneAt: at}
	r, k, ok := ParsePath(path)
	o.RequestID, o.Endpoint = r, k
	var canon [48]byte
	if string(appendPath(canon[:0], r, k)) == path {
		o.path = path // the done record's path, not formatted again
	}
	x.recv = history.Src{Exchange: o.Exchange, Phase: history.PhaseRecv, RequestID: r, Endpoint: k, Path: path,
		Headers: s.sortedHeaders(headers), TRecv: at}
	s.record(at, &x.recv)
	sc := s.scripts[r]
	if !ok || sc == nil {
		o.Class, o.Status, o.Body = ClassUnknown, 404, []byte(`{"error":"no such endpoint"}`)
		return o
	}
	key := endpointKey{r, k}
	n := s.gets[key]
	s.gets[key] = n + 1
	o.Class = s.drawClass(sc, r, k, n, at)
	o.DoneAt = at.Add(s.drawLatency(sc, r, k, n))
	switch o.Class {
	case ClassHang:
		o.DoneAt = at.Add(s.HangFor)
	case ClassReset:
	case ClassStatus:
		statuses := sc.Statuses
		if len(statuses) == 0 {
			statuses = []int{500, 502, 503, 404, 429}
		}
		o.Status = statuses[streams.SubSeed(s.seed, r, uint64(k), n, 2)%uint64(len(statuses))]
		o.Body = []byte(`{"error":"` + strings.ToLower(statusText(o.Status)) + `"}`)
	default:
		o.Status = 200
		var value [40]byte
		// Clipped: an append to the body never writes into the rest of x.
		o.Body = slices.Clip(appendBody(x.body[:0], o.Class, sc.path(), s.appendValue(value[:0], r, k, at), at))
	}
	return o
}

// Exchange is the memory of one GET (GetIn): its records and room for its
// answer's body, one allocation rather than three for a GET on every
// round of every request. Each record is written once, before it is
// recorded, and never again; the body is never written once returned.
type Exchange struct {
	recv, done history.Src
	ended      bool // done is written
	body       [bodyRoom]byte
}

// bodyRoom is room for a 200 answer's body with a short path; a longer
// one grows out of it.
const bodyRoom = 128

// Done records that o was delivered at o.DoneAt (for a hang: the server
// gave up and dropped the connection).
func (s *Sources) Done(o Outcome) { s.finish(nil, o, o.DoneAt, false) }

// Abort records that the client went away at at, before o was complete.
func (s *Sources) Abort(o Outcome, at time.Time) { s.finish(nil, o, at, true) }

// DoneIn is Done of the GET whose memory is x (GetIn).
func (s *Sources) DoneIn(x *Exchange, o Outcome) { s.finish(x, o, o.DoneAt, false) }

// AbortIn is Abort of the GET whose memory is x (GetIn).
func (s *Sources) AbortIn(x *Exchange, o Outcome, at time.Time) { s.finish(x, o, at, true) }

func (s *Sources) finish(x *Exchange, o Outcome, at time.Time, aborted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := o.path
	if path == "" {
		path = Path(o.RequestID, o.Endpoint)
	}
	var rec *history.Src
	if x != nil && !x.ended {
		x.ended, rec = true, &x.done
	} else {
		rec = new(history.Src)
	}
	*rec = history.Src{Exchange: o.Exchange, Phase: history.PhaseDone, RequestID: o.RequestID, Endpoint: o.Endpoint,
		Path: path, Class: string(o.Class), Status: o.Status, TRecv: o.Arrived, Aborted: aborted}
	if !aborted {
		rec.Body = string(o.Body)
	}
	s.record(at, rec)
}

func (s *Sources) record(at time.Time, src *history.Src) {
	if s.sink != nil {
		s.sink(history.Event{At: at, Kind: history.KindSrc, Src: src})
	}
}

// drawClass is the class of GET number n of endpoint (r, k): the first
// fault window that holds, else a draw from the mix.
func (s *Sources) drawClass(sc *Script, r uint64, k int, n uint64, at time.Time) Class {
	for _, w := range sc.Windows {
		if (w.Endpoint < 0 || w.Endpoint == k) && !at.Before(w.From) && at.Before(w.To) {
			return w.Class
		}
	}
	var total uint64
	for _, w := range sc.Mix {
		total += uint64(w.Weight)
	}
	if total == 0 {
		return ClassOK
	}
	pick := streams.SubSeed(s.seed, r, uint64(k), n, 0) % total
	for _, w := range sc.Mix {
		if pick < uint64(w.Weight) {
			return w.Class
		}
		pick -= uint64(w.Weight)
	}
	return ClassOK // unreachable: pick < total
}

func (s *Sources) drawLatency(sc *Script, r uint64, k int, n uint64) time.Duration {
	lo, hi := sc.Latency[0], sc.Latency[1]
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(streams.SubSeed(s.seed, r, uint64(k), n, 1)%uint64(hi-lo+1))
}

// Value is the value endpoint k of request r serves at t: a decimal with
// six fractional digits and at least ten significant digits (the last one
// never 0), between 1000 and about 100000, moving with whole seconds. It
// is exact as a double and renders back to the same text (ORACLE-SPEC
// 3.4), so a daemon's submission can be compared with what it was served.
func (s *Sources) Value(r uint64, k int, t time.Time) string {
	var buf [40]byte
	return string(s.appendValue(buf[:0], r, k, t))
}

// appendValue appends Value(r, k, t) to b.
func (s *Sources) appendValue(b []byte, r uint64, k int, t time.Time) []byte {
	base := 1_000_000_000 + streams.SubSeed(s.seed, r, 0, 0, 3)%90_000_000_000 // micro-units, [1000, 91000)
	sec := uint64(t.Unix())
	period := 600 + streams.SubSeed(s.seed, r, 0, 0, 4)%600 // a slow triangle wave of 10-20 min
	x := (sec + streams.SubSeed(s.seed, r, 0, 0, 5)) % period
	tri := x
	if x > period/2 {
		tri = period - x
	}
	noise := streams.SubSeed(s.seed, r, uint64(k), sec, 6) % 1_000_000 // below one unit
	micro := base + tri*7_654_321 + noise
	if micro%10 == 0 {
		micro++
	}
	// No formatter, and no string for a GET's body (appendBody).
	b = strconv.AppendUint(b, micro/1_000_000, 10)
	b = append(b, '.')
	frac := micro % 1_000_000
	for p := uint64(100_000); p > 0; p /= 10 { // %06d
		b = append(b, byte('0'+frac/p%10))
	}
	return b
}

// Body is the body of a 200 answer of class c with value at the dot path,
// served at t: the value nested in objects along the path, beside a
// sibling at each level and a timestamp; or the class's defect in that
// shape.
func Body(c Class, path, value string, t time.Time) []byte { return appendBody(nil, c, path, value, t) }

// appendBody appends Body(c, path, value, t) to b (nil: a buffer of its
// size); a GET's value comes as the bytes appendValue wrote.
func appendBody[V string | []byte](b []byte, c Class, path string, value V, t time.Time) []byte {
	// Written front to back into one buffer (a body is built on every GET):
	// the keys down the path, the leaf object, then each level's sibling
	// and closing brace, the outermost level's with the timestamp.
	leaf := string(value) // not kept: a conversion for append's sake only
	switch c {
	case ClassNull:
		leaf = "null"
	case ClassEmpty:
		leaf = `""`
	}
	if b == nil {
		b = make([]byte, 0, 2*len(path)+len(leaf)+64+32*strings.Count(path, "."))
	}
	if c == ClassArray {
		b = append(b, '[')
	}
	rest, lastDot := path, strings.LastIndexByte(path, '.')
	for rest != path[lastDot+1:] {
		seg, more, _ := strings.Cut(rest, ".")
		b = append(b, '{')
		b = appendQuote(b, seg)
		b = append(b, ':')
		rest = more
	}
	last := path[lastDot+1:]
	b = append(b, '{')
	if c == ClassMissing {
		b = appendQuote(b, last+"_missing")
	} else {
		b = appendQuote(b, last)
	}
	b = append(b, ':')
	b = append(b, leaf...)
	b = append(b, ',')
	b = appendQuote(b, sibling("unit", last))
	b = append(b, `:"USD"`...)
	for end := lastDot; end >= 0; {
		start := strings.LastIndexByte(path[:end], '.')
		b = append(b, "},"...)
		b = appendQuote(b, sibling("source", path[start+1:end]))
		b = append(b, `:"converge"`...)
		end = start
	}
	b = append(b, ',')
	first, _, _ := strings.Cut(path, ".")
	b = appendQuote(b, sibling("ts", first))
	b = append(b, ':')
	b = strconv.AppendInt(b, t.Unix(), 10)
	b = append(b, '}')
	switch c {
	case ClassArray:
		b = append(b, ']')
	case ClassMalformed:
		b = b[:len(b)/2]
	}
	return b
}

// appendQuote appends quote(s).
func appendQuote(b []byte, s string) []byte {
	if plainJSON(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, quote(s)...)
}

// quote is s as a JSON string, as json.Marshal writes it. A key of
// printable ASCII that Marshal leaves as it is (no quote, backslash or
// HTML character) is quoted directly: bodies are built on every GET.
func quote(s string) string {
	if plainJSON(s) {
		return `"` + s + `"`
	}
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// plainJSON reports whether json.Marshal writes s between quotes unchanged.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// sibling is name, or another name if it is the path's key at that level
// (a body never repeats a key).
func sibling(name, key string) string {
	if name == key {
		return name + "_"
	}
	return name
}

func statusText(code int) string {
	switch code {
	case 404:
		return "Not Found"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	}
	return "error " + strconv.Itoa(code)
}
