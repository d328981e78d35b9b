package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
)

// Recorded method names of the store's events (as the fakes name them).
const (
	MethodInsert     = "store.Insert"
	MethodUpdate     = "store.Update"
	MethodUpdateMany = "store.UpdateMany"
)

// ComponentUnknown attributes a write made without a writer (a third
// party writing the table directly); the ownership checker flags it.
const ComponentUnknown contracts.Component = "unknown"

// History returns the audit trail after sequence number afterSeq as
// history events, in sequence order, each with Seq set to its audit
// sequence number (pass the last one back to continue):
//
//   - an insert is a history.KindInsert with the inserted Row;
//   - an update is a history.KindWrite with the writer (Component,
//     Instance, Epoch; OnBehalf in Args as history.OnBehalfArgs writes it), the Patch
//     rebuilt from the recorded columns and values, the Cond, Applied=true
//     (failed conditional updates write nothing and are not recorded);
//     columns a Patch cannot assign are named in Args ("other=…");
//   - the end of an observation pass (MarkObserved) is a
//     history.KindNote "health.pass" with Result "N rows observed";
//   - acquisitions and releases of the coordinator lock are
//     history.KindLeader "acquire" and "release" with the holder as
//     Instance; an acquisition by another instance while the trail still
//     shows a holder is preceded by a "lost" of that holder (its session
//     ended without a word: PostgreSQL grants the lock only after that).
//
// Sequence numbers are taken when a row is written, not when it commits:
// read the trail of a finished run, or allow for a concurrent writer's
// rows appearing below the last sequence number seen.
func (s *Store) History(ctx context.Context, afterSeq int64) ([]history.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, at, coalesce(workspace_id::text, ''), op, component, instance,
			epoch, on_behalf, columns, new_values, cond, coalesce(batch, '')
		FROM workspace_audit WHERE seq > $1 ORDER BY seq`, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("read audit trail: %w", mapErr(err))
	}
	defer rows.Close()
	var out []history.Event
	holder := "" // the lock's holder as the trail tells it
	for rows.Next() {
		var (
			a       auditRow
			newVals []byte
			cond    []byte
		)
		if err := rows.Scan(&a.seq, &a.at, &a.workspace, &a.op, &a.component, &a.instance,
			&a.epoch, &a.onBehalf, &a.columns, &newVals, &cond, &a.batch); err != nil {
			return nil, fmt.Errorf("read audit trail: %w", mapErr(err))
		}
		a.newValues, a.cond = newVals, cond
		e, keep, err := s.event(&a)
		if err != nil {
			return nil, fmt.Errorf("audit row %d: %w", a.seq, err)
		}
		if !keep {
			continue
		}
		if e.Kind == history.KindLeader {
			switch e.Method {
			case "acquire":
				// PostgreSQL grants the lock only once the previous
				// holder's session released it: a dead session records
				// nothing, so its loss is stated here, no later than the
				// new acquisition.
				if holder != "" && holder != e.Instance {
					out = append(out, history.Event{At: e.At, Kind: history.KindLeader, Instance: holder, Method: "lost",
						Args: "inferred: the lock was granted to " + e.Instance})
				}
				holder = e.Instance
			case "release":
				if holder == e.Instance {
					holder = ""
				}
			}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read audit trail: %w", mapErr(err))
	}
	return out, nil
}

type auditRow struct {
	seq       int64
	at        time.Time
	workspace string
	op        string
	component string
	instance  string
	epoch     int64
	onBehalf  string
	columns   []string
	newValues []byte
	cond      []byte
	batch     string
}

// event turns one audit row into a history event; keep is false for the
// rows of another lock.
func (s *Store) event(a *auditRow) (e history.Event, keep bool, err error) {
	e = history.Event{
		Seq: a.seq, At: a.at.UTC(), Instance: a.instance, Component: contracts.Component(a.component),
		Epoch: a.epoch, Workspace: a.workspace,
	}
	if a.onBehalf != "" {
		e.Args = history.OnBehalfPrefix + a.onBehalf
	}
	switch a.op {
	case "insert":
		row, err := rowFromJSON(a.newValues)
		if err != nil {
			return e, false, err
		}
		e.Kind, e.Method, e.Applied, e.Row = history.KindInsert, MethodInsert, true, &row
	case "update":
		p, other, err := patchFromJSON(a.columns, a.newValues)
		if err != nil {
			return e, false, err
		}
		var cj condJSON
		if len(a.cond) > 0 {
			if err := json.Unmarshal(a.cond, &cj); err != nil {
				return e, false, fmt.Errorf("decode cond: %w", err)
			}
		}
		cond := cj.cond()
		e.Kind, e.Method, e.Applied, e.Patch, e.Cond = history.KindWrite, MethodUpdate, true, &p, &cond
		if a.batch != "" {
			e.Method = MethodUpdateMany
		}
		if len(other) > 0 {
			e.Args = strings.TrimPrefix(e.Args+" other="+strings.Join(other, ","), " ")
		}
	case "pass":
		var v struct {
			Rows int `json:"rows"`
		}
		if len(a.newValues) > 0 {
			if err := json.Unmarshal(a.newValues, &v); err != nil {
				return e, false, fmt.Errorf("decode pass: %w", err)
			}
		}
		e.Kind, e.Method = history.KindNote, history.NoteHealthPass
		e.Result = strconv.Itoa(v.Rows) + " rows observed"
	case "acquire", "release":
		var v struct {
			Lock string `json:"lock"`
		}
		if len(a.newValues) > 0 {
			if err := json.Unmarshal(a.newValues, &v); err != nil {
				return e, false, fmt.Errorf("decode lock: %w", err)
			}
		}
		if v.Lock != s.opts.lockName {
			return e, false, nil
		}
		e.Kind, e.Method, e.Component = history.KindLeader, a.op, ""
	default:
		return e, false, fmt.Errorf("unknown audit op %q", a.op)
	}
	return e, true, nil
}

// patchFromJSON rebuilds the patch of an update from its recorded columns
// and new values; other lists recorded columns a Patch cannot assign.
func patchFromJSON(columns []string, newValues []byte) (p contracts.Patch, other []string, err error) {
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(newValues, &vals); err != nil {
		return p, nil, fmt.Errorf("decode new values: %w", err)
	}
	for _, c := range columns {
		raw, ok := vals[c]
		if !ok {
			raw = json.RawMessage("null")
		}
		ok, err := setPatchJSON(&p, contracts.Column(c), raw)
		if err != nil {
			return p, nil, err
		}
		if !ok {
			other = append(other, c)
		}
	}
	slices.Sort(other)
	return p, other, nil
}

// rowFromJSON rebuilds a row from its to_jsonb rendering.
func rowFromJSON(b []byte) (contracts.Workspace, error) {
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(b, &vals); err != nil {
		return contracts.Workspace{}, fmt.Errorf("decode row: %w", err)
	}
	str := func(k string) (string, error) {
		var s *string
		if raw, ok := vals[k]; ok {
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", fmt.Errorf("decode %s: %w", k, err)
			}
		}
		if s == nil {
			return "", nil
		}
		return *s, nil
	}
	var w contracts.Workspace
	fields := []struct {
		key string
		dst *string
	}{
		{"id", &w.ID}, {"owner_user_id", &w.OwnerUserID}, {"image_ref", &w.ImageRef},
		{"home_store_key", &w.HomeStoreKey},
	}
	for _, f := range fields {
		v, err := str(f.key)
		if err != nil {
			return w, err
		}
		*f.dst = v
	}
	ib, err := str("instance_backend")
	if err != nil {
		return w, err
	}
	sb, err := str("storage_backend")
	if err != nil {
		return w, err
	}
	w.InstanceBackend, w.StorageBackend = contracts.InstanceBackend(ib), contracts.StorageBackend(sb)
	var p contracts.Patch
	for c := range patchColumns {
		raw, ok := vals[string(c)]
		if !ok {
			continue
		}
		if _, err := setPatchJSON(&p, c, raw); err != nil {
			return w, err
		}
	}
	if w.CreatedAt, err = jsonTime(vals["created_at"]); err != nil {
		return w, fmt.Errorf("created_at: %w", err)
	}
	updated, err := jsonTime(vals["updated_at"])
	if err != nil {
		return w, fmt.Errorf("updated_at: %w", err)
	}
	p.Apply(&w, updated)
	return w, nil
}
