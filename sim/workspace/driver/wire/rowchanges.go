package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// rowColumns are the names of a row's columns, in order.
var rowColumns = func() []string {
	names := make([]string, len(rowFields))
	for i, f := range rowFields {
		names[i] = strings.Trim(f.key, `{,":`)
	}
	return names
}()

// TakeChanges makes a remembering RowReader (NewRowReader) read a row it
// holds as its changes (protocol version 3): its id and the fields whose
// value is not the last version's, in the order of a whole row, the
// others being the last version's. A whole row is such changes too, with
// every field.
func (r *RowReader) TakeChanges() { r.changes = r.keep }

// changesOf reads into w the changes of the row prev is the last version
// of, and makes the result the last version. The objects w takes from
// prev become the caller's: hold gives the reader copies.
func (r *RowReader) changesOf(p *parser, w *Workspace, prev *readRow) bool {
	*w = prev.w
	p.field(rowFields[0].key)
	_ = p.str() // the id, known
	for i := 1; i < len(rowFields) && !p.bad; i++ {
		if f := &rowFields[i]; p.lit(f.key) {
			f.read(p, w)
		}
	}
	p.field("}")
	if p.bad {
		return false
	}
	r.hold(prev, w)
	return true
}

// hold makes w the last version of its row (prev, when r had one),
// with objects of its own; the text of the whole-row path is dropped.
func (r *RowReader) hold(prev *readRow, w *Workspace) {
	if prev == nil {
		prev = &readRow{}
		r.last[w.ID] = prev
	}
	prev.raw, prev.span = prev.raw[:0], [len(rowFields)][2]int32{}
	prev.w = *w
	prev.w.HomeCtx, prev.w.ErrorInfo = copyHomeCtx(w.HomeCtx), copyErrorInfo(w.ErrorInfo)
}

// ReadJSON reads, with encoding/json, rows (out a *[]Workspace) or a row
// (a *Workspace) in any layout, each whole or, for a row r holds, as its
// changes (TakeChanges); the rows become the last versions. It is the
// way in for what a RowReader's own parser does not read: merging a row's
// changes again is harmless, so a listing the parser gave up on half way
// is read again whole.
func (r *RowReader) ReadJSON(raw []byte, out any) error {
	switch o := out.(type) {
	case *[]Workspace:
		var objs []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &objs); err != nil {
			return err
		}
		if objs == nil {
			return errors.New("rows: null")
		}
		rows := (*o)[:0]
		for i, obj := range objs {
			w, err := r.merge(obj)
			if err != nil {
				return fmt.Errorf("row %d: %w", i, err)
			}
			rows = append(rows, w)
		}
		*o = rows
		return nil
	case *Workspace:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		w, err := r.merge(obj)
		if err != nil {
			return err
		}
		*o = w
		return nil
	}
	return fmt.Errorf("rows into a %T", out)
}

// merge reads one row's object, laid over the last version of the row
// when r holds it.
func (r *RowReader) merge(obj map[string]json.RawMessage) (Workspace, error) {
	var id string
	if err := json.Unmarshal(obj["id"], &id); err != nil || id == "" {
		return Workspace{}, errors.New("a row without an id")
	}
	prev := r.last[id]
	if prev == nil && r.changes {
		for _, c := range rowColumns {
			if _, ok := obj[c]; !ok {
				return Workspace{}, fmt.Errorf("row %s: no %s, and no last version to take it from", id, c)
			}
		}
	}
	if prev != nil && r.changes {
		base, err := json.Marshal(prev.w)
		if err != nil {
			return Workspace{}, err
		}
		var whole map[string]json.RawMessage
		if err := json.Unmarshal(base, &whole); err != nil {
			return Workspace{}, err
		}
		for k, v := range obj {
			whole[k] = v
		}
		obj = whole
	}
	text, err := json.Marshal(obj)
	if err != nil {
		return Workspace{}, err
	}
	var w Workspace
	if err := json.Unmarshal(text, &w); err != nil {
		return Workspace{}, err
	}
	if r.keep {
		r.hold(prev, &w)
	}
	return w, nil
}
