package conform

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// starveTick is how often the harness reads how long the daemon's threads
// waited for a CPU.
const starveTick = 100 * time.Millisecond

// starveWatch measures how long the daemon's threads (those of the
// launched process and of its descendants: a wrapper script's daemon is
// one) sat runnable on a run queue without a CPU, from the scheduler's
// per-thread statistics (/proc/PID/task/TID/schedstat, Linux). The lag
// watch sees a machine too busy for the harness; this one sees a daemon
// the machine kept waiting while the harness itself ran on time: the
// checkers judge the daemon's timing within 50 ms, and a thread kept off
// the CPUs that long can make a punctual daemon look late. Where the
// statistics cannot be read (another OS, a kernel without them), nothing
// is measured and the report says nothing.
type starveWatch struct {
	worstSeen
	pid  int
	stop chan struct{}
	done chan struct{}
}

// watchStarve starts measuring process pid and its descendants until
// stopped.
func watchStarve(pid int) *starveWatch {
	s := &starveWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(starveTick)
		defer t.Stop()
		last := map[int]int64{}
		seen := map[int]int64{}
		prev := time.Now()
		for {
			select {
			case <-s.stop:
				return
			case now := <-t.C:
				clear(seen)
				readWaits(s.pid, seen)
				s.note(worstWait(last, seen, now.Sub(prev)), now)
				last, seen = seen, last
				prev = now
			}
		}
	}()
	return s
}

// worstWait is the longest any thread waited for a CPU between two
// readings (thread id → nanoseconds waited so far) an interval apart.
// A wait counts only when it took more than half the interval: a harness
// that itself read late would otherwise add up many short waits.
func worstWait(before, after map[int]int64, interval time.Duration) time.Duration {
	var worst time.Duration
	for tid, w := range after {
		b, ok := before[tid]
		if !ok {
			continue // a thread born since: its first reading is the base
		}
		if d := time.Duration(w - b); d > worst && d > interval/2 {
			worst = d
		}
	}
	return worst
}

// finish stops the watch and returns the longest wait seen, and when.
func (s *starveWatch) finish() (time.Duration, time.Time) {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.worst()
}

// readWaits adds to waits the run-queue wait of every thread of process
// pid and of its descendants, by thread id.
func readWaits(pid int, waits map[int]int64) {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return // gone, or no /proc
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name())
		if w, ok := runDelay(filepath.Join(dir, "schedstat")); ok {
			waits[tid] = w
		}
		kids, err := os.ReadFile(filepath.Join(dir, "children"))
		if err != nil {
			continue
		}
		for _, k := range strings.Fields(string(kids)) {
			if child, err := strconv.Atoi(k); err == nil {
				readWaits(child, waits)
			}
		}
	}
}

// runDelay reads the second field of a schedstat file: the nanoseconds
// the thread has spent runnable on a run queue.
func runDelay(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	w, err := strconv.ParseInt(f[1], 10, 64)
	return w, err == nil
}
