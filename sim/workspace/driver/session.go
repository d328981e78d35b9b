package driver

import (
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
// answering them, one at a time, through the ports the simulator gave
// it.
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

	// dead is set once the child is gone (crashed, killed or exited).
	dead error

	leases    map[int64]ports.Lease
	listeners map[int64]ports.Listener
	subs      map[int64]ports.Subscription
	handles   int64

	buf []byte
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

// badMessage is a protocol error about one message of the child.
func badMessage(err error, line []byte) error {
	return fmt.Errorf("%w in %s", err, cut(line, 300))
}

// newSession starts the command for one instance and does the hello
// exchange.
func newSession(ctx context.Context, r *run, label, role string, deps ports.Deps) (*session, error) {
	o := &r.sys.opts
	p, err := startProc(o.Command, o.Dir, o.Env, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("driver: %s: %w", label, err)
	}
	r.sys.reg.add(p)
	s := &session{run: r, p: p, label: label, role: role, deps: deps,
		leases: map[int64]ports.Lease{}, listeners: map[int64]ports.Listener{}, subs: map[int64]ports.Subscription{}}
	limits := wire.FromLimits(deps.Limits)
	hello, err := wire.AppendLine(nil, wire.FromHarness{Type: wire.THello, Protocol: wire.Version, Role: role, Instance: deps.Instance, Limits: &limits})
	if err != nil {
		return nil, err
	}
	m, err := s.exchange(ctx, hello, wire.TReady)
	if err != nil {
		return nil, err
	}
	if m.Protocol != wire.Version {
		return nil, s.fail(fmt.Errorf("the child speaks protocol version %d; this harness speaks %d", m.Protocol, wire.Version))
	}
	s.name = m.Name
	return s, nil
}

// request encodes a request with the time now.
func (s *session) request(m wire.FromHarness) ([]byte, error) {
	now := wire.T(s.deps.Clock.Now())
	m.Now = &now
	return wire.AppendLine(s.buf[:0], m)
}

// exchange sends req and serves the child's calls until it sends the
// terminal message (TReady or TDone), which it returns.
func (s *session) exchange(ctx context.Context, req []byte, terminal string) (wire.FromChild, error) {
	if s.dead != nil {
		return wire.FromChild{}, s.dead
	}
	s.p.arm()
	defer s.p.disarm()
	if err := s.send(req); err != nil {
		return wire.FromChild{}, s.fail(err)
	}
	for {
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
			reply, err := s.serve(ctx, &m, line)
			if err != nil {
				return m, s.fail(err)
			}
			if err := s.send(reply); err != nil {
				return m, s.fail(err)
			}
		case wire.TNote:
			s.note(m.Text)
		case terminal:
			if m.Type == wire.TReady {
				// It marks every exchange from this one on.
				s.stderrOK = m.StderrSync
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

func (s *session) send(line []byte) error {
	s.run.transcript.add(s.label, toChild, line[:len(line)-1])
	return s.p.write(line)
}

// serve runs one port call and returns the line answering it. An error
// is fatal to the child: a protocol error, or the simulator crashing it.
func (s *session) serve(ctx context.Context, m *wire.FromChild, line []byte) ([]byte, error) {
	h, ok := handlers[m.Method]
	if !ok {
		return nil, badMessage(fmt.Errorf("unknown method %q", m.Method), line)
	}
	if h.role != "" && h.role != s.role {
		return nil, badMessage(fmt.Errorf("method %q is for a %s, not for a %s", m.Method, h.role, s.role), line)
	}
	args := []byte(m.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	v, err := h.serve(ctx, s, args)
	var bad *badArgs
	switch {
	case errors.As(err, &bad):
		return nil, badMessage(fmt.Errorf("%s: %w", m.Method, bad.err), line)
	case errors.Is(err, contracts.ErrCrashed):
		// The simulator's gate failed this call: the process is dead
		// from here on (fail-stop), so it is killed, not answered.
		return nil, &crashed{err}
	case err != nil:
		return wire.AppendLine(s.buf[:0], wire.FromHarness{Type: wire.TError, Error: wire.FromError(err)})
	}
	return wire.AppendOK(s.buf[:0], v)
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
	pe := &ProtocolError{Instance: s.label, Err: err}
	s.dead = pe
	s.p.kill()
	rest, _ := s.p.stderr.rest(s.p.timeout)
	s.p.reap()
	msg := pe.Error()
	if tail := rest.tail(2000); tail != "" {
		msg += "\n  its standard error ends:\n    " + tail
	}
	s.run.addFailure(msg)
	s.note(pe.Error())
	return pe
}

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

func label(instance string, gen int) string { return instance + "#" + strconv.Itoa(gen) }
