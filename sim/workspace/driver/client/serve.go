package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// Option configures a session of the client.
type Option func(*options)

type options struct {
	protocol int
	// profile is Main's CPU profile, written in pieces between
	// exchanges (nil: none).
	profile *profile
}

// Protocol makes the client speak at most protocol version v (default
// wire.Version): 1 serves the system as a version-1 child, with no
// wake-ups.
func Protocol(v int) Option { return func(o *options) { o.protocol = v } }

// Main serves system on the process's standard input and output and
// exits: 0 at the end of input, 1 (with the reason on standard error)
// when the protocol breaks.
//
// Main owns the process: unless GOGC is set, it makes the collector run
// at a quarter of its default pace (GOGC=400). A child's heap is small
// (the rows it last read, its coordinator's state), and it allocates for
// every message; at the default pace the collector was a tenth of the
// reference child's CPU in a fleet run.
//
// With CONVERGE_CHILD_CPUPROFILE=PREFIX set, the child writes its CPU
// profile to PREFIX.PID.N, a file every 100 ms (the harness kills its
// children at the end of a run, so a profile written only at exit would
// be lost): go tool pprof reads them together.
func Main(system ports.System, opts ...Option) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	prof := startProfile(os.Getenv(ProfileEnv))
	err := ServeIO(system, os.Stdin, os.Stdout, os.Stderr, append(opts, func(o *options) { o.profile = prof })...)
	prof.stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "converge driver client:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ProfileEnv names the variable that makes Main write the child's CPU
// profile (Main).
const ProfileEnv = "CONVERGE_CHILD_CPUPROFILE"

// profile is the CPU profile of a child, written in pieces. A nil
// *profile profiles nothing.
type profile struct {
	prefix string
	n      int
	f      *os.File
	since  time.Time
}

// profileEvery is how much of a child's life each piece of its profile
// covers.
const profileEvery = 100 * time.Millisecond

// startProfile starts the profile at prefix (nil when prefix is empty). A
// profile that cannot be written is said on standard error and
// dropped: it is never a reason for the child to fail.
func startProfile(prefix string) *profile {
	if prefix == "" {
		return nil
	}
	p := &profile{prefix: prefix}
	if !p.start(time.Now()) {
		return nil
	}
	return p
}

func (p *profile) start(now time.Time) bool {
	p.n++
	f, err := os.Create(fmt.Sprintf("%s.%d.%d", p.prefix, os.Getpid(), p.n))
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "converge driver client: cpu profile:", err)
		return false
	}
	p.f, p.since = f, now
	return true
}

// stop writes the piece in progress.
func (p *profile) stop() {
	if p == nil || p.f == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "converge driver client: cpu profile:", err)
	}
	p.f = nil
}

// rotate writes the piece in progress and starts the next once it covers
// profileEvery.
func (p *profile) rotate(now time.Time) {
	if p == nil || p.f == nil || now.Sub(p.since) < profileEvery {
		return
	}
	p.stop()
	p.start(now)
}

// Serve serves system on the process's standard input and output (see
// ServeIO).
func Serve(system ports.System, opts ...Option) error {
	return ServeIO(system, os.Stdin, os.Stdout, os.Stderr, opts...)
}

