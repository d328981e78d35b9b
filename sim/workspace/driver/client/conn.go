package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// conn is the child's end of the protocol.
type conn struct {
	in   *bufio.Reader
	out  *bufio.Writer
	errw io.Writer
	// now is the time of the exchange in progress: the child's clock.
	now time.Time
	// isLeader, for a coordinator, is asked before each call; the flag
	// goes with the call when it changed since it was last sent.
	isLeader func() bool
	sent     int8 // the leader flag last sent: -1 none, 0 false, 1 true
	buf      []byte
	args     []byte // a call's arguments (wire.AppendArgs)
	// version is the protocol version of the session.
	version int
	// woken holds, during a step that carries answers, the calls of the
	// wake-up the harness made for the child and their answers, in order:
	// the step's first calls are answered from them (version 2).
	woken   []wire.FromHarness
	pending []wire.Call
	// rows reads the rows of answers, remembering each row's last
	// version: most of a listing is what the last one said.
	rows *wire.RowReader
	// listed and scanned are the room of the last listing's rows, as
	// read and as handed to a Scan's function: a coordinator lists the
	// fleet at every pass (store.rows).
	listed  []wire.Workspace
	scanned []contracts.Workspace
}

// fatal aborts Serve: the harness broke the protocol or went away. It is
// raised as a panic from inside a port call (a port has no way to say
// "the protocol is gone") and recovered by Serve.
type fatal struct{ err error }

func newConn(in io.Reader, out, errw io.Writer) *conn {
	return &conn{in: bufio.NewReaderSize(in, 64<<10), out: bufio.NewWriterSize(out, 64<<10), errw: errw, sent: -1,
		rows: wire.NewRowReader()}
}

func (c *conn) fail(format string, args ...any) {
	panic(fatal{fmt.Errorf(format, args...)})
}

// readLine reads the next line of the harness; io.EOF at the end of
// input.
func (c *conn) readLine() ([]byte, error) {
	line, err := c.in.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.in.ReadSlice('\n')
			buf = append(buf, line...)
		}
		if err == nil {
			return buf[:len(buf)-1], nil
		}
	}
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return nil, io.EOF
	}
	return nil, fmt.Errorf("read from the harness: %w", err)
}

func (c *conn) send(b []byte) {
	if _, err := c.out.Write(b); err != nil {
		c.fail("write to the harness: %v", err)
	}
	if err := c.out.Flush(); err != nil {
		c.fail("write to the harness: %v", err)
	}
}

// leaderField appends the leader flag to a message if it changed.
func (c *conn) leaderField(b []byte, always bool) []byte {
	if c.isLeader == nil {
		return b
	}
	l := int8(0)
	if c.isLeader() {
		l = 1
	}
	if l == c.sent && !always {
		return b
	}
	c.sent = l
	if l == 1 {
		return append(b, `,"leader":true`...)
	}
	return append(b, `,"leader":false`...)
}

// call makes one port call and decodes its result into out (nil: none).
// A port error is returned as the error the port reported (its text, and
// the sentinel or provider error it wraps); a broken protocol is fatal.
// A call the harness already made for the child (a wake-up's) is
// answered with the answer the step brought.
func (c *conn) call(method string, args, out any) error {
	a, ok := wire.AppendArgs(c.args[:0], args)
	if ok {
		c.args = a
	} else {
		var err error
		if a, err = json.Marshal(args); err != nil {
			c.fail("encode %s: %v", method, err)
		}
	}
	if len(c.woken) > 0 {
		want := c.pending[0]
		if method != want.Method || !bytes.Equal(a, want.Args) {
			c.fail("the step began with %s %s, not with the call %s %s its wake-up declared and the harness made", method, a, want.Method, want.Args)
		}
		m := c.woken[0]
		c.woken, c.pending = c.woken[1:], c.pending[1:]
		return c.answer(method, &m, out)
	}
	b := append(c.buf[:0], `{"type":"call","method":"`...)
	b = append(b, method...)
	b = append(b, `","args":`...)
	b = append(b, a...)
	b = c.leaderField(b, false)
	b = append(b, '}', '\n')
	c.buf = b
	c.send(b)
	line, err := c.readLine()
	if err != nil {
		c.fail("%s: no answer: %v", method, err)
	}
	if v, ok := wire.CutOK(line); ok && out != nil {
		// Rows are read (and so checked) once, by their own reader or
		// by encoding/json, not also by DecodeFromHarness.
		if c.fastRows(v, out) || wire.ReadValue(v, out) {
			return nil
		}
		if err := json.Unmarshal(v, out); err != nil {
			c.fail("%s: the answer's value: %v", method, err)
		}
		return nil
	}
	m, err := wire.DecodeFromHarness(line)
	if err != nil {
		c.fail("%s: %v", method, err)
	}
	return c.answer(method, &m, out)
}

