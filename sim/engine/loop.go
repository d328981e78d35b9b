package engine

import (
	"context"
	"time"
)

// Clock is the virtual clock a Loop moves.
type Clock interface {
	Now() time.Time
	Set(t time.Time)
}

// Loop runs a Queue's items in order on a virtual clock: it moves the
// clock to each item's time and hands the item to Dispatch. One goroutine
// runs it; dispatched items may push more.
type Loop[P any] struct {
	Q     Queue[P]
	Clock Clock
	// Dispatch runs one item; it must not keep the pointer after it
	// returns.
	Dispatch func(it *Item[P])
	// Processed counts the items dispatched so far.
	Processed int64
	// slots hold the item being dispatched, one per level of RunUntil
	// called from within Dispatch: Dispatch gets a pointer into the loop,
	// not to a copy on the heap (the pointer escapes through the func
	// value, which cost an allocation per item).
	slots []Item[P]
	depth int
}

// checkEvery is how many items run between two looks at the context.
const checkEvery = 4096

// dispatch hands it to Dispatch in the slot of this level of nesting. The
// pointer is valid until Dispatch returns.
func (l *Loop[P]) dispatch(it Item[P]) {
	if l.depth == len(l.slots) {
		l.slots = append(l.slots, Item[P]{})
	}
	d := l.depth
	l.slots[d] = it
	l.depth++
	l.Dispatch(&l.slots[d])
	l.depth--
	l.slots[d] = Item[P]{} // drop the payload's references
}

// RunUntil dispatches every item due at or before until, in order, then
// moves the clock to until (if it is not past it already). With pred it
// stops early once pred holds (checked before the first item and after
// each) and reports whether it held. It returns ctx's error if the context
// ends meanwhile.
func (l *Loop[P]) RunUntil(ctx context.Context, until time.Time, pred func() bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	end := until.UnixNano()
	for {
		if pred != nil && pred() {
			return true, nil
		}
		next, ok := l.Q.Peek()
		if !ok || next.At > end {
			break
		}
		it := l.Q.Pop()
		l.Processed++
		if l.Processed%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		if it.At > l.Clock.Now().UnixNano() {
			l.Clock.Set(it.Time())
		}
		l.dispatch(it)
	}
	if until.After(l.Clock.Now()) {
		l.Clock.Set(until)
	}
	if pred != nil {
		return pred(), nil
	}
	return false, nil
}
