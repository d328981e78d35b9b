package history

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Listing methods: the observer's two listings (SPEC 4.1, 5.1, 5.2). A
// successful one records what it returned in its Result, so that a checker
// can judge each observation against the listing that preceded it (C1).
const (
	MethodListInstances = "instances.List"
	MethodListVolumes   = "storage.ListVolumes"
)

// Entries of a listing's Result: a container is "id+" when running and
// "id-" when stopped; a volume is its workspace id.

// InstanceEntry is the Result entry of one listed container.
func InstanceEntry(id string, running bool) string {
	if running {
		return id + "+"
	}
	return id + "-"
}

// ParseInstanceEntry splits an InstanceEntry.
func ParseInstanceEntry(s string) (id string, running bool) {
	if n := len(s); n > 0 && (s[n-1] == '+' || s[n-1] == '-') {
		return s[:n-1], s[n-1] == '+'
	}
	return s, false
}

// Listings writes a successful listing's Result in one of three forms,
// each starting with the number of entries N the listing returned:
//
//	"N = e1 e2 …"   the entries in full;
//	"N same"        exactly the entries of the instance's previous
//	                listing by the same method;
//	"N ~ -e1 +e2 …" the previous listing's entries without those marked
//	                "-" and with those marked "+" (a long run lists a
//	                fleet of thousands every few seconds, and a pass
//	                changes a handful of entries).
//
// A listing is a set: the order of its entries carries nothing. The
// first listing of an instance and method is written in full, and so is
// one whose change is not much smaller than itself or whose entries (or
// the previous ones) are not strictly ascending. Safe for concurrent
// use; the caller records the event while Record holds the lock (record
// runs inside it), so that the history's order is the order of the
// decisions.
type Listings struct {
	mu sync.Mutex
	// last is each instance's and method's latest entries, as recorded.
	last map[listingKey]*recordedListing
}

type listingKey struct{ instance, method string }

type recordedListing struct {
	entries []string
	// ascending: entries are strictly ascending (a delta can be merged).
	ascending bool
}

// Record formats the Result of a successful listing by instance and
// passes it to record, under the lock.
func (l *Listings) Record(instance, method string, entries []string, record func(result string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[listingKey]*recordedListing{}
	}
	n := strconv.Itoa(len(entries))
	k := listingKey{instance, method}
	prev := l.last[k]
	if prev == nil {
		prev = &recordedListing{}
		l.last[k] = prev
	} else if slices.Equal(prev.entries, entries) {
		// Compared entry by entry: joining a fleet's listing only to
		// compare it is the cost.
		record(n + " same")
		return
	}
	mergeable := prev.entries != nil && prev.ascending
	changed, size, ascending := 0, 0, false
	if mergeable {
		changed, size, ascending = delta(prev.entries, entries, nil)
	} else {
		ascending = isAscending(entries)
	}
	var b strings.Builder
	if mergeable && ascending && 2*changed < len(entries) {
		b.Grow(len(n) + len(" ~") + size)
		b.WriteString(n)
		b.WriteString(" ~")
		delta(prev.entries, entries, &b)
	} else {
		// "n = e1 e2 …", built in one allocation.
		size := len(n) + len(" = ") + max(len(entries)-1, 0)
		for _, e := range entries {
			size += len(e)
		}
		b.Grow(size)
		b.WriteString(n)
		b.WriteString(" = ")
		for i, e := range entries {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(e)
		}
	}
	prev.entries = append(prev.entries[:0], entries...) // ours: its array is reused
	prev.ascending = ascending
	record(b.String())
}

