package oracle

import (
	"container/heap"
	"time"

	"github.com/wsconverge/converge/judge"
)

// deadlines is a queue of values due at given times; values due at the
// same time come out in the order they were pushed, so the checkers'
// verdicts never depend on anything but the records.
type deadlines[T any] struct {
	h   dlHeap[T]
	seq uint64
}

type dl[T any] struct {
	at  time.Time
	seq uint64
	v   T
}

type dlHeap[T any] []dl[T]

func (h dlHeap[T]) Len() int { return len(h) }
func (h dlHeap[T]) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h dlHeap[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dlHeap[T]) Push(x any)   { *h = append(*h, x.(dl[T])) }
func (h *dlHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// push schedules v at at.
func (d *deadlines[T]) push(at time.Time, v T) {
	d.seq++
	heap.Push(&d.h, dl[T]{at: at, seq: d.seq, v: v})
}

// due pops the values whose time is strictly before now: their deadline
// has passed.
func (d *deadlines[T]) due(now time.Time) []T {
	var out []T
	for d.h.Len() > 0 && d.h[0].at.Before(now) {
		out = append(out, heap.Pop(&d.h).(dl[T]).v)
	}
	return out
}

// next is when the first value queued is due (judge.Forever when none
// is): due pops nothing before the clock is past it.
func (d *deadlines[T]) next() time.Time {
	if len(d.h) == 0 {
		return judge.Forever
	}
	return d.h[0].at
}
