package wire

import (
	"reflect"
	"slices"
	"strconv"

	"github.com/wsconverge/converge/contracts"
)

// RowWriter writes rows as AppendWorkspace does, and keeps the last
// version of each row it wrote, by id, with its text: a coordinator
// lists the fleet at every pass, and from one pass to the next most of a
// row is unchanged (a health pass changes two times). A row unchanged is
// copied whole; of a row that changed, the text of each field unchanged
// is copied, and only the fields that changed are written. One
// RowWriter serves one reader (a child), which is sent every row it
// writes.
//
// For a reader of protocol version 3 (SendChanges), a row written
// before is written as its changes instead: its id and the fields whose
// value is not the last version's (docs/driver-protocol.md, section 3).
// The last version is then what the reader holds, so rows the reader may
// never get (a listing that fails part way) are written between
// Tentative and Settle.
type RowWriter struct {
	last map[string]*writtenRow
	// hint is the length of the last list written: the next is sized
	// like it, not grown by doubling.
	hint int
	// changes: write rows written before as their changes.
	changes bool
	// tentative: the rows written are not yet known to be sent; undo
	// holds the last versions they replaced, to put back.
	tentative bool
	undo      []replaced
	// changed counts the rows written as their changes (TakeChanged).
	changed int
}

// replaced is a row's last version before a tentative write (nil: none).
type replaced struct {
	id   string
	prev *writtenRow
}

// NewRowWriter returns an empty RowWriter.
func NewRowWriter() *RowWriter { return &RowWriter{last: map[string]*writtenRow{}} }

// writtenRow is the last version of a row written: its value (a copy of
// its own), its text, and where each field's value lies in it.
type writtenRow struct {
	w    contracts.Workspace
	enc  []byte
	span [len(rowOut)][2]int32
}

// AppendWorkspaces appends rows as AppendWorkspaces does.
func (r *RowWriter) AppendWorkspaces(b []byte, rows []contracts.Workspace) []byte {
	start := len(b)
	b = slices.Grow(b, r.hint)
	b = append(b, '[')
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.AppendWorkspace(b, &rows[i])
	}
	b = append(b, ']')
	r.hint = len(b) - start
	return b
}

// SendChanges makes r write a row written before as its changes since
// (the reader speaks protocol version 3).
func (r *RowWriter) SendChanges() { r.changes = true }

// TakeChanged is how many rows r wrote as their changes since the last
// call.
func (r *RowWriter) TakeChanged() int {
	n := r.changed
	r.changed = 0
	return n
}

// Tentative starts rows the reader may not be sent: until Settle, r
// remembers the versions they replace.
func (r *RowWriter) Tentative() {
	r.tentative, r.undo = true, r.undo[:0]
}

// Settle ends Tentative: when sent, the rows written since are the
// reader's; else r forgets them, and holds again the versions they
// replaced (when writing whole rows, it forgets them altogether: they
// were only a memo of text).
func (r *RowWriter) Settle(sent bool) {
	if !sent {
		for i := len(r.undo) - 1; i >= 0; i-- {
			if u := r.undo[i]; u.prev == nil {
				delete(r.last, u.id)
			} else {
				r.last[u.id] = u.prev
			}
		}
	}
	clear(r.undo)
	r.tentative, r.undo = false, r.undo[:0]
}

// AppendWorkspace appends w as AppendWorkspace does, or as its changes
// (SendChanges).
func (r *RowWriter) AppendWorkspace(b []byte, w *contracts.Workspace) []byte {
	prev := r.last[w.ID]
	if r.tentative {
		// A whole row's last version is changed in place: it is
		// forgotten, not put back.
		u := replaced{id: w.ID}
		if r.changes {
			u.prev = prev
		}
		r.undo = append(r.undo, u)
	}
	switch {
	case r.changes && prev != nil:
		return r.appendChanges(b, prev, w)
	case prev != nil && SameRow(&prev.w, w):
		return append(b, prev.enc...)
	}
	return r.appendWhole(b, prev, w)
}

