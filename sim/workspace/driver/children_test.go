package driver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/client"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// The fake children: the test binary started with CONVERGE_DRIVER_TEST_CHILD
// set plays a child that speaks the protocol by hand, well or badly.

// fakeChild is a child's side of the protocol in the raw.
type fakeChild struct {
	in  *bufio.Reader
	out *bufio.Writer
	now time.Time
	// the wake child's listener and the end of its wake-up
	listener int64
	until    time.Time
}

func (c *fakeChild) read() (wire.FromHarness, bool) {
	line, err := c.in.ReadBytes('\n')
	if err != nil {
		return wire.FromHarness{}, false
	}
	m, err := wire.DecodeFromHarness(line[:len(line)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake child:", err)
		os.Exit(9)
	}
	if m.Now != nil {
		c.now = m.Now.Time
	}
	return m, true
}

func (c *fakeChild) raw(s string) {
	c.out.WriteString(s + "\n")
	c.out.Flush()
}

func (c *fakeChild) send(m any) {
	b, _ := json.Marshal(m)
	c.raw(string(b))
}

func (c *fakeChild) done(next time.Time) {
	t := wire.T(next)
	lead := false
	c.send(wire.FromChild{Type: wire.TDone, Next: &t, Leader: &lead})
}

// pidFileEnv names the file where the escape child writes the process id
// of the process it leaves behind.
const pidFileEnv = "CONVERGE_DRIVER_TEST_PIDFILE"

// runChild plays the fake child name until the end of input; coordinators
// misbehave on their first step, API processes only say hello.
func runChild(name string) int {
	switch name {
	case "notes":
		return serveNotes()
	case "bench-calls":
		return serveBenchCalls()
	case "chatty":
		return serve(chattySystem{})
	case "lazy":
		return serve(lazySystem{})
	case "echo":
		return serveEcho()
	case "echo-spin":
		return serveEchoSpinning()
	case "linger":
		time.Sleep(time.Minute)
		return 0
	}
	c := &fakeChild{in: bufio.NewReader(os.Stdin), out: bufio.NewWriter(os.Stdout)}
	hello, ok := c.read()
	if !ok {
		return 0
	}
	version := wire.Version
	switch name {
	case "old-protocol":
		version = wire.Version + 1
	case "batch-v1":
		version = 1
	case "startup-exit":
		fmt.Fprintln(os.Stderr, "ImportError: no module named converge_drivr")
		return 1
	}
	c.send(wire.FromChild{Type: wire.TReady, Protocol: version, Name: "fake-" + name})
	for {
		m, ok := c.read()
		if !ok {
			return 0
		}
		if hello.Role == wire.RoleAPI && m.Type == wire.TAPI && name == "wrong-role" {
			// An API process has no business with the leader lock.
			c.raw(`{"type":"call","method":"leadership.try_acquire","args":{"holder":"api"}}`)
			c.read()
			continue
		}
		if hello.Role == wire.RoleAPI && m.Type == wire.TAPI && name == "api-exit" {
			fmt.Fprintln(os.Stderr, "Traceback: KeyError: 'user'")
			return 1
		}
		if hello.Role != wire.RoleCoordinator || m.Type != wire.TStep {
			c.send(wire.FromChild{Type: wire.TDone})
			continue
		}
		switch name {
		case "pipeline":
			// Three calls before reading any answer, then the answers in
			// order.
			for range 3 {
				c.raw(`{"type":"call","method":"ids.new_id","args":{}}`)
			}
			var ids []string
			for range 3 {
				a, _ := c.read()
				ids = append(ids, string(a.Value))
			}
			c.send(wire.FromChild{Type: wire.TNote, Text: "pipelined " + strings.Join(ids, " ")})
			c.done(c.now.Add(time.Second))
			continue
		case "batch", "batch-v1":
			c.raw(`{"type":"batch","calls":[{"method":"ids.new_id"},{"method":"store.get","args":{"id":"nope"}},{"method":"ids.new_id","args":{}}]}`)
			var got []string
			m, _ := c.read()
			for _, a := range m.Answers {
				if a.Type == wire.TError {
					got = append(got, a.Error.Name)
				} else {
					got = append(got, string(a.Value))
				}
			}
			c.send(wire.FromChild{Type: wire.TNote, Text: "batch " + strings.Join(got, " ")})
			c.done(c.now.Add(time.Second))
			continue
		case "wake":
			c.serveWake(m)
			continue
		case "bad-wake":
			c.raw(`{"type":"done","next":"` + c.now.Add(time.Second).Format(time.RFC3339Nano) + `","leader":false,"wake":{"calls":[{"method":"store.get","args":{"id":"x"}}],"every_ns":1000000000}}`)
		case "garbage":
			c.raw("this is not json")
		case "unknown-method":
			c.raw(`{"type":"call","method":"store.gett","args":{"id":"x"}}`)
		case "bad-args":
			c.raw(`{"type":"call","method":"store.get","args":{"idd":"x"}}`)
		case "exit":
			fmt.Fprintln(os.Stderr, "panic: something broke")
			return 3
		case "escape":
			// Dies leaving a process of another session holding its
			// standard output: the pipe does not end with the child.
			g := exec.Command(os.Args[0])
			g.Env = append(os.Environ(), childEnv+"=linger")
			g.Stdout = os.Stdout
			g.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := g.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			_ = os.WriteFile(os.Getenv(pidFileEnv), []byte(strconv.Itoa(g.Process.Pid)), 0o600)
			return 4
		case "hang":
			c.read() // waits for a message that never comes
			return 0
		case "no-next":
			c.raw(`{"type":"done","leader":false}`)
		case "answer-before-asked":
			c.raw(`{"type":"ready","protocol":1}`)
		case "random-next":
			// Reads randomness: the same conversation gets different
			// answers in two runs (it publishes at each step, so the
			// history shows when it ran).
			c.raw(`{"type":"call","method":"bus.publish","args":{"channel":"c","payload":"p"}}`)
			c.read()
			var b [8]byte
			rand.Read(b[:])
			c.done(c.now.Add(time.Second + time.Duration(binary.LittleEndian.Uint64(b[:])%uint64(time.Second))))
			continue
		default:
			c.done(c.now.Add(time.Second))
			continue
		}
		// Misbehaved: wait for the end.
		for {
			if _, ok := c.read(); !ok {
				return 0
			}
		}
	}
}

// serveWake plays a version-2 coordinator that listens at its first step
// and then waits on its listener: it declares a wake-up (a drain every
// second, for ten seconds) and notes each step it is woken for, with the
// answers the step brought.
func (c *fakeChild) serveWake(step wire.FromHarness) {
	if c.listener == 0 {
		c.raw(`{"type":"call","method":"feed.listen","args":{}}`)
		a, _ := c.read()
		var l wire.Listening
		_ = json.Unmarshal(a.Value, &l)
		c.listener, c.until = l.Listener, c.now.Add(10*time.Second)
	} else {
		answers := make([]string, len(step.Answers))
		for i, a := range step.Answers {
			answers[i] = string(a.Value)
		}
		c.send(wire.FromChild{Type: wire.TNote, Text: fmt.Sprintf("woken at %s with %d answers: %s", c.now.Format(time.TimeOnly), len(answers), strings.Join(answers, " "))})
	}
	next, until := wire.T(c.now.Add(time.Second)), wire.T(c.until)
	if !c.now.Before(c.until) {
		c.until = c.now.Add(10 * time.Second)
		until = wire.T(c.until)
	}
	lead := false
	c.send(wire.FromChild{Type: wire.TDone, Next: &next, Leader: &lead, Wake: &wire.Wake{
		Calls:   []wire.Call{{Method: wire.MListenerPoll, Args: json.RawMessage(fmt.Sprintf(`{"listener":%d}`, c.listener))}},
		EveryNs: int64(time.Second), Until: &until,
	}})
}

// serveNotes serves, with the Go client, a system whose coordinator writes
// to standard error and leaves notes at every step, and whose API answers
// Get through the store.
func serveNotes() int { return serve(notesSystem{}) }

type notesSystem struct{}

func (notesSystem) Name() string { return "notes" }

func (notesSystem) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	return &notesCoordinator{deps: deps}, nil
}

