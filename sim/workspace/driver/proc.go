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

// proc is one child process and its three pipes (the harness's ends
// nonblocking, the child's ends plain blocking files). A watchdog kills
// the process group when a message does not come within the timeout,
// which ends any read or write in progress.
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

	// reading is held by Read, which polls the raw descriptors: reap
	// closes them outside it, once reaped has told Read to stop.
	reading sync.Mutex
	reaped  atomic.Bool
	pollFDs [2]unix.PollFd // standard output, standard error; Read's
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
	// context switch a message. The harness's ends are then made
	// nonblocking, and read and written only through their raw
	// descriptors (Read, write).
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
	for _, fd := range []int{inFD, outFD, errFD} {
		if err := unix.SetNonblock(fd, true); err != nil {
			closeAll()
			return nil, os.NewSyscallError("fcntl", err)
		}
	}
	tap := newStderrTap(errR, errFD)
	p := &proc{cmd: cmd, stdin: inW, inFD: inFD, outFile: outR, outFD: outFD, stderr: tap, timeout: timeout, exited: make(chan struct{})}
	p.stdout = bufio.NewReaderSize(p, 64<<10)
	p.pollFDs = [2]unix.PollFd{{Fd: int32(outFD), Events: unix.POLLIN}, {Fd: int32(tap.fd), Events: unix.POLLIN}}
	p.born = time.Now()
	p.watchdog = time.AfterFunc(time.Hour, p.watch)
	p.watchdog.Stop()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// arm starts the watchdog for an exchange: every message of the child
// must come within the timeout of the one before (or of arm).
func (p *proc) arm() {
	p.heard()
	p.armed.Store(true)
	p.watchdog.Reset(p.timeout)
}

// heard notes a message of the child. The timer is not reset at every
// message (that costs more than the message): it checks, when it fires,
// how long the child has been quiet, and waits out the rest.
func (p *proc) heard() { p.lastHeard.Store(int64(time.Since(p.born))) }

// watch is the watchdog's timer: it kills a child quiet for the timeout.
// A firing left over from an earlier exchange does nothing.
func (p *proc) watch() {
	if !p.armed.Load() {
		return
	}
	quiet := time.Since(p.born) - time.Duration(p.lastHeard.Load())
	if quiet < p.timeout {
		p.watchdog.Reset(p.timeout - quiet)
		return
	}
	p.timedOut.Store(true)
	p.kill()
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
// for the pipe in the kernel (poll) rather than on Go's poller, which
// would park the goroutine and wake it through the scheduler at about
// the cost of the wake-up itself. While it waits longer than a
// millisecond it drains the child's standard error too, so that a child
// writing a lot there never blocks on a full pipe.
func (p *proc) Read(b []byte) (int, error) {
	p.reading.Lock()
	defer p.reading.Unlock()
	fds := p.pollFDs[:]
	// bufio asks for more only once it has handed out every line it
	// had, when the child has usually not answered yet: wait first, then
	// read (two system calls a message, not three).
	for waited := 0; ; waited++ {
		switch {
		case p.timedOut.Load():
			return 0, errTimedOut
		case p.reaped.Load():
			return 0, os.ErrClosed
		}
		wait, ms := fds[:1], 1
		if waited > 0 {
			ms = 10
			if !p.stderr.ended() {
				wait = fds
			}
		}
		k, err := unix.Poll(wait, ms)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return 0, &os.PathError{Op: "poll", Path: "the child's standard output", Err: err}
		}
		if len(wait) == 2 && fds[1].Revents != 0 {
			p.stderr.drain()
		}
		if k <= 0 || fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(p.outFD, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: "the child's standard output", Err: err}
		case n == 0:
			return 0, io.EOF
		default:
			return n, nil
		}
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
		return fmt.Errorf("%s: no message within %s (the driver's read timeout): killed", what, p.timeout)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s: the child %s", what, p.exitStatus())
	}
	return fmt.Errorf("%s: %w", what, err)
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
	// has one) ends at the pipe's end, or within one poll: the
	// descriptors it polls are not closed under it.
	p.reaped.Store(true)
	p.reading.Lock()
	defer p.reading.Unlock()
	_ = p.outFile.Close()
	p.stderr.close()
}
