package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxLine is the longest message a child may send (64 MiB): a longer line
// is a protocol error, not an allocation without bound.
const maxLine = 64 << 20

// proc is one child process and its three pipes (the child's ends plain
// blocking files; the harness's end of standard output blocking, of
// standard input and standard error nonblocking). While an exchange is
// in progress a watchdog drains the child's standard error every
// drainEvery and kills the process group when a message does not come
// within the timeout, which ends any read or write in progress.
type proc struct {
	cmd     *exec.Cmd
	stdin   *os.File // kept open (and from the finalizer) until kill or end
	inFD    int
	stdout  *bufio.Reader
	outFile *os.File // kept open (and from the finalizer) until reap
	outFD   int
	stderr  *stderrTap
	timeout time.Duration

	watchdog  *time.Timer
	born      time.Time
	lastHeard atomic.Int64 // since born
	armed     atomic.Bool
	timedOut  atomic.Bool

	// reading is held by Read, which reads the raw descriptor: reap
	// closes it outside Read, once reaped has told Read to stop and
	// wakeReader has woken a read that waits.
	reading sync.Mutex
	reaped  atomic.Bool
	// outMu guards outClosed: wakeReader never writes through a
	// descriptor number that reap has closed (and the process may have
	// reused).
	outMu     sync.Mutex
	outClosed bool
	// writing is held by write, which polls stdin's raw descriptor when
	// the pipe is full: kill and end close it outside write, once killed
	// has told write to stop (inClosed: it is closed).
	writing  sync.Mutex
	killed   atomic.Bool
	inClosed bool

	killOnce sync.Once
	exited   chan struct{}
	waitErr  error

	// lastTail is the end of the standard error of a child that failed.
	lastTail string
}

// startProc starts argv in its own process group.
func startProc(argv []string, dir string, env []string, timeout time.Duration) (*proc, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	// The pipes are made blocking, so that os.NewFile leaves them out of
	// Go's poller: registered there (as os.Pipe's are), every message
	// either side moves would wake the poller's thread for nothing, a
	// context switch a message. The harness's ends of standard input and
	// standard error are then made nonblocking; all three are read and
	// written only through their raw descriptors (Read, write, the
	// stderr tap).
	pipe := func() (r, w *os.File, err error) {
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			return nil, nil, os.NewSyscallError("pipe2", err)
		}
		r, w = os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1")
		files = append(files, r, w)
		return r, w, nil
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %q: %w", argv[0], err)
	}
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	inFD, outFD, errFD := int(inW.Fd()), int(outR.Fd()), int(errR.Fd())
	for _, fd := range []int{inFD, errFD} {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeAll()
			return nil, os.NewSyscallError("fcntl", err)
		}
	}
	tap := newStderrTap(errR, errFD)
	p := &proc{cmd: cmd, stdin: inW, inFD: inFD, outFile: outR, outFD: outFD, stderr: tap, timeout: timeout, exited: make(chan struct{})}
	p.stdout = bufio.NewReaderSize(p, 64<<10)
	p.born = time.Now()
	p.watchdog = time.AfterFunc(time.Hour, p.watch)
	p.watchdog.Stop()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// drainEvery is how often the watchdog drains a child's standard error
// during an exchange: a child that fills that pipe while the harness
// waits on its standard output waits at most this long.
const drainEvery = 10 * time.Millisecond

// arm starts the watchdog for an exchange: every message of the child
// must come within the timeout of the one before (or of arm).
func (p *proc) arm() {
	p.heard()
	p.armed.Store(true)
	p.watchdog.Reset(min(p.timeout, drainEvery))
}

// heard notes a message of the child. The timer is not reset at every
// message (that costs more than the message): it checks, when it fires,
// how long the child has been quiet, and waits out the rest.
func (p *proc) heard() { p.lastHeard.Store(int64(time.Since(p.born))) }

// watch is the watchdog's timer: it drains the child's standard error
// (Read waits on standard output alone, in the kernel) and kills a child
// quiet for the timeout, waking a read that waits. A firing left over
// from an earlier exchange does nothing.
func (p *proc) watch() {
	if !p.armed.Load() {
		return
	}
	p.stderr.drain()
	quiet := time.Since(p.born) - time.Duration(p.lastHeard.Load())
	if quiet < p.timeout {
		p.watchdog.Reset(min(p.timeout-quiet, drainEvery))
		return
	}
	p.timedOut.Store(true)
	p.kill()
	p.wakeReader()
}

// wakeReader ends a read of standard output that waits, once timedOut or
// reaped is set: it writes a byte into the pipe through a write end of
// its own, which Read drops. Killing the process group usually ends the
// read already (the pipe's writers are gone); this covers a process that
// left the group holding the child's standard output. A full pipe needs
// no byte: Read checks the flags before every read.
func (p *proc) wakeReader() {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.outClosed {
		return
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", p.outFD), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return // no /proc: the group's end still ends the read
	}
	_, _ = unix.Write(fd, []byte{0})
	_ = unix.Close(fd)
}

// disarm stops the watchdog between exchanges.
func (p *proc) disarm() {
	p.armed.Store(false)
	p.watchdog.Stop()
}

