package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// session is the harness's side of one child process: it sends the
// child requests and serves the port calls the child makes while
// answering them, in order, through the ports the simulator gave it.
type session struct {
	run      *run
	p        *proc
	label    string // "coord-1#2": instance and generation
	num      int    // an API process's number
	role     string
	deps     ports.Deps
	leader   bool
	stderrOK bool // the child declared stderr_sync
	name     string
	// version is the protocol version the child answered hello with.
	version int
	// starting: the hello exchange is in progress.
	starting bool

	// dead is set once the child is gone (crashed, killed or exited).
	dead error

	leases    map[int64]ports.Lease
	listeners map[int64]ports.Listener
	subs      map[int64]ports.Subscription
	handles   int64
	rows      *wire.RowWriter
	// listed is the room of the last store.list answer's rows
	// (methods.go).
	listed []byte

	// wake is the wake-up the child declared with its last step's done
	// (nil: none): the harness takes its quiet steps for it (wake.go).
	wake *wake

	// out holds the lines not yet written to the child: answers to
	// calls it pipelined are written together, once it has no complete
	// message waiting to be read.
	out []byte
	// sent is what the harness sent this child, kept while short, for a
	// failure report's reproduction (reproduce).
	sent     []byte
	sentN    int
	sentFull bool
}

// ProtocolError is a child breaking the protocol: a malformed message,
// an unknown type or method, bad arguments, an early exit, a timeout. The
// harness kills the child and reports the error as a failure of the run.
type ProtocolError struct {
	// Instance labels the child ("coord-1#2": instance and generation).
	Instance string
	Err      error
}

func (e *ProtocolError) Error() string { return "driver: " + e.Instance + ": " + e.Err.Error() }

func (e *ProtocolError) Unwrap() error { return e.Err }

// badMessageError is a protocol error about one message of the child.
// Its kind (the error without the message) is what makes two failures
// the same (crash loops, failure.go).
type badMessageError struct {
	err  error
	line string
}

func (e *badMessageError) Error() string { return e.err.Error() + " in " + e.line }
func (e *badMessageError) Unwrap() error { return e.err }

// badMessage is a protocol error about one message of the child.
func badMessage(err error, line []byte) error {
	return &badMessageError{err: err, line: cut(line, 300)}
}

// newSession starts the command for one instance and does the hello
// exchange.
func newSession(ctx context.Context, r *run, label, role string, deps ports.Deps) (*session, error) {
	if err := r.stopped(); err != nil {
		return nil, err
	}
	o := &r.sys.opts
	p, err := startProc(o.Command, o.Dir, o.Env, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("driver: %s: %w", label, err)
	}
	r.sys.reg.add(p)
	s := &session{run: r, p: p, label: label, role: role, deps: deps, starting: true,
		leases: map[int64]ports.Lease{}, listeners: map[int64]ports.Listener{}, subs: map[int64]ports.Subscription{}, rows: wire.NewRowWriter()}
	limits := wire.FromLimits(deps.Limits)
	offer := r.sys.opts.Protocol
	hello, err := wire.AppendLine(nil, wire.FromHarness{Type: wire.THello, Protocol: offer, Role: role, Instance: deps.Instance, Limits: &limits})
	if err != nil {
		return nil, err
	}
	m, err := s.exchange(ctx, hello, wire.TReady)
	if err != nil {
		return nil, s.withStderr(err)
	}
	if m.Protocol < wire.MinVersion || m.Protocol > offer {
		return nil, s.withStderr(s.fail(fmt.Errorf("the child speaks protocol version %d; this harness speaks %s", m.Protocol, versions(offer))))
	}
	s.version, s.name, s.starting = m.Protocol, m.Name, false
	if s.version >= 3 {
		s.rows.SendChanges() // rows it was sent before come as their changes
	}
	return s, nil
}

// versions names the versions a harness offering offer speaks.
func versions(offer int) string {
	if offer == wire.MinVersion {
		return strconv.Itoa(offer)
	}
	return strconv.Itoa(wire.MinVersion) + " to " + strconv.Itoa(offer)
}

// withStderr adds the end of the child's standard error to an error
// that ends a start-up, which the caller reports rather than the run's
// failures.
func (s *session) withStderr(err error) error {
	var pe *ProtocolError
	if !errors.As(err, &pe) || s.p.lastTail == "" {
		return err
	}
	return fmt.Errorf("%w\n  its standard error ends:\n    %s", err, indentLines(s.p.lastTail, "    "))
}

// request encodes a request with the time now.
func (s *session) request(m wire.FromHarness) ([]byte, error) {
	now := wire.T(s.deps.Clock.Now())
	m.Now = &now
	return wire.AppendLine(nil, m)
}