// appendChanges appends w as its id and the fields whose value is not
// prev's, and makes w the last version (anew, so that Settle can put
// prev back).
func (r *RowWriter) appendChanges(b []byte, prev *writtenRow, w *contracts.Workspace) []byte {
	r.changed++
	b = rowOut[0].put(append(b, rowOut[0].key...), w)
	if !SameRow(&prev.w, w) {
		for i := 1; i < len(rowOut); i++ {
			if f := &rowOut[i]; !f.same(&prev.w, w) {
				b = f.put(append(b, f.key...), w)
			}
		}
		r.last[w.ID] = &writtenRow{w: w.Clone()}
	}
	return append(b, '}')
}

// appendWhole appends w whole, copying from prev the text of each field
// whose value has not changed, and makes w the last version.
func (r *RowWriter) appendWhole(b []byte, prev *writtenRow, w *contracts.Workspace) []byte {
	start := len(b)
	var span [len(rowOut)][2]int32
	for i := range rowOut {
		f := &rowOut[i]
		b = append(b, f.key...)
		span[i][0] = int32(len(b) - start)
		if prev != nil && f.same(&prev.w, w) {
			b = append(b, prev.enc[prev.span[i][0]:prev.span[i][1]]...)
		} else {
			b = f.put(b, w)
		}
		span[i][1] = int32(len(b) - start)
	}
	b = append(b, '}')
	if prev == nil {
		prev = &writtenRow{}
		r.last[w.ID] = prev
	}
	prev.w, prev.span = w.Clone(), span
	prev.enc = append(prev.enc[:0], b[start:]...)
	return b
}

// SameRow reports whether a and b hold the same values, to the bit (two
// equal times in other locations are different: a miss only costs an
// encoding).
func SameRow(a, b *contracts.Workspace) bool {
	x, y := *a, *b
	hx, hy, ex, ey := x.HomeCtx, y.HomeCtx, x.ErrorInfo, y.ErrorInfo
	x.HomeCtx, y.HomeCtx, x.ErrorInfo, y.ErrorInfo = nil, nil, nil, nil
	return x == y && sameHomeCtx(hx, hy) && sameErrorInfo(ex, ey)
}

func sameHomeCtx(a, b *contracts.HomeCtx) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameErrorInfo(a, b *contracts.ErrorInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Reason == b.Reason && a.Message == b.Message && a.IsTerminal == b.IsTerminal &&
		a.Operation == b.Operation && a.ErrorCount == b.ErrorCount && a.OccurredAt == b.OccurredAt &&
		reflect.DeepEqual(a.Context, b.Context)
}

