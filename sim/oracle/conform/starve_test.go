package conform

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWorstWaitCountsLongWaitsOfKnownThreads(t *testing.T) {
	ms := int64(time.Millisecond)
	before := map[int]int64{1: 0, 2: 10 * ms, 3: 0}
	after := map[int]int64{1: 40 * ms, 2: 90 * ms, 3: 49 * ms, 4: 500 * ms}
	// Thread 2 waited 80 ms of the 100; thread 4 is new (no base yet).
	require.Equal(t, 80*time.Millisecond, worstWait(before, after, 100*time.Millisecond))
	// Over a reading that came 1 s late, 80 ms of waiting is not starving.
	require.Zero(t, worstWait(before, after, time.Second))
	require.Zero(t, worstWait(map[int]int64{}, after, 100*time.Millisecond))

	require.True(t, (&Result{MaxWait: 51 * time.Millisecond}).Starved())
	require.False(t, (&Result{MaxWait: 50 * time.Millisecond}).Starved(), "within the tolerance")
}

func TestReadWaitsFindsTheThreadsOfAProcessAndItsChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the scheduler's statistics are read from Linux's /proc")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc here")
	}
	// A shell whose child sleeps: the child's threads count too.
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool {
		w := map[int]int64{}
		readWaits(cmd.Process.Pid, w)
		return len(w) >= 2 // the shell's thread and the sleep's
	}, 10*time.Second, 10*time.Millisecond)

	s := watchStarve(cmd.Process.Pid)
	t0 := time.Now()
	s.note(70*time.Millisecond, t0)
	s.note(20*time.Millisecond, t0.Add(time.Second))
	wait, _ := s.finish()
	require.GreaterOrEqual(t, wait, 70*time.Millisecond, "the watcher's own readings only add to it")
	again, _ := s.finish()
	require.Equal(t, wait, again, "a second finish gives the same result")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	w := map[int]int64{}
	readWaits(cmd.Process.Pid, w)
	require.Empty(t, w, "a reaped process has no threads to read")
}

// Three busy loops on one CPU each wait about two thirds of the time:
// the watch sees a thread kept off the CPU past the tolerance.
func TestStarveWatchSeesBusyLoopsSharingACPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the scheduler's statistics are read from Linux's /proc")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset here")
	}
	loop := taskset + ` -c 0 sh -c 'while :; do :; done' &`
	cmd := exec.Command("sh", "-c", loop+loop+loop+" wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	s := watchStarve(cmd.Process.Pid)
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.max > 50*time.Millisecond
	}, 20*time.Second, 50*time.Millisecond)
	wait, _ := s.finish()
	require.Greater(t, wait, 50*time.Millisecond)
}
