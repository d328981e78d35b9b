package engine

import "time"

// Item is one entry of a Queue: when it is due, whether it runs after the
// other items due at that instant, the order it was scheduled in, and its
// payload.
type Item[P any] struct {
	// At is the virtual time, unix nanoseconds.
	At int64
	// Late items run after every other item due at the same instant, as
	// if applied between events once the clock got there.
	Late bool
	// Seq is the order the item was pushed in.
	Seq uint64
	P   P
}

// Time is the item's due time.
func (e *Item[P]) Time() time.Time { return time.Unix(0, e.At).UTC() }

func (e *Item[P]) before(o *Item[P]) bool {
	if e.At != o.At {
		return e.At < o.At
	}
	if e.Late != o.Late {
		return o.Late
	}
	return e.Seq < o.Seq
}

// Queue is a binary min-heap of items ordered by (time, late, sequence):
// two items due at the same instant run first-scheduled first. It stores
// values (no boxing in an interface), so pushing allocates only when the
// slice grows.
type Queue[P any] struct {
	items []Item[P]
	seq   uint64
}

// Push schedules payload p at virtual time at (unix nanoseconds) and
// returns its sequence number.
func (q *Queue[P]) Push(at int64, late bool, p P) uint64 {
	q.seq++
	q.items = append(q.items, Item[P]{At: at, Late: late, Seq: q.seq, P: p})
	q.up(len(q.items) - 1)
	return q.seq
}

// Peek returns the next item without removing it; ok is false when empty.
func (q *Queue[P]) Peek() (e *Item[P], ok bool) {
	if len(q.items) == 0 {
		return nil, false
	}
	return &q.items[0], true
}

// Pop removes and returns the next item.
func (q *Queue[P]) Pop() Item[P] {
	n := len(q.items) - 1
	top, last := q.items[0], q.items[n]
	var zero Item[P]
	q.items[n] = zero // drop references held by the vacated slot
	q.items = q.items[:n]
	if n > 0 {
		q.siftDown(0, last)
	}
	return top
}

// Len is the number of items queued.
func (q *Queue[P]) Len() int { return len(q.items) }

// up and siftDown move an item through a hole rather than swapping it
// with each parent or child: every step writes one item, not two (an
// item holds a pointer, so each write costs a write barrier while the
// collector marks). The heap they leave is the one swapping leaves.
func (q *Queue[P]) up(i int) {
	x := q.items[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.before(&q.items[p]) {
			break
		}
		q.items[i] = q.items[p]
		i = p
	}
	q.items[i] = x
}

// siftDown places x at hole i or below it.
func (q *Queue[P]) siftDown(i int, x Item[P]) {
	n := len(q.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&x) {
			break
		}
		q.items[i] = q.items[m]
		i = m
	}
	q.items[i] = x
}
