package driver

import (
	"bytes"
	"reflect"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

// rowCache keeps, for one child, the last encoding of each row it was
// sent: a coordinator lists the fleet at every pass, and most rows have
// not changed since the last one, so their bytes are copied, not written
// again.
type rowCache map[string]*cachedRow

type cachedRow struct {
	w   contracts.Workspace
	enc []byte
}

// appendRows appends rows as wire.AppendWorkspaces does.
func (c rowCache) appendRows(b []byte, rows []contracts.Workspace) []byte {
	b = append(b, '[')
	for i := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendRow(b, &rows[i])
	}
	return append(b, ']')
}

// appendRow appends w as wire.AppendWorkspace does.
func (c rowCache) appendRow(b []byte, w *contracts.Workspace) []byte {
	if e := c[w.ID]; e != nil && sameRow(&e.w, w) {
		return append(b, e.enc...)
	}
	start := len(b)
	b = wire.AppendWorkspace(b, w)
	c[w.ID] = &cachedRow{w: w.Clone(), enc: bytes.Clone(b[start:])}
	return b
}

// sameRow reports whether a and b hold the same values, to the bit (two
// equal times in other locations are different: a miss only costs an
// encoding).
func sameRow(a, b *contracts.Workspace) bool {
	x, y := *a, *b
	hx, hy, ex, ey := x.HomeCtx, y.HomeCtx, x.ErrorInfo, y.ErrorInfo
	x.HomeCtx, y.HomeCtx, x.ErrorInfo, y.ErrorInfo = nil, nil, nil, nil
	if x != y || (hx == nil) != (hy == nil) || (hx != nil && *hx != *hy) || (ex == nil) != (ey == nil) {
		return false
	}
	if ex == nil {
		return true
	}
	return ex.Reason == ey.Reason && ex.Message == ey.Message && ex.IsTerminal == ey.IsTerminal &&
		ex.Operation == ey.Operation && ex.ErrorCount == ey.ErrorCount && ex.OccurredAt == ey.OccurredAt &&
		reflect.DeepEqual(ex.Context, ey.Context)
}
