package oracleconform

import (
	"context"
	"sync"
	"time"
)

// lagTick is how often the harness checks that it keeps time.
const lagTick = 10 * time.Millisecond

// lagWatch measures how late the harness's own timer fires while a run
// goes on. The checkers judge the daemon's timing within 50 ms
// (ORACLE-SPEC 1.3's tolerance in black-box mode); a machine so busy that
// the harness itself runs later than that can make a punctual daemon look
// late, and a run's report says so rather than let a verdict pass for the
// daemon's alone.
type lagWatch struct {
	mu   sync.Mutex
	max  time.Duration
	at   time.Time
	done chan struct{}
}

// watchLag starts measuring until ctx ends or stop is called.
func watchLag(ctx context.Context) *lagWatch {
	l := &lagWatch{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTimer(lagTick)
		defer t.Stop()
		want := time.Now().Add(lagTick)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if late := now.Sub(want); late > 0 {
					l.note(late, now)
				}
				want = time.Now().Add(lagTick)
				t.Reset(lagTick)
			}
		}
	}()
	return l
}

func (l *lagWatch) note(late time.Duration, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if late > l.max {
		l.max, l.at = late, at
	}
}

// worst is the longest the harness ran late so far, and when.
func (l *lagWatch) worst() (time.Duration, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max, l.at
}