// ServeIO runs the child's side of one protocol session on in and out:
// it answers the hello by building system's coordinator or API on ports
// that call the harness, then serves steps, API calls and close until
// the end of in (a nil error). errw receives the standard error markers
// that tie what the system writes there to the exchange it belongs to.
//
// It speaks the highest version both it and the harness speak. Under
// version 2, a coordinator that implements ports.Quieter is stepped only
// when something happened or its own work is due: after each step the
// client declares its quiet steps as the done's wake-up, and answers the
// calls the harness made for it from the step's answers.
func ServeIO(system ports.System, in io.Reader, out, errw io.Writer, opts ...Option) (err error) {
	o := options{protocol: wire.Version}
	for _, f := range opts {
		f(&o)
	}
	if o.protocol < wire.MinVersion || o.protocol > wire.Version {
		return fmt.Errorf("protocol version %d: this client speaks %d to %d", o.protocol, wire.MinVersion, wire.Version)
	}
	c := newConn(in, out, errw)
	defer func() {
		if p := recover(); p != nil {
			f, ok := p.(fatal)
			if !ok {
				panic(p)
			}
			err = f.err
		}
	}()
	line, err := c.readLine()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	hello, err := wire.DecodeFromHarness(line)
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if hello.Type != wire.THello {
		return fmt.Errorf("a %q message where hello was due", hello.Type)
	}
	c.version = wire.Negotiate(hello.Protocol, o.protocol)
	if c.version == 0 {
		return fmt.Errorf("the harness speaks protocol version %d; this client speaks %d to %d", hello.Protocol, wire.MinVersion, o.protocol)
	}
	if c.version >= 3 {
		c.rows.TakeChanges() // a row held comes as its changes
	}
	var limits contracts.Limits
	if hello.Limits != nil {
		limits = hello.Limits.Contracts()
	}
	deps := ports.Deps{
		Instance: hello.Instance, Store: store{c}, Leadership: leadership{c}, Feed: feed{c},
		Instances: instances{c}, Storage: storage{c}, Objects: objects{c}, Bus: bus{c},
		Clock: clock{c}, IDs: ids{c}, Limits: limits, Note: c.note,
	}
	s := &server{c: c}
	switch hello.Role {
	case wire.RoleCoordinator:
		if s.coord, err = system.NewCoordinator(deps); err != nil {
			return fmt.Errorf("build the coordinator: %w", err)
		}
		c.isLeader = s.coord.IsLeader
		if q, ok := s.coord.(ports.Quieter); ok && c.version >= 2 {
			s.quiet = q
		}
	case wire.RoleAPI:
		if s.api, err = system.NewAPI(deps); err != nil {
			return fmt.Errorf("build the API: %w", err)
		}
	default:
		return fmt.Errorf("hello: unknown role %q", hello.Role)
	}
	c.terminal(wire.FromChild{Type: wire.TReady, Protocol: c.version, Name: system.Name(), StderrSync: true})
	yielded := time.Now()
	for {
		line, err := c.readLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		m, err := wire.DecodeFromHarness(line)
		if err != nil {
			return err
		}
		if m.Now == nil {
			return fmt.Errorf("a %q request without now", m.Type)
		}
		c.now = m.Now.Time
		if err := s.woken(&m); err != nil {
			return err
		}
		done := s.serve(&m)
		if len(c.woken) > 0 {
			return fmt.Errorf("the step at %s did not make the calls its wake-up declared (%s first): the harness made them for it", c.now.Format(time.RFC3339Nano), c.pending[0].Method)
		}
		c.terminal(done)
		// The loop runs on one goroutine that never blocks but in system
		// calls, so the runtime sees it running for good: every 10 ms it
		// preempts it, and its monitor thread then wakes every 20 µs for
		// a while, nearly a tenth of a child's CPU. Yielding every few
		// milliseconds (between exchanges: the harness is busy) lets the
		// monitor sleep; yielding at every exchange costs more than it
		// saves.
		now := time.Now()
		if now.Sub(yielded) > yieldEvery {
			runtime.Gosched()
			yielded = now
		}
		o.profile.rotate(now)
	}
}

// yieldEvery is how often ServeIO yields the processor.
const yieldEvery = 5 * time.Millisecond

// server dispatches the harness's requests.
type server struct {
	c     *conn
	coord ports.Coordinator
	api   ports.API
	// quiet is the coordinator's ports.Quieter (version 2; nil: none).
	quiet ports.Quieter
	// declared is the wake-up of the last done (nil: none).
	declared *wire.Wake
}

// woken takes the answers a step brings (version 2): they answer the
// first calls of the wake-up the last done declared.
func (s *server) woken(m *wire.FromHarness) error {
	c := s.c
	c.woken, c.pending = nil, nil
	if len(m.Answers) == 0 {
		return nil
	}
	switch {
	case m.Type != wire.TStep:
		return fmt.Errorf("a %q request with answers", m.Type)
	case s.declared == nil || len(m.Answers) > len(s.declared.Calls):
		return fmt.Errorf("a step with %d answers to a wake-up of %d calls", len(m.Answers), s.wakeCalls())
	}
	for _, a := range m.Answers {
		if a.Type != wire.TOK && a.Type != wire.TError {
			return fmt.Errorf("a step's answer of type %q", a.Type)
		}
	}
	c.woken, c.pending = m.Answers, s.declared.Calls[:len(m.Answers)]
	return nil
}