func (notesSystem) NewAPI(deps ports.Deps) (ports.API, error) { return notesAPI{deps: deps}, nil }

type notesCoordinator struct {
	deps  ports.Deps
	steps int
}

func (c *notesCoordinator) Step(ctx context.Context) (time.Time, error) {
	c.steps++
	c.deps.Note(fmt.Sprintf("note %d", c.steps))
	fmt.Fprintf(os.Stderr, "stderr %d\nline two\n", c.steps)
	return c.deps.Clock.Now().Add(time.Second), nil
}

func (c *notesCoordinator) IsLeader() bool { return false }

func (c *notesCoordinator) Close(ctx context.Context) error {
	fmt.Fprintln(os.Stderr, "closing")
	return nil
}

type notesAPI struct {
	ports.API
	deps ports.Deps
}

func (a notesAPI) Get(ctx context.Context, user, id string) (contracts.Workspace, error) {
	return a.deps.Store.Get(ctx, id)
}

// lazySystem's API is the reference's; its coordinator steps every
// second and does nothing at all.
type lazySystem struct{ notesSystem }

func (lazySystem) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	return lazyCoordinator{deps}, nil
}

func (lazySystem) NewAPI(deps ports.Deps) (ports.API, error) { return wsref.NewSystem().NewAPI(deps) }

