package core

import (
	"container/heap"
	"time"
)

// timer is one pending wake-up of the core: at its time, fn runs. Timers
// due at the same time run in the order they were set.
type timer struct {
	at  time.Time
	seq uint64
	fn  func()
	idx int // position in the heap; -1 once fired or cancelled
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.idx = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.idx = -1
	return t
}

// after sets a timer d from now.
func (c *Core) after(d time.Duration, fn func()) *timer {
	return c.at(c.now.Add(d), fn)
}

// at sets a timer at t (at the latest now).
func (c *Core) at(t time.Time, fn func()) *timer {
	if t.Before(c.now) {
		t = c.now
	}
	c.timerSeq++
	tm := &timer{at: t, seq: c.timerSeq, fn: fn}
	heap.Push(&c.timers, tm)
	return tm
}

// cancel removes a pending timer; nil and fired timers are ignored.
func (c *Core) cancel(t *timer) {
	if t != nil && t.idx >= 0 {
		heap.Remove(&c.timers, t.idx)
	}
}

// fireDue runs every timer due at or before now, in time order, including
// the ones that running timers set for now.
func (c *Core) fireDue() {
	for len(c.timers) > 0 && !c.timers[0].at.After(c.now) && !c.exited {
		t := heap.Pop(&c.timers).(*timer)
		t.fn()
	}
}

// NextWake is when the core next needs a Wake (the earliest pending
// timer); ok is false when no timer is pending.
func (c *Core) NextWake() (at time.Time, ok bool) {
	if c.exited || len(c.timers) == 0 {
		return time.Time{}, false
	}
	return c.timers[0].at, true
}