// exchange sends req and serves the child's calls (one at a time, in a
// batch, or pipelined) until it sends the terminal message (TReady or
// TDone), which it returns.
func (s *session) exchange(ctx context.Context, req []byte, terminal string) (wire.FromChild, error) {
	if s.dead != nil {
		return wire.FromChild{}, s.dead
	}
	s.p.arm()
	defer s.p.disarm()
	s.queue(req)
	for {
		if err := s.flushUnlessPending(); err != nil {
			return wire.FromChild{}, s.fail(err)
		}
		line, err := s.p.readLine()
		if err != nil {
			return wire.FromChild{}, s.fail(err)
		}
		s.run.transcript.add(s.label, fromChild, line)
		s.p.heard()
		m, err := wire.DecodeFromChild(line)
		if err != nil {
			return m, s.fail(badMessage(err, line))
		}
		switch m.Type {
		case wire.TCall:
			if m.Leader != nil {
				s.leader = *m.Leader
			}
			if err := s.serve(ctx, m.Method, m.Args, line); err != nil {
				return m, s.fail(err)
			}
			s.run.rowChanges.Add(int64(s.rows.TakeChanged()))
		case wire.TBatch:
			if s.version < 2 {
				return m, s.fail(badMessage(fmt.Errorf("a batch is protocol version 2; this child answered hello with version %d", s.version), line))
			}
			if len(m.Calls) == 0 {
				return m, s.fail(badMessage(errors.New("a batch without calls"), line))
			}
			if m.Leader != nil {
				s.leader = *m.Leader
			}
			answers := make([][]byte, 0, len(m.Calls))
			for _, c := range m.Calls {
				v, portErr, err := s.call(ctx, c.Method, c.Args, line)
				if err != nil {
					return m, s.fail(err)
				}
				a, err := appendAnswer(nil, v, portErr)
				if err != nil {
					return m, s.fail(err)
				}
				answers = append(answers, a[:len(a)-1])
			}
			s.queue(wire.AppendAnswers(nil, answers))
			s.run.rowChanges.Add(int64(s.rows.TakeChanged()))
		case wire.TNote:
			s.note(m.Text)
		case terminal:
			if m.Type == wire.TReady {
				// It marks every exchange from this one on.
				s.stderrOK = m.StderrSync
			}
			if err := s.flush(); err != nil {
				return m, s.fail(err)
			}
			if err := s.syncStderr(); err != nil {
				return m, s.fail(err)
			}
			return m, nil
		default:
			return m, s.fail(badMessage(fmt.Errorf("a %q message where a call, a note or %q was due", m.Type, terminal), line))
		}
	}
}

// queue adds a line (with its newline) to what the harness sends the
// child next, and to the transcript.
func (s *session) queue(line []byte) {
	s.run.transcript.add(s.label, toChild, line[:len(line)-1])
	s.keepSent(line)
	s.out = append(s.out, line...)
}

// flushUnlessPending writes what is queued unless the child has another
// complete message waiting: a child that pipelines its calls gets their
// answers together, and a child that waits for each answer gets it at
// once.
func (s *session) flushUnlessPending() error {
	if len(s.out) == 0 || s.p.lineBuffered() {
		return nil
	}
	return s.flush()
}

func (s *session) flush() error {
	if len(s.out) == 0 {
		return nil
	}
	err := s.p.write(s.out)
	if cap(s.out) > 1<<20 {
		s.out = nil // an answer of megabytes is not kept around
	} else {
		s.out = s.out[:0]
	}
	return err
}

// maxReproduce bounds what a session keeps of what it sent, for a
// failure report's reproduction.
const (
	maxReproduceLines = 12
	maxReproduceBytes = 8 << 10
)

func (s *session) keepSent(line []byte) {
	s.sentN++
	if s.sentFull {
		return
	}
	if s.sentN > maxReproduceLines || len(s.sent)+len(line) > maxReproduceBytes {
		s.sentFull, s.sent = true, nil
		return
	}
	s.sent = append(s.sent, line...)
}

// serve runs one port call and queues the line answering it. An error is
// fatal to the child: a protocol error, or the simulator crashing it.
func (s *session) serve(ctx context.Context, method string, raw []byte, line []byte) error {
	v, portErr, err := s.call(ctx, method, raw, line)
	if err != nil {
		return err
	}
	start := len(s.out)
	s.out, err = appendAnswer(s.out, v, portErr)
	if err != nil {
		return err
	}
	s.run.transcript.add(s.label, toChild, s.out[start:len(s.out)-1])
	s.keepSent(s.out[start:])
	return nil
}

