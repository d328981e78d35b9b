package history

import (
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/record"
)

// Line renders e on one line for a failure timeline. Its time is shown as
// the virtual offset from start ("+1d02:03:04.500"), then the sequence
// number, kind, writer or caller, workspace (a UUID shortened to its first
// 8 characters), and what happened:
//
//	+00:05:02.100 #1234 db.write coord-1/state_reconciler e2 ws=1a2b3c4d operation=STARTING op_started_at=… if operation=NONE,not-terminal applied
func Line(e Event, start time.Time) string {
	var b strings.Builder
	b.Grow(128)
	b.WriteString(Offset(e.At.Sub(start)))
	b.WriteString(" #")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	b.WriteByte(' ')
	b.WriteString(string(e.Kind))
	if e.Instance != "" || e.Component != "" {
		b.WriteByte(' ')
		b.WriteString(e.Instance)
		if e.Component != "" {
			if e.Instance != "" {
				b.WriteByte('/')
			}
			b.WriteString(string(e.Component))
		}
	}
	if e.Epoch != 0 {
		b.WriteString(" e")
		b.WriteString(strconv.FormatInt(e.Epoch, 10))
	}
	if e.Workspace != "" {
		b.WriteString(" ws=")
		b.WriteString(ShortID(e.Workspace))
	}
	if e.Method != "" {
		b.WriteByte(' ')
		b.WriteString(e.Method)
	}
	if e.Args != "" {
		b.WriteByte(' ')
		b.WriteString(e.Args)
	}
	if e.Row != nil {
		b.WriteString(" owner=")
		b.WriteString(ShortID(e.Row.OwnerUserID))
		b.WriteString(" desired=")
		b.WriteString(string(e.Row.DesiredState))
	}
	if e.Patch != nil {
		for _, c := range e.Patch.Columns() {
			b.WriteByte(' ')
			b.WriteString(string(c))
			b.WriteByte('=')
			b.WriteString(PatchValue(e.Patch, c))
		}
	}
	if e.Cond != nil {
		if c := CondString(e.Cond); c != "" {
			b.WriteString(" if ")
			b.WriteString(c)
		}
	}
	if e.Kind == KindWrite {
		if e.Applied {
			b.WriteString(" applied")
		} else {
			b.WriteString(" not-applied")
		}
	}
	if e.Result != "" {
		b.WriteString(" -> ")
		b.WriteString(e.Result)
	}
	if e.Err != "" {
		b.WriteString(" ERR ")
		b.WriteString(e.Err)
	}
	return b.String()
}

// Timeline renders events with Line, one string per event.
func Timeline(events []Event, start time.Time) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = Line(e, start)
	}
	return out
}

// Offset renders a virtual duration since the start of a run as
// "+HH:MM:SS.mmm" (record.Offset: both worlds' timelines share it).
func Offset(d time.Duration) string { return record.Offset(d) }

// ShortID shortens a UUID to its first 8 characters for timelines; any
// other string is returned whole.
func ShortID(id string) string {
	if len(id) == 36 && id[8] == '-' {
		return id[:8]
	}
	return id
}

// CondString renders the set fields of c ("operation=NONE,not-terminal"),
// or "" when c sets none.
func CondString(c *contracts.Cond) string {
	parts := make([]string, 0, 6)
	if c.Operation.Set {
		parts = append(parts, "operation="+string(c.Operation.V))
	}
	if c.DesiredState.Set {
		parts = append(parts, "desired_state="+string(c.DesiredState.V))
	}
	if c.NotTerminal {
		parts = append(parts, "not-terminal")
	}
	if c.NotDeleted {
		parts = append(parts, "not-deleted")
	}
	if c.ErrorInfoNull {
		parts = append(parts, "error_info=null")
	}
	if c.Terminal {
		parts = append(parts, "terminal")
	}
	return strings.Join(parts, ",")
}

// NoteHealthPass is the Method of the note a store records for each
// HealthMonitor pass that only marked rows observed (Store.MarkObserved).
const NoteHealthPass = "health.pass"

// Routine reports whether e is polling that fills a long run's history and
// says little in a failure timeline: a successful listing call
// (instances.List, storage.ListVolumes, objects.List…) or the note of a
// HealthMonitor pass.
func Routine(e *Event) bool {
	switch e.Kind {
	case KindCall:
		return e.Err == "" && e.Workspace == "" &&
			(strings.HasSuffix(e.Method, ".List") || strings.HasSuffix(e.Method, ".ListVolumes"))
	case KindNote:
		return e.Method == NoteHealthPass
	}
	return false
}

// OnBehalfPrefix begins the Args of a write the API service layer makes
// on behalf of another component (the TTL Manager's desired change, the
// proxy's auto-wake, the reconciler's last-access stamp): "on behalf of
// ttl_manager". Every recorder writes it so and the checkers read it so.
const OnBehalfPrefix = "on behalf of "

// OnBehalfArgs is the Args a recorder gives a write by w: OnBehalfPrefix
// and the component it acts for, or "" when it acts for none.
func OnBehalfArgs(w contracts.Writer) string {
	if w.OnBehalf == "" {
		return ""
	}
	return OnBehalfPrefix + string(w.OnBehalf)
}