func isAscending(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

// delta merges prev, strictly ascending, with cur and returns how many
// entries were removed or added, the bytes of their " -e" and " +e"
// tokens and whether cur is strictly ascending too (when it is not, the
// rest means nothing); with b, it also writes those tokens to b. The
// entries both hold come out of the merge in prev's order, so only the
// neighbours of an added entry need comparing: a listing that changed
// little is checked without reading most of its bytes.
func delta(prev, cur []string, b *strings.Builder) (changed, size int, ascending bool) {
	ascending = true
	added := false // cur[j-1] was added
	token := func(sign byte, e string) {
		changed++
		size += 2 + len(e)
		if b != nil {
			b.WriteByte(' ')
			b.WriteByte(sign)
			b.WriteString(e)
		}
	}
	add := func(j int) {
		if j > 0 && cur[j-1] >= cur[j] {
			ascending = false
		}
		token('+', cur[j])
		added = true
	}
	i, j := 0, 0
	for i < len(prev) && j < len(cur) {
		switch {
		case prev[i] == cur[j]:
			if added && cur[j-1] >= cur[j] {
				ascending = false
			}
			added = false
			i++
			j++
		case prev[i] < cur[j]:
			token('-', prev[i])
			i++
		default:
			add(j)
			j++
		}
	}
	for ; i < len(prev); i++ {
		token('-', prev[i])
	}
	for ; j < len(cur); j++ {
		add(j)
	}
	return changed, size, ascending
}

// ListingView reads the Results Listings wrote back into each instance's
// current listing of each kind (the reader's side of Listings).
type ListingView struct {
	sets map[listingKey]*ListingSet
}

// ListingSet is what an instance's latest successful listing of one kind
// returned, as a set of entries. It is the view's own and changes as the
// view applies later listings of that instance and kind.
type ListingSet struct {
	entries map[string]struct{}
}

// Has reports whether the listing returned entry e.
func (s *ListingSet) Has(e string) bool {
	_, ok := s.entries[e]
	return ok
}

// Container reports what an instances.List set says of workspace id.
func (s *ListingSet) Container(id string) (exists, running bool) {
	var buf [64]byte
	b := append(append(buf[:0], id...), '+')
	if _, ok := s.entries[string(b)]; ok {
		return true, true
	}
	b[len(b)-1] = '-'
	_, ok := s.entries[string(b)]
	return ok, false
}

// Len is the number of entries.
func (s *ListingSet) Len() int { return len(s.entries) }

// Sorted returns the entries in ascending order.
func (s *ListingSet) Sorted() []string {
	out := make([]string, 0, len(s.entries))
	for e := range s.entries {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// Apply reads the listing event e and returns its instance's listing of
// that kind as it now stands. ok is false for anything but a successful
// listing whose Result reads back consistently: another method, a failed
// call, a Result in no known form, a "same" or "~" Result with no
// readable listing before it, or one whose count N does not match. After
// an unreadable Result the instance's listing of that kind is unknown
// until a full one.
func (v *ListingView) Apply(e *Event) (set *ListingSet, ok bool) {
	if e.Kind != KindCall || e.Err != "" || (e.Method != MethodListInstances && e.Method != MethodListVolumes) {
		return nil, false
	}
	if v.sets == nil {
		v.sets = map[listingKey]*ListingSet{}
	}
	k := listingKey{e.Instance, e.Method}
	if set = v.sets[k]; set != nil {
		delete(v.sets, k) // put back below once read
	}
	count, rest, found := strings.Cut(e.Result, " ")
	n, err := strconv.Atoi(count)
	if !found || err != nil || n < 0 {
		return nil, false
	}
	switch {
	case rest == "same":
	case rest == "=" || strings.HasPrefix(rest, "= "):
		if set == nil {
			set = &ListingSet{entries: make(map[string]struct{}, n)}
		} else {
			clear(set.entries)
		}
		for body := strings.TrimPrefix(rest[1:], " "); body != ""; {
			var en string
			en, body, _ = strings.Cut(body, " ")
			set.entries[en] = struct{}{}
		}
	case strings.HasPrefix(rest, "~ ") && set != nil:
		for body := rest[2:]; body != ""; {
			var tok string
			tok, body, _ = strings.Cut(body, " ")
			if len(tok) < 2 {
				return nil, false
			}
			_, had := set.entries[tok[1:]]
			switch {
			case tok[0] == '-' && had:
				delete(set.entries, tok[1:])
			case tok[0] == '+' && !had:
				set.entries[tok[1:]] = struct{}{}
			default:
				return nil, false
			}
		}
	default:
		return nil, false
	}
	if set == nil || len(set.entries) != n {
		return nil, false
	}
	v.sets[k] = set
	return set, true
}
