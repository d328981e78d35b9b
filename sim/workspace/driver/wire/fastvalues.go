package wire

import (
	"encoding/json"
	"strconv"

	"github.com/wsconverge/converge/contracts/ports"
)

// The Go client's fast paths: the arguments of its most frequent calls
// and the values of their answers, in the one layout encoding/json
// writes, without reflection. A call's arguments and an answer's value
// went through json.Marshal and json.Unmarshal in every round trip, the
// largest part of the Go child's own CPU after its rows. AppendArgs
// writes exactly what json.Marshal writes (TestAppendArgsIsJSONMarshal);
// ReadValue reads what it takes as json.Unmarshal does and leaves
// anything else to it (TestReadValueAgreesWithJSONUnmarshal).

// AppendArgs appends the arguments args as json.Marshal writes them, for
// the types it knows; ok is false for the others (marshal them).
func AppendArgs(b []byte, args any) (_ []byte, ok bool) {
	switch a := args.(type) {
	case None:
		return append(b, '{', '}'), true
	case ID:
		return append(appendStr(append(b, `{"id":`...), a.ID), '}'), true
	case Key:
		return append(appendStr(append(b, `{"key":`...), a.Key), '}'), true
	case StoreList:
		return append(appendStr(append(b, `{"filter":`...), string(a.Filter)), '}'), true
	case TryAcquire:
		return append(appendStr(append(b, `{"holder":`...), a.Holder), '}'), true
	case Lease:
		return append(strconv.AppendInt(append(b, `{"lease":`...), a.Lease, 10), '}'), true
	case Listener:
		return append(strconv.AppendInt(append(b, `{"listener":`...), a.Listener, 10), '}'), true
	case Subscription:
		return append(strconv.AppendInt(append(b, `{"subscription":`...), a.Subscription, 10), '}'), true
	case StoreMarkObserved:
		if a.IDs == nil {
			return b, false
		}
		b = appendWriter(append(b, `{"writer":`...), &a.Writer)
		b = append(b, `,"ids":[`...)
		for i, id := range a.IDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStr(b, id)
		}
		b = appendTime(append(b, `],"at":`...), a.At.Time)
		return append(b, '}'), true
	}
	return b, false
}

// appendWriter appends w as json.Marshal writes it.
func appendWriter(b []byte, w *Writer) []byte {
	b = appendStr(append(b, `{"component":`...), string(w.Component))
	if w.Instance != "" {
		b = appendStr(append(b, `,"instance":`...), w.Instance)
	}
	if w.Epoch != 0 {
		b = strconv.AppendInt(append(b, `,"epoch":`...), w.Epoch, 10)
	}
	if w.OnBehalf != "" {
		b = appendStr(append(b, `,"on_behalf":`...), string(w.OnBehalf))
	}
	return append(b, '}')
}

// ReadValue reads an answer's value into out, for the types it knows and
// the layout encoding/json writes; false leaves it to json.Unmarshal.
func ReadValue(raw []byte, out any) bool {
	p := parser{b: raw}
	switch o := out.(type) {
	case *[]string:
		v, ok := readList(&p, func(p *parser) string { return p.str() })
		if ok {
			*o = v
		}
		return ok
	case *[]InstanceState:
		v, ok := readList(&p, func(p *parser) (s InstanceState) {
			p.field(`{"workspace_id":`)
			s.WorkspaceID = p.str()
			p.field(`,"running":`)
			s.Running = p.bool()
			p.field(`}`)
			return s
		})
		if ok {
			*o = v
		}
		return ok
	case *[]ports.Change:
		if string(raw) == "[]" {
			*o = []ports.Change{}
			return true
		}
	case *[]Message:
		if string(raw) == "[]" {
			*o = []Message{}
			return true
		}
	case *string:
		v := p.str()
		if p.end() {
			*o = v
			return true
		}
	case *BusValue:
		p.field(`{"value":`)
		v := p.str()
		p.field(`,"ok":`)
		ok := p.bool()
		p.field(`}`)
		if p.end() {
			*o = BusValue{Value: v, OK: ok}
			return true
		}
	case *Applied:
		switch string(raw) {
		case `{"applied":true}`:
			*o = Applied{Applied: true}
			return true
		case `{"applied":false}`:
			*o = Applied{}
			return true
		}
	}
	return false
}

// readList reads null or a list of elements each read by elem.
func readList[T any](p *parser, elem func(p *parser) T) ([]T, bool) {
	if p.lit("null") {
		return nil, p.end()
	}
	if !p.lit("[") {
		return nil, false
	}
	out := []T{}
	if p.lit("]") {
		return out, p.end()
	}
	for {
		out = append(out, elem(p))
		if p.lit("]") {
			return out, p.end()
		}
		if !p.lit(",") {
			return nil, false
		}
	}
}

func (p *parser) bool() bool {
	switch {
	case p.lit("true"):
		return true
	case p.lit("false"):
		return false
	}
	p.bad = true
	return false
}

// AppendDone appends the done of a step, json.Marshal(FromChild{Type:
// TDone, Next: &next, Wake: wake}) without its closing brace (the client
// adds its leader flag), when wake's arguments are compact JSON as
// json.Marshal writes them; ok is false otherwise.
func AppendDone(b []byte, next Time, wake *Wake) (_ []byte, ok bool) {
	if next.IsZero() {
		return b, false
	}
	b = appendTime(append(b, `{"type":"done","next":`...), next.Time)
	if wake == nil {
		return b, true
	}
	if wake.Calls == nil {
		return b, false
	}
	b = append(b, `,"wake":{"calls":[`...)
	for i, c := range wake.Calls {
		if i > 0 {
			b = append(b, ',')
		}
		if !plain(c.Method) || len(c.Args) == 0 || !compactArgs(c.Args) {
			return b, false
		}
		b = append(b, `{"method":"`...)
		b = append(b, c.Method...)
		b = append(b, `","args":`...)
		b = append(b, c.Args...)
		b = append(b, '}')
	}
	b = strconv.AppendInt(append(b, `],"every_ns":`...), wake.EveryNs, 10)
	if wake.Until != nil {
		b = appendTime(append(b, `,"until":`...), wake.Until.Time)
	}
	return append(b, '}'), true
}

// compactArgs reports whether json.Marshal writes args (a RawMessage) as
// they are: an object of printable ASCII without white space outside its
// strings (encoding/json compacts, and escapes <, > and &).
func compactArgs(a []byte) bool {
	if a[0] != '{' || !json.Valid(a) {
		return false
	}
	inStr := false
	for i := 0; i < len(a); i++ {
		c := a[i]
		switch {
		case c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&':
			return false
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && c == ' ':
			return false
		}
	}
	return true
}