// write sends what line holds. While the pipe is full it waits for the
// child to read, draining the child's standard error meanwhile (a child
// blocked writing there reads nothing), until the child is killed.
func (p *proc) write(line []byte) error {
	p.writing.Lock()
	defer p.writing.Unlock()
	fds := [2]unix.PollFd{{Fd: int32(p.inFD), Events: unix.POLLOUT}, {Fd: int32(p.stderr.fd), Events: unix.POLLIN}}
	for len(line) > 0 {
		if p.inClosed || p.killed.Load() {
			return p.ioError("write to the child", os.ErrClosed)
		}
		n, err := unix.Write(p.inFD, line)
		switch {
		case err == nil:
			line = line[n:]
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return p.ioError("write to the child", err)
		}
		wait := fds[:1]
		if !p.stderr.ended() {
			wait = fds[:]
		}
		if _, err := unix.Poll(wait, 10); err != nil && !errors.Is(err, unix.EINTR) {
			return p.ioError("write to the child", &os.PathError{Op: "poll", Path: "the child's standard input", Err: err})
		}
		if len(wait) == 2 && fds[1].Revents != 0 {
			p.stderr.drain()
		}
	}
	return nil
}

// closeStdin closes the harness's end of the child's standard input, once
// no write is in progress.
func (p *proc) closeStdin() {
	p.writing.Lock()
	defer p.writing.Unlock()
	if !p.inClosed {
		p.inClosed = true
		_ = p.stdin.Close()
	}
}

var errLineTooLong = errors.New("message longer than 64 MiB")

// lineBuffered reports whether a whole message of the child has been
// read and not taken yet.
func (p *proc) lineBuffered() bool {
	n := p.stdout.Buffered()
	if n == 0 {
		return false
	}
	b, _ := p.stdout.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}

// Read reads the child's standard output (the bufio.Reader's source). The
// conversation is strictly alternating and bound by latency: Read waits
// for the child in the kernel, in one blocking read of the raw descriptor
// (one system call a message), rather than on Go's poller, which would
// park the goroutine and wake it through the scheduler at about the cost
// of the wake-up itself, or in poll, a second system call a message. The
// watchdog drains the child's standard error meanwhile, so that a child
// writing a lot there never blocks on a full pipe for long, and ends the
// read at the timeout (wakeReader).
func (p *proc) Read(b []byte) (int, error) {
	p.reading.Lock()
	defer p.reading.Unlock()
	for {
		switch {
		case p.timedOut.Load():
			return 0, errTimedOut
		case p.reaped.Load():
			return 0, os.ErrClosed
		}
		n, err := unix.Read(p.outFD, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: "the child's standard output", Err: err}
		case n == 0:
			return 0, io.EOF
		case p.timedOut.Load() || p.reaped.Load():
			continue // what came with (or as) wakeReader's byte is dropped
		}
		return n, nil
	}
}

var errTimedOut = errors.New("timed out")

// waitReadable waits up to d for fd to be readable (or at its end); it
// reports false when d passed first.
func waitReadable(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for d > 0 {
		start := time.Now()
		n, err := unix.Poll(fds, int(min(d, time.Second).Milliseconds())+1)
		switch {
		case n > 0:
			return true
		case err != nil && !errors.Is(err, unix.EINTR):
			return false
		}
		d -= time.Since(start)
	}
	return false
}

// readLine returns the next line without its newline; the slice is valid
// until the next read.
func (p *proc) readLine() ([]byte, error) {
	line, err := p.stdout.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return nil, p.ioError("read from the child", fmt.Errorf("output ends without a newline after %q", cut(line, 200)))
		}
		return nil, p.ioError("read from the child", err)
	}
	// A long line: gather it.
	buf := append([]byte(nil), line...)
	for {
		line, err = p.stdout.ReadSlice('\n')
		buf = append(buf, line...)
		if len(buf) > maxLine {
			return nil, p.ioError("read from the child", errLineTooLong)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, p.ioError("read from the child", err)
		}
	}
}

// ioError explains a failed read or write: a timeout, an exit, or the
// error itself.
func (p *proc) ioError(what string, err error) error {
	if p.timedOut.Load() {
		if status, ok := p.diedFirst(); ok {
			return fmt.Errorf("%s: the child %s, but its standard output stayed open (a process it started holds it) and no message came within %s (the driver's read timeout)", what, status, p.timeout)
		}
		return fmt.Errorf("%s: no message within %s (the driver's read timeout): killed", what, p.timeout)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s: the child %s", what, p.exitStatus())
	}
	return fmt.Errorf("%s: %w", what, err)
}

// diedFirst describes how the child ended when it ended before the
// watchdog killed it.
func (p *proc) diedFirst() (string, bool) {
	select {
	case <-p.exited:
	default:
		return "", false
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return "", false
		}
	}
	return p.exitStatus(), true
}

// exitStatus waits briefly for the process to end and describes how it did.
func (p *proc) exitStatus() string {
	select {
	case <-p.exited:
	case <-time.After(p.timeout):
		return "closed its output but did not exit"
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return "exited with status 0"
	case errors.As(p.waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return "ended: " + p.waitErr.Error()
}

// kill ends the whole process group at once (SIGKILL) and closes the
// harness's end of stdin.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		select {
		case <-p.exited:
			// Reaped already: its process group id may be reused.
		default:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		p.killed.Store(true)
		p.closeStdin()
	})
}

// end closes stdin (the child exits on end of input), waits up to the
// timeout for it to exit, then kills what is left. It reports whether the
// child exited by itself.
func (p *proc) end() bool {
	p.disarm()
	p.closeStdin()
	select {
	case <-p.exited:
		p.kill()
		return true
	case <-time.After(p.timeout):
		p.kill()
		return false
	}
}

// reap releases the process's resources once it is dead.
func (p *proc) reap() {
	p.disarm()
	<-p.exited
	// A read in progress (only a System closed in the middle of a run
	// has one) ends at the pipe's end, or at wakeReader's byte: the
	// descriptor it reads is not closed under it.
	p.reaped.Store(true)
	p.wakeReader()
	p.reading.Lock()
	defer p.reading.Unlock()
	p.outMu.Lock()
	p.outClosed = true
	_ = p.outFile.Close()
	p.outMu.Unlock()
	p.stderr.close()
}
