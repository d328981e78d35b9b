package history

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/record"
)

// Kind classifies an event.
type Kind string

// Event kinds.
const (
	// KindInsert: a row inserted (Row holds it).
	KindInsert Kind = "db.insert"
	// KindWrite: an attempted update (Patch, Applied, Err).
	KindWrite Kind = "db.write"
	// KindCall: a provider, object-store or bus call (Method, Args, Result, Err).
	KindCall Kind = "call"
	// KindAPI: an API service call (Method, Args, Result, Err).
	KindAPI Kind = "api"
	// KindLeader: a leadership change (Method: acquire, lost, release).
	KindLeader Kind = "leader"
	// KindFault: a fault injected by the harness.
	KindFault Kind = "fault"
	// KindCrash: a coordinator instance crashed or was restarted.
	KindCrash Kind = "crash"
	// KindUser: a user action outside the API (connect, write data…).
	KindUser Kind = "user"
	// KindNote: anything else worth a line in the timeline.
	KindNote Kind = "note"
)

// Event is one recorded fact.
type Event struct {
	Seq       int64
	At        time.Time
	Kind      Kind
	Instance  string
	Component contracts.Component
	Epoch     int64
	Workspace string
	Method    string
	Args      string
	Result    string
	Err       string
	// Writes only.
	Patch   *contracts.Patch
	Cond    *contracts.Cond
	Applied bool
	// Inserts only.
	Row *contracts.Workspace
}

// Recorder collects a run's events (record.Recorder with the workspace
// world's canonical encoding). Events whose Kind is KindWrite and that only
// set observed_at are folded into the hash but not kept: they are the bulk
// of a long run and say nothing a checker needs; ObservedAtWrites counts
// them.
type Recorder struct {
	*record.Recorder[Event]
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{record.NewRecorder(appendEvent, func(e *Event, seq int64) { e.Seq = seq }, keep)}
}

func keep(e *Event) bool {
	return !(e.Kind == KindWrite && e.Patch != nil && onlyObservedAt(e.Patch))
}

func onlyObservedAt(p *contracts.Patch) bool { return p.Mask() == contracts.MaskObservedAt }

// ObservedAtWrites counts the observed_at-only writes folded into the
// hash (or accounted for in bulk) and not kept.
func (r *Recorder) ObservedAtWrites() int64 { return r.Folded() }

// CountObservedAt accounts for n observed_at-only writes applied in bulk
// by a store that records the pass itself (a note with the count).
func (r *Recorder) CountObservedAt(n int) { r.CountFolded(n) }

// appendEvent is the canonical encoding of e folded into the hash.
func appendEvent(b []byte, e *Event) []byte {
	b = binary.AppendVarint(b, e.Seq)
	b = binary.AppendVarint(b, e.At.UnixNano())
	b = appendStr(b, string(e.Kind))
	b = appendStr(b, e.Instance)
	b = appendStr(b, string(e.Component))
	b = binary.AppendVarint(b, e.Epoch)
	b = appendStr(b, e.Workspace)
	b = appendStr(b, e.Method)
	b = appendStr(b, e.Args)
	b = appendStr(b, e.Result)
	b = appendStr(b, e.Err)
	if e.Applied {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	if e.Patch != nil {
		if onlyObservedAt(e.Patch) {
			b = appendTime(b, e.Patch.ObservedAt.V)
		} else {
			b = AppendPatch(b, e.Patch)
		}
	}
	if e.Row != nil {
		b = appendStr(b, e.Row.ID)
		b = appendStr(b, e.Row.OwnerUserID)
		b = appendStr(b, string(e.Row.DesiredState))
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), t.UnixNano())
}

// AppendPatch appends a canonical encoding of p's assignments to b.
func AppendPatch(b []byte, p *contracts.Patch) []byte {
	for _, c := range p.Columns() {
		b = appendStr(b, string(c))
		b = appendStr(b, PatchValue(p, c))
	}
	return b
}

// PatchValue renders the value p assigns to column c, for timelines and
// hashing ("null" for a null value).
func PatchValue(p *contracts.Patch, c contracts.Column) string {
	switch c {
	case contracts.ColName:
		return p.Name.V
	case contracts.ColDescription:
		return p.Description.V
	case contracts.ColMemo:
		return p.Memo.V
	case contracts.ColHomeCtx:
		if p.HomeCtx.V == nil {
			return "null"
		}
		return "restore_marker=" + p.HomeCtx.V.RestoreMarker
	case contracts.ColObservedStatus:
		return string(p.ObservedStatus.V)
	case contracts.ColHealthStatus:
		return string(p.HealthStatus.V)
	case contracts.ColObservedAt:
		return timeStr(p.ObservedAt.V)
	case contracts.ColOperation:
		return string(p.Operation.V)
	case contracts.ColOpStartedAt:
		return timeStr(p.OpStartedAt.V)
	case contracts.ColOpID:
		return nullStr(p.OpID.V)
	case contracts.ColArchiveKey:
		return nullStr(p.ArchiveKey.V)
	case contracts.ColErrorCount:
		return strconv.Itoa(p.ErrorCount.V)
	case contracts.ColErrorInfo:
		if p.ErrorInfo.V == nil {
			return "null"
		}
		e := p.ErrorInfo.V
		return string(e.Reason) + " terminal=" + strconv.FormatBool(e.IsTerminal) + " count=" + strconv.Itoa(e.ErrorCount) + " msg=" + strconv.Quote(e.Message)
	case contracts.ColErrorMessage:
		return nullStr(p.ErrorMessage.V)
	case contracts.ColPreviousStatus:
		return nullStr(string(p.PreviousStatus.V))
	case contracts.ColDesiredState:
		return string(p.DesiredState.V)
	case contracts.ColDeletedAt:
		return timeStr(p.DeletedAt.V)
	case contracts.ColStandbyTTLSeconds:
		return strconv.Itoa(p.StandbyTTLSeconds.V)
	case contracts.ColArchiveTTLSeconds:
		return strconv.Itoa(p.ArchiveTTLSeconds.V)
	case contracts.ColLastAccessAt:
		return timeStr(p.LastAccessAt.V)
	}
	return "?"
}

func timeStr(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func nullStr(s string) string {
	if s == "" {
		return "null"
	}
	return s
}