// answer decodes the answer m to a call of method into out.
func (c *conn) answer(method string, m *wire.FromHarness, out any) error {
	switch m.Type {
	case wire.TOK:
		if out != nil {
			if len(m.Value) == 0 {
				c.fail("%s: the answer has no value", method)
			}
			if c.fastRows(m.Value, out) || wire.ReadValue(m.Value, out) {
				return nil
			}
			if err := json.Unmarshal(m.Value, out); err != nil {
				c.fail("%s: the answer's value: %v", method, err)
			}
		}
		return nil
	case wire.TError:
		callErr, invalid := m.Error.Err()
		if invalid != nil {
			c.fail("%s: %v", method, invalid)
		}
		return callErr
	}
	c.fail("%s: a %q message where an answer was due", method, m.Type)
	return nil
}

// note sends a note (no answer).
func (c *conn) note(text string) {
	b, err := wire.AppendLine(c.buf[:0], wire.FromChild{Type: wire.TNote, Text: text})
	if err != nil {
		c.fail("note: %v", err)
	}
	c.buf = b
	c.send(b)
}

// terminal sends the message that ends an exchange, after the standard
// error marker (the client declares stderr_sync).
func (c *conn) terminal(m wire.FromChild) {
	if _, err := io.WriteString(c.errw, wire.StderrMarker); err != nil {
		c.fail("write the standard error marker: %v", err)
	}
	var b []byte
	if fast, ok := c.fastDone(&m); ok {
		b = fast
	} else {
		var err error
		if b, err = json.Marshal(m); err != nil {
			c.fail("encode %s: %v", m.Type, err)
		}
	}
	if m.Type == wire.TDone && c.isLeader != nil {
		b = c.leaderField(b[:len(b)-1], true)
		b = append(b, '}')
	}
	c.send(append(b, '\n'))
}

// fastRows reads rows in the layout the harness writes them
// (wire.RowReader), when out wants rows; false leaves them to
// encoding/json. Under version 3, where a row held comes as its
// changes, rows in another layout are read by the RowReader too.
func (c *conn) fastRows(raw []byte, out any) bool {
	ok := false
	switch o := out.(type) {
	case *[]wire.Workspace:
		// The rows are read into the room *o has (a listing's
		// scratch, store.rows); encoding/json, if it must read them,
		// starts from nothing.
		var rows []wire.Workspace
		rows, ok = c.rows.AppendWorkspaces((*o)[:0], raw)
		*o = rows
	case *wire.Workspace:
		var w wire.Workspace
		if w, ok = c.rows.ParseWorkspace(raw); ok {
			*o = w
		}
	default:
		return false
	}
	if !ok && c.version >= 3 {
		if err := c.rows.ReadJSON(raw, out); err != nil {
			c.fail("rows: %v", err)
		}
		ok = true
	}
	return ok
}

// fastDone writes the done of a step that went well as json.Marshal does
// (wire.AppendDone), with its closing brace; false for any other message.
func (c *conn) fastDone(m *wire.FromChild) ([]byte, bool) {
	if m.Type != wire.TDone || m.Next == nil || m.Error != nil || m.Value != nil || m.Leader != nil || m.Method != "" ||
		m.Args != nil || m.Calls != nil || m.Text != "" || m.Protocol != 0 || m.Name != "" || m.StderrSync {
		return nil, false
	}
	b, ok := wire.AppendDone(c.buf[:0], *m.Next, m.Wake)
	if !ok {
		return nil, false
	}
	c.buf = b
	return append(b, '}'), true
}
