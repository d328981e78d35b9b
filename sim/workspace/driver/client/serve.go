package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// Main serves system on the process's standard input and output and
// exits: 0 at the end of input, 1 (with the reason on standard error)
// when the protocol breaks.
func Main(system ports.System) {
	if err := Serve(system); err != nil {
		fmt.Fprintln(os.Stderr, "converge driver client:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve serves system on the process's standard input and output (see
// ServeIO).
func Serve(system ports.System) error { return ServeIO(system, os.Stdin, os.Stdout, os.Stderr) }

// ServeIO runs the child's side of one protocol session on in and out:
// it answers the hello by building system's coordinator or API on ports
// that call the harness, then serves steps, API calls and close until
// the end of in (a nil error). errw receives the standard error markers
// that tie what the system writes there to the exchange it belongs to.
func ServeIO(system ports.System, in io.Reader, out, errw io.Writer) (err error) {
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
	if hello.Protocol != wire.Version {
		// Answer with our version: the harness says what is wrong.
		fmt.Fprintf(errw, "converge driver client: the harness speaks protocol %d, this client %d\n", hello.Protocol, wire.Version)
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
	case wire.RoleAPI:
		if s.api, err = system.NewAPI(deps); err != nil {
			return fmt.Errorf("build the API: %w", err)
		}
	default:
		return fmt.Errorf("hello: unknown role %q", hello.Role)
	}
	c.terminal(wire.FromChild{Type: wire.TReady, Protocol: wire.Version, Name: system.Name(), StderrSync: true})
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
		c.terminal(s.serve(&m))
	}
}

// server dispatches the harness's requests.
type server struct {
	c     *conn
	coord ports.Coordinator
	api   ports.API
}

func (s *server) serve(m *wire.FromHarness) wire.FromChild {
	ctx := context.Background()
	done := wire.FromChild{Type: wire.TDone}
	switch {
	case m.Type == wire.TStep && s.coord != nil:
		next, err := s.coord.Step(ctx)
		if err != nil {
			done.Error = wire.FromError(err)
			return done
		}
		t := wire.T(next)
		done.Next = &t
	case m.Type == wire.TClose && s.coord != nil:
		done.Error = wire.FromError(s.coord.Close(ctx))
	case m.Type == wire.TAPI && s.api != nil:
		v, err := s.callAPI(ctx, m.Method, m.Args)
		if err != nil {
			done.Error = wire.FromError(err)
			return done
		}
		raw, err := json.Marshal(v)
		if err != nil {
			s.c.fail("encode the %s result: %v", m.Method, err)
		}
		done.Value = raw
	default:
		s.c.fail("a %q request this child cannot serve", m.Type)
	}
	return done
}

// callAPI runs one API call; the value is the wire form of its result
// (nil for none).
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
		return wire.FromWorkspace(&w), nil
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
		return wire.FromWorkspaces(rows), nil
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