// call runs one port call through the ports the simulator gave the child:
// its value or the port's error, or an error fatal to the child (a
// protocol error, or the simulator crashing it).
func (s *session) call(ctx context.Context, method string, raw []byte, line []byte) (v any, portErr, fatal error) {
	h, ok := handlers[method]
	if !ok {
		return nil, nil, badMessage(fmt.Errorf("unknown method %q", method), line)
	}
	if h.role != "" && h.role != s.role {
		return nil, nil, badMessage(fmt.Errorf("method %q is for a %s, not for a %s", method, h.role, s.role), line)
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	v, err := h.serve(ctx, s, raw)
	var bad *badArgs
	switch {
	case errors.As(err, &bad):
		return nil, nil, badMessage(fmt.Errorf("%s: %w", method, bad.err), line)
	case errors.Is(err, contracts.ErrCrashed):
		// The simulator's gate failed this call: the process is dead
		// from here on (fail-stop), so it is killed, not answered.
		return nil, nil, &crashed{err}
	case err != nil:
		return nil, err, nil
	}
	return v, nil, nil
}

// appendAnswer appends the line answering a call with value v or error
// portErr.
func appendAnswer(b []byte, v any, portErr error) ([]byte, error) {
	if portErr != nil {
		return wire.AppendLine(b, wire.FromHarness{Type: wire.TError, Error: wire.FromError(portErr)})
	}
	return wire.AppendOK(b, v)
}

// crashed is the simulator crashing the child at a port call.
type crashed struct{ err error }

func (c *crashed) Error() string { return c.err.Error() }
func (c *crashed) Unwrap() error { return c.err }

// badArgs is a call's arguments that do not decode or validate.
type badArgs struct{ err error }

func (b *badArgs) Error() string { return b.err.Error() }

// fail ends the child after err and returns the error the caller gets:
// a crash by the simulator as it is, anything else as a ProtocolError,
// reported as a failure of the run with the end of the child's standard
// error.
func (s *session) fail(err error) error {
	if s.dead != nil {
		return s.dead
	}
	var c *crashed
	if errors.As(err, &c) {
		s.p.kill()
		s.p.reap()
		s.dead = c.err
		return s.dead
	}
	if s.starting {
		err = &startupError{err}
	}
	pe := &ProtocolError{Instance: s.label, Err: err}
	s.dead = pe
	s.p.kill()
	rest, _ := s.p.stderr.rest(s.p.timeout)
	s.p.reap()
	s.p.lastTail = rest.tail(2000)
	s.run.addFailure(s, pe, s.p.lastTail)
	s.note(pe.Error())
	return pe
}

// startupError is a child failing before its ready.
type startupError struct{ err error }

func (e *startupError) Error() string { return "at start-up: " + e.err.Error() }
func (e *startupError) Unwrap() error { return e.err }

// syncStderr takes what the child wrote to standard error during the
// exchange into the history, for a child that marks its exchanges.
func (s *session) syncStderr() error {
	if !s.stderrOK {
		return nil
	}
	seg, err := s.p.stderr.sync(s.p.timeout)
	if err != nil {
		return fmt.Errorf("declared stderr_sync but wrote no marker to standard error before its message: %w", err)
	}
	for _, n := range seg.notes() {
		s.note(n)
	}
	return nil
}

// note leaves text in the history, when the simulator takes notes.
func (s *session) note(text string) {
	if s.deps.Note != nil {
		s.deps.Note(s.label + ": " + text)
	}
}

// stop ends a child that is no longer needed: it is killed at once (what
// it writes from now on belongs to no exchange).
func (s *session) stop() {
	if s.dead == nil {
		s.dead = fmt.Errorf("driver: %s: stopped", s.label)
	}
	s.p.kill()
	go s.p.reap() // nobody reads it any more: release its pipe once it is gone
}

// close ends a child cleanly: its input ends and it exits by itself, or
// is killed after the timeout. What it wrote to standard error since its
// last exchange is noted.
func (s *session) close() {
	if s.dead != nil {
		return
	}
	s.dead = fmt.Errorf("driver: %s: closed", s.label)
	s.p.end()
	rest, _ := s.p.stderr.rest(s.p.timeout)
	s.p.reap()
	for _, n := range rest.notes() {
		s.note(n)
	}
}

// handle issues the next handle number.
func (s *session) handle() int64 {
	s.handles++
	return s.handles
}

// reproduce is the shell command that gives the child, run alone, what
// the harness gave it (when that was short enough to keep), and how
// many messages that was.
func (s *session) reproduce() (cmd string, messages int) {
	if s.sentFull || len(s.sent) == 0 {
		return "", s.sentN
	}
	var b bytes.Buffer
	b.WriteString("printf '%s\\n'")
	for _, l := range bytes.Split(bytes.TrimSuffix(s.sent, []byte("\n")), []byte("\n")) {
		b.WriteByte(' ')
		b.WriteString(shellQuote(string(l)))
	}
	b.WriteString(" | ")
	b.WriteString(commandString(s.run.sys.opts.Command))
	return b.String(), s.sentN
}

func label(instance string, gen int) string { return instance + "#" + strconv.Itoa(gen) }
