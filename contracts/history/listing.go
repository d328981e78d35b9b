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

// Listings writes a successful listing's Result: "N = e1 e2 …" with the
// entries, or "N same" when the instance's previous listing by the same
// method returned exactly the same entries (a long run lists an unchanged
// fleet thousands of times). Safe for concurrent use; the caller records
// the event while Record holds the lock (record runs inside it), so that
// the history's order is the order of the decisions.
type Listings struct {
	mu sync.Mutex
	// last is each instance's and method's latest entries, as recorded.
	last map[string][]string
}

// Record formats the Result of a successful listing by instance and
// passes it to record, under the lock.
func (l *Listings) Record(instance, method string, entries []string, record func(result string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string][]string{}
	}
	n := strconv.Itoa(len(entries))
	k := instance + "\x00" + method
	// Compared entry by entry: a fleet's listing is mostly the same from
	// one pass to the next, and joining it only to compare is the cost.
	if prev, ok := l.last[k]; ok && slices.Equal(prev, entries) {
		record(n + " same")
		return
	}
	l.last[k] = append(l.last[k][:0], entries...) // ours: its array is reused
	// "n = e1 e2 …", built in one allocation.
	size := len(n) + len(" = ") + max(len(entries)-1, 0)
	for _, e := range entries {
		size += len(e)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(n)
	b.WriteString(" = ")
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e)
	}
	record(b.String())
}

// ListingView rebuilds each successful listing's entries from the
// recorded Results (the reader's side of Listings).
type ListingView struct {
	last map[string][]string
}

// Entries returns the entries a successful listing event e returned; ok
// is false for anything else (another method, a failed call, a Result in
// no known form).
func (v *ListingView) Entries(e *Event) (entries []string, ok bool) {
	if e.Kind != KindCall || e.Err != "" || (e.Method != MethodListInstances && e.Method != MethodListVolumes) {
		return nil, false
	}
	if v.last == nil {
		v.last = map[string][]string{}
	}
	k := e.Instance + "\x00" + e.Method
	_, rest, found := strings.Cut(e.Result, " ")
	switch {
	case found && rest == "same":
		prev, had := v.last[k]
		return prev, had
	case found && strings.HasPrefix(rest, "="):
		body := strings.TrimSpace(strings.TrimPrefix(rest, "="))
		var out []string
		if body != "" {
			out = strings.Split(body, " ")
		}
		v.last[k] = out
		return out, true
	}
	return nil, false
}