// rowOut is how each field of a row is written, in order: its name (with
// the punctuation before it), whether two rows have the same value, and
// its value's writer. The names are rowFields'.
var rowOut = [...]struct {
	key  string
	same func(a, b *contracts.Workspace) bool
	put  func(b []byte, w *contracts.Workspace) []byte
}{
	{rowFields[0].key, func(a, b *contracts.Workspace) bool { return a.ID == b.ID },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, w.ID) }},
	{rowFields[1].key, func(a, b *contracts.Workspace) bool { return a.OwnerUserID == b.OwnerUserID },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, w.OwnerUserID) }},
	{rowFields[2].key, func(a, b *contracts.Workspace) bool { return a.Name == b.Name },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, w.Name) }},
	{rowFields[3].key, func(a, b *contracts.Workspace) bool { return a.Description == b.Description },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, w.Description) }},
	{rowFields[4].key, func(a, b *contracts.Workspace) bool { return a.Memo == b.Memo },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, w.Memo) }},
	{rowFields[5].key, func(a, b *contracts.Workspace) bool { return a.ImageRef == b.ImageRef },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, w.ImageRef) }},
	{rowFields[6].key, func(a, b *contracts.Workspace) bool { return a.InstanceBackend == b.InstanceBackend },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.InstanceBackend)) }},
	{rowFields[7].key, func(a, b *contracts.Workspace) bool { return a.StorageBackend == b.StorageBackend },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.StorageBackend)) }},
	{rowFields[8].key, func(a, b *contracts.Workspace) bool { return a.HomeStoreKey == b.HomeStoreKey },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, w.HomeStoreKey) }},
	{rowFields[9].key, func(a, b *contracts.Workspace) bool { return sameHomeCtx(a.HomeCtx, b.HomeCtx) },
		func(b []byte, w *contracts.Workspace) []byte {
			switch {
			case w.HomeCtx == nil:
				return append(b, null...)
			case w.HomeCtx.RestoreMarker == "":
				return append(b, '{', '}')
			}
			return append(appendStr(append(b, `{"restore_marker":`...), w.HomeCtx.RestoreMarker), '}')
		}},
	{rowFields[10].key, func(a, b *contracts.Workspace) bool { return a.ObservedStatus == b.ObservedStatus },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.ObservedStatus)) }},
	{rowFields[11].key, func(a, b *contracts.Workspace) bool { return a.HealthStatus == b.HealthStatus },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.HealthStatus)) }},
	{rowFields[12].key, func(a, b *contracts.Workspace) bool { return a.ObservedAt == b.ObservedAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.ObservedAt) }},
	{rowFields[13].key, func(a, b *contracts.Workspace) bool { return a.Operation == b.Operation },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.Operation)) }},
	{rowFields[14].key, func(a, b *contracts.Workspace) bool { return a.OpStartedAt == b.OpStartedAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.OpStartedAt) }},
	{rowFields[15].key, func(a, b *contracts.Workspace) bool { return a.OpID == b.OpID },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, w.OpID) }},
	{rowFields[16].key, func(a, b *contracts.Workspace) bool { return a.ArchiveKey == b.ArchiveKey },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, w.ArchiveKey) }},
	{rowFields[17].key, func(a, b *contracts.Workspace) bool { return a.ErrorCount == b.ErrorCount },
		func(b []byte, w *contracts.Workspace) []byte { return strconv.AppendInt(b, int64(w.ErrorCount), 10) }},
	{rowFields[18].key, func(a, b *contracts.Workspace) bool { return sameErrorInfo(a.ErrorInfo, b.ErrorInfo) },
		func(b []byte, w *contracts.Workspace) []byte {
			if w.ErrorInfo == nil {
				return append(b, null...)
			}
			return appendMarshal(b, FromErrorInfo(w.ErrorInfo))
		}},
	{rowFields[19].key, func(a, b *contracts.Workspace) bool { return a.ErrorMessage == b.ErrorMessage },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, w.ErrorMessage) }},
	{rowFields[20].key, func(a, b *contracts.Workspace) bool { return a.PreviousStatus == b.PreviousStatus },
		func(b []byte, w *contracts.Workspace) []byte { return appendNullStr(b, string(w.PreviousStatus)) }},
	{rowFields[21].key, func(a, b *contracts.Workspace) bool { return a.DesiredState == b.DesiredState },
		func(b []byte, w *contracts.Workspace) []byte { return appendStr(b, string(w.DesiredState)) }},
	{rowFields[22].key, func(a, b *contracts.Workspace) bool { return a.DeletedAt == b.DeletedAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.DeletedAt) }},
	{rowFields[23].key, func(a, b *contracts.Workspace) bool { return a.StandbyTTLSeconds == b.StandbyTTLSeconds },
		func(b []byte, w *contracts.Workspace) []byte {
			return strconv.AppendInt(b, int64(w.StandbyTTLSeconds), 10)
		}},
	{rowFields[24].key, func(a, b *contracts.Workspace) bool { return a.ArchiveTTLSeconds == b.ArchiveTTLSeconds },
		func(b []byte, w *contracts.Workspace) []byte {
			return strconv.AppendInt(b, int64(w.ArchiveTTLSeconds), 10)
		}},
	{rowFields[25].key, func(a, b *contracts.Workspace) bool { return a.LastAccessAt == b.LastAccessAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.LastAccessAt) }},
	{rowFields[26].key, func(a, b *contracts.Workspace) bool { return a.CreatedAt == b.CreatedAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.CreatedAt) }},
	{rowFields[27].key, func(a, b *contracts.Workspace) bool { return a.UpdatedAt == b.UpdatedAt },
		func(b []byte, w *contracts.Workspace) []byte { return appendTime(b, w.UpdatedAt) }},
}

// Rows is a list of rows AppendOK writes with a RowWriter.
type Rows struct {
	W    *RowWriter
	Rows []contracts.Workspace
}

// AppendValue appends the rows as r.W.AppendWorkspaces does.
func (r Rows) AppendValue(b []byte) []byte { return r.W.AppendWorkspaces(b, r.Rows) }

// Row is a row AppendOK writes with a RowWriter.
type Row struct {
	W   *RowWriter
	Row *contracts.Workspace
}

// AppendValue appends the row as r.W.AppendWorkspace does.
func (r Row) AppendValue(b []byte) []byte { return r.W.AppendWorkspace(b, r.Row) }
