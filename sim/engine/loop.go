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
	Q        Queue[P]
	Clock    Clock
	Dispatch func(it *Item[P])
	// Processed counts the items dispatched so far.
	Processed int64
}

// checkEvery is how many items run between two looks at the context.
const checkEvery = 4096

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
		l.Dispatch(&it)
	}
	if until.After(l.Clock.Now()) {
		l.Clock.Set(until)
	}
	if pred != nil {
		return pred(), nil
	}
	return false, nil
}
