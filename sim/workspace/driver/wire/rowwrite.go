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
type RowWriter struct {
	last map[string]*writtenRow
	// hint is the length of the last list written: the next is sized
	// like it, not grown by doubling.
	hint int
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

// AppendWorkspace appends w as AppendWorkspace does.
func (r *RowWriter) AppendWorkspace(b []byte, w *contracts.Workspace) []byte {
	prev := r.last[w.ID]
	if prev != nil && SameRow(&prev.w, w) {
		return append(b, prev.enc...)
	}
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
