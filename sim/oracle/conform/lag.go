package conform

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
	worstSeen
	done chan struct{}
}

// worstSeen keeps the longest of the durations noted so far and when it
// was noted; it is safe for concurrent use.
type worstSeen struct {
	mu  sync.Mutex
	max time.Duration
	at  time.Time
}

func (w *worstSeen) note(d time.Duration, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d > w.max {
		w.max, w.at = d, at
	}
}

// worst is the longest duration noted so far, and when.
func (w *worstSeen) worst() (time.Duration, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max, w.at
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