type lazyCoordinator struct{ deps ports.Deps }

func (c lazyCoordinator) Step(context.Context) (time.Time, error) {
	return c.deps.Clock.Now().Add(time.Second), nil
}
func (lazyCoordinator) IsLeader() bool              { return false }
func (lazyCoordinator) Close(context.Context) error { return nil }

// benchCalls is how many port calls each step of the bench-calls child
// makes.
const benchCalls = 1000

// serveBenchCalls serves a coordinator whose every step makes benchCalls
// ids.new_id calls: the protocol's cost per port call, with the Go client.
func serveBenchCalls() int { return serve(benchSystem{}) }

type benchSystem struct{ notesSystem }

func (benchSystem) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	return &benchCoordinator{notesCoordinator{deps: deps}}, nil
}

type benchCoordinator struct{ notesCoordinator }

func (c *benchCoordinator) Step(ctx context.Context) (time.Time, error) {
	for range benchCalls {
		c.deps.IDs.NewID()
	}
	return c.deps.Clock.Now().Add(time.Second), nil
}

// chattyLines is how many 1 KiB lines the chatty child writes to standard
// error at each step: three times what a pipe holds.
const chattyLines = 192

// chattySystem's coordinator writes chattyLines lines to standard error
// in a step, then makes a port call: the harness must drain the pipe
// while it waits for the call, or the child blocks on it for good.
type chattySystem struct{ notesSystem }

func (chattySystem) NewCoordinator(deps ports.Deps) (ports.Coordinator, error) {
	return &chattyCoordinator{notesCoordinator{deps: deps}}, nil
}

type chattyCoordinator struct{ notesCoordinator }

func (c *chattyCoordinator) Step(ctx context.Context) (time.Time, error) {
	line := strings.Repeat("x", 1019) + "\n"
	for i := range chattyLines {
		fmt.Fprintf(os.Stderr, "%03d %s", i, line)
	}
	c.deps.IDs.NewID()
	return c.deps.Clock.Now().Add(time.Second), nil
}

func serve(system ports.System) int {
	if err := client.Serve(system); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// serveEcho writes back every line it reads, and nothing else: the floor
// under any conversation of alternating lines between two processes on
// this machine (BenchmarkProtocolFloor).
func serveEcho() int {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		out.Write(line)
		if out.Flush() != nil {
			return 1
		}
	}
}

// serveEchoSpinning is serveEcho without ever sleeping: it reads its
// standard input without blocking, in a loop, so a line is answered as
// soon as it lands — the fastest a round trip between two processes gets
// here, paid for with a core that never rests.
func serveEchoSpinning() int {
	fd := int(os.Stdin.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return 1
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EAGAIN:
			continue
		case err != nil || n == 0:
			return 0
		}
		if _, err := os.Stdout.Write(buf[:n]); err != nil {
			return 1
		}
	}
}