func (s *server) wakeCalls() int {
	if s.declared == nil {
		return 0
	}
	return len(s.declared.Calls)
}

// wake is the wake-up a done declares: the coordinator's quiet steps,
// when it has them and they can be said on the wire (nil otherwise).
func (s *server) wake() *wire.Wake {
	if s.quiet == nil {
		return nil
	}
	q, ok := s.quiet.Quiet()
	if !ok || q.Every <= 0 || len(q.Calls) == 0 {
		return nil
	}
	w := &wire.Wake{EveryNs: int64(q.Every), Calls: make([]wire.Call, len(q.Calls))}
	if !q.Until.IsZero() {
		t := wire.T(q.Until)
		w.Until = &t
	}
	for i, qc := range q.Calls {
		var method string
		var args any
		switch {
		case qc.Acquire != "":
			method, args = wire.MLeadershipTryAcquire, wire.TryAcquire{Holder: qc.Acquire}
		case qc.Lease != nil:
			l, ok := qc.Lease.(lease)
			if !ok {
				return nil // a lease of the coordinator's own making: it polls
			}
			method, args = wire.MLeaseCheck, wire.Lease{Lease: l.h}
		case qc.Listener != nil:
			l, ok := qc.Listener.(listener)
			if !ok {
				return nil
			}
			method, args = wire.MListenerPoll, wire.Listener{Listener: l.h}
		case qc.Subscription != nil:
			sub, ok := qc.Subscription.(subscription)
			if !ok {
				return nil
			}
			method, args = wire.MSubscriptionPoll, wire.Subscription{Subscription: sub.h}
		default:
			return nil
		}
		raw, ok := wire.AppendArgs(nil, args)
		if !ok {
			var err error
			if raw, err = json.Marshal(args); err != nil {
				s.c.fail("encode the wake-up: %v", err)
			}
		}
		w.Calls[i] = wire.Call{Method: method, Args: raw}
	}
	return w
}

func (s *server) serve(m *wire.FromHarness) wire.FromChild {
	ctx := context.Background()
	done := wire.FromChild{Type: wire.TDone}
	switch {
	case m.Type == wire.TStep && s.coord != nil:
		s.declared = nil
		next, err := s.coord.Step(ctx)
		if err != nil {
			done.Error = wire.FromError(err)
			return done
		}
		t := wire.T(next)
		done.Next = &t
		done.Wake = s.wake()
		s.declared = done.Wake
	case m.Type == wire.TClose && s.coord != nil:
		done.Error = wire.FromError(s.coord.Close(ctx))
	case m.Type == wire.TAPI && s.api != nil:
		v, err := s.callAPI(ctx, m.Method, m.Args)
		if err != nil {
			done.Error = wire.FromError(err)
			return done
		}
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				s.c.fail("encode the %s result: %v", m.Method, err)
			}
		}
		done.Value = raw
	default:
		s.c.fail("a %q request this child cannot serve", m.Type)
	}
	return done
}

// callAPI runs one API call; the value is the wire form of its result
// (nil for none; rows are written as json.Marshal writes their wire
// form).
func (s *server) callAPI(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	var a wire.APIArgs
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		s.c.fail("api %s: arguments: %v", method, err)
	}
	row := func(w contracts.Workspace, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		// As json.Marshal(wire.FromWorkspace(&w)) writes it.
		return json.RawMessage(wire.AppendWorkspace(nil, &w)), nil
	}
	switch method {
	case wire.APICreate:
		if a.Create == nil {
			s.c.fail("api create: no create request")
		}
		return row(s.api.Create(ctx, a.User, a.Create.Ports()))
	case wire.APIGet:
		return row(s.api.Get(ctx, a.User, a.ID))
	case wire.APIList:
		rows, err := s.api.List(ctx, a.User)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(wire.AppendWorkspaces(nil, rows)), nil
	case wire.APIPatch:
		if a.Patch == nil {
			s.c.fail("api patch: no patch request")
		}
		return row(s.api.Patch(ctx, a.User, a.ID, *a.Patch))
	case wire.APIDelete:
		return nil, s.api.Delete(ctx, a.User, a.ID)
	case wire.APIRecover:
		return nil, s.api.Recover(ctx, a.Admin, a.ID)
	case wire.APIWake:
		return nil, s.api.Wake(ctx, a.ID)
	}
	s.c.fail("api: unknown method %q", method)
	return nil, nil
}
