package sim

import "time"

// eventKind says what a queued event does when it runs.
type eventKind uint8

const (
	// evStep: one Step of a coordinator instance.
	evStep eventKind = iota
	// evUser: one action of the user workload on one workspace.
	evUser
	// evScript: a scripted function (scenario tests, fault plans).
	evScript
)

// event is one entry of the queue. Only the fields of its kind are set.
type event struct {
	at   int64 // virtual time, unix nanoseconds
	seq  uint64
	kind eventKind
	// late events (plan actions) run after every other event due at the
	// same instant, as if applied between events once the clock got there.
	late bool

	inst *instance // evStep
	gen  int       // evStep: the instance generation it was scheduled for

	ws  *userWorkspace // evUser
	act action         // evUser

	name string     // evScript
	fn   func(*Sim) // evScript
}

func (e *event) time() time.Time { return time.Unix(0, e.at).UTC() }

// before orders events by virtual time, then late ones last, then by the
// order they were scheduled: two events due at the same instant run
// first-scheduled first.
func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	if e.late != o.late {
		return o.late
	}
	return e.seq < o.seq
}

// queue is a binary min-heap of events ordered by (time, sequence). It is a
// hand-written heap over a slice of values rather than container/heap, which
// would box every event in an interface.
type queue struct {
	items []event
	seq   uint64
}

// push schedules e, stamping its sequence number, and returns that number.
func (q *queue) push(e event) uint64 {
	q.seq++
	e.seq = q.seq
	q.items = append(q.items, e)
	q.up(len(q.items) - 1)
	return e.seq
}

// peek returns the next event without removing it; ok is false when empty.
func (q *queue) peek() (e *event, ok bool) {
	if len(q.items) == 0 {
		return nil, false
	}
	return &q.items[0], true
}

// pop removes and returns the next event.
func (q *queue) pop() event {
	n := len(q.items) - 1
	top := q.items[0]
	q.items[0] = q.items[n]
	q.items[n] = event{} // drop references held by the vacated slot
	q.items = q.items[:n]
	if n > 0 {
		q.down(0)
	}
	return top
}

func (q *queue) len() int { return len(q.items) }

func (q *queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.items[i].before(&q.items[p]) {
			return
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *queue) down(i int) {
	n := len(q.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&q.items[i]) {
			return
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
}
