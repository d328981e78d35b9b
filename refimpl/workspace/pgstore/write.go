package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// writerSQL opens every write: it stores the writer in transaction-local
// settings for the audit trigger and fences a coordinator write. It is
// the first statement of the batch, so a fenced batch runs nothing else.
const writerSQL = `SELECT set_config('converge.component', $1, true),
	set_config('converge.instance', $2, true),
	set_config('converge.epoch', $3, true),
	set_config('converge.on_behalf', $4, true),
	set_config('converge.now', $5, true),
	set_config('converge.batch', CASE WHEN $6::boolean THEN txid_current()::text ELSE '' END, true),
	set_config('converge.columns', '', true),
	set_config('converge.cond', '', true),
	converge_fence($7, $8)`

// statementSQL declares the columns and condition of the next UPDATE.
const statementSQL = `SELECT set_config('converge.columns', $1, true), set_config('converge.cond', $2, true)`

// markObservedSQL stamps observed_at on rows and records the end of the
// HealthMonitor's pass with the number of rows stamped.
const markObservedSQL = `WITH stamped AS (
		UPDATE workspaces SET observed_at = $2::timestamptz, updated_at = coalesce($1::timestamptz, now())
		WHERE id = ANY ($3::uuid[])
		RETURNING 1)
	INSERT INTO workspace_audit (at, op, component, instance, epoch, on_behalf, new_values)
	SELECT coalesce($1::timestamptz, now()), 'pass',
		coalesce(converge_setting('converge.component'), 'unknown'),
		coalesce(converge_setting('converge.instance'), ''),
		coalesce(converge_setting('converge.epoch')::bigint, 0),
		coalesce(converge_setting('converge.on_behalf'), ''),
		jsonb_build_object('rows', (SELECT count(*) FROM stamped))`

func (s *Store) queueWriter(b *pgx.Batch, w contracts.Writer, now pgtype.Timestamptz, batch bool) {
	b.Queue(writerSQL, string(w.Component), w.Instance, strconv.FormatInt(w.Epoch, 10), string(w.OnBehalf),
		nowText(now), batch, s.opts.lockName, w.Epoch)
}

// send runs b (one round trip, one implicit transaction) and hands its
// results to read; errors are mapped to the ports' errors.
func (s *Store) send(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := s.pool.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return mapErr(err)
}

// Insert adds a new row, attributed to w. A zero created_at or updated_at
// is the store's now; an empty home_store_key is ws-{id}-home. A writer
// with a non-zero epoch is fenced as in Update. A value the table cannot
// hold is contracts.ErrInvalidInput, found before anything is sent.
func (s *Store) Insert(ctx context.Context, w contracts.Writer, ws contracts.Workspace) error {
	if err := checkInsert(&ws); err != nil {
		return err
	}
	now := s.now()
	b := &pgx.Batch{}
	s.queueWriter(b, w, now, false)
	if err := queueInsert(b, &ws, now); err != nil {
		return err
	}
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		_, err := br.Exec()
		return err
	})
	if err != nil {
		return fmt.Errorf("insert workspace %s: %w", ws.ID, err)
	}
	return nil
}

// checkInsert rejects, as contracts.ErrInvalidInput, a row the table
// cannot hold.
func checkInsert(ws *contracts.Workspace) error {
	if !validUUID(ws.ID) {
		return fmt.Errorf("insert workspace %q: %w: id is not a UUID", ws.ID, contracts.ErrInvalidInput)
	}
	if err := contracts.CheckRow(ws); err != nil {
		return fmt.Errorf("insert workspace %s: %w", ws.ID, err)
	}
	return nil
}

// queueInsert adds the INSERT of ws to b.
func queueInsert(b *pgx.Batch, ws *contracts.Workspace, now pgtype.Timestamptz) error {
	homeCtx, err := jsonText(ws.HomeCtx)
	if err != nil {
		return fmt.Errorf("insert workspace %s: home_ctx: %w", ws.ID, err)
	}
	errorInfo, err := jsonText(ws.ErrorInfo)
	if err != nil {
		return fmt.Errorf("insert workspace %s: error_info: %w", ws.ID, err)
	}
	b.Queue(`INSERT INTO workspaces (id, owner_user_id, name, description, memo, image_ref,
			instance_backend, storage_backend, home_store_key, home_ctx,
			observed_status, health_status, observed_at,
			operation, op_started_at, op_id, archive_key, error_count, error_info, error_message,
			previous_status, desired_state, deleted_at, standby_ttl_seconds, archive_ttl_seconds,
			last_access_at, created_at, updated_at)
		VALUES ($1::uuid, $2, $3, $4, $5, $6,
			$7::workspace_instance_backend, $8::workspace_storage_backend, $9, $10::jsonb,
			$11::workspace_observed_status, $12::workspace_health_status, $13::timestamptz,
			$14::workspace_operation, $15::timestamptz, $16::uuid, $17, $18::integer, $19::jsonb, $20,
			$21::workspace_observed_status, $22::workspace_desired_state, $23::timestamptz, $24::integer, $25::integer,
			$26::timestamptz, coalesce($27::timestamptz, $29::timestamptz, now()), coalesce($28::timestamptz, $29::timestamptz, now()))`,
		ws.ID, ws.OwnerUserID, ws.Name, nullString(ws.Description), nullString(ws.Memo), ws.ImageRef,
		string(ws.InstanceBackend), string(ws.StorageBackend), nullString(ws.HomeStoreKey), homeCtx,
		string(ws.ObservedStatus), string(ws.HealthStatus), nullTime(ws.ObservedAt),
		string(ws.Operation), nullTime(ws.OpStartedAt), nullString(ws.OpID), nullString(ws.ArchiveKey), int32(ws.ErrorCount), errorInfo, nullString(ws.ErrorMessage),
		nullString(string(ws.PreviousStatus)), string(ws.DesiredState), nullTime(ws.DeletedAt), int32(ws.StandbyTTLSeconds), int32(ws.ArchiveTTLSeconds),
		nullTime(ws.LastAccessAt), nullTime(ws.CreatedAt), nullTime(ws.UpdatedAt), now)
	return nil
}

// Update applies p to row id if cond holds, attributed to w, in one round
// trip. A missing row is contracts.ErrNotFound; a writer with a stale
// epoch gets contracts.ErrFenced and writes nothing.
func (s *Store) Update(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch) (bool, error) {
	if !validUUID(id) {
		return false, fmt.Errorf("update workspace %s: %w", id, contracts.ErrNotFound)
	}
	if err := contracts.CheckPatch(&p); err != nil {
		return false, fmt.Errorf("update workspace %s: %w", id, err)
	}
	now := s.now()
	g := newGroup(p.Columns(), cond)
	if err := g.add(id, &p); err != nil {
		return false, fmt.Errorf("update workspace %s: %w", id, err)
	}
	b := &pgx.Batch{}
	s.queueWriter(b, w, now, false)
	if err := g.queue(b, now); err != nil {
		return false, fmt.Errorf("update workspace %s: %w", id, err)
	}
	b.Queue(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1::uuid)`, id)
	var applied, exists bool
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		for range 2 { // writer, statement settings
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		applied = tag.RowsAffected() > 0
		return br.QueryRow().Scan(&exists)
	})
	if err != nil {
		return false, fmt.Errorf("update workspace %s: %w", id, err)
	}
	if !exists {
		return false, fmt.Errorf("update workspace %s: %w", id, contracts.ErrNotFound)
	}
	return applied, nil
}

// UpdateMany applies one patch per row, each under its own condition, in
// one round trip and one transaction: the rows are grouped by the columns
// they assign and their condition, one UPDATE … FROM unnest(…) per group.
// Rows whose condition fails, and missing rows, are skipped. A writer with
// a stale epoch gets contracts.ErrFenced and writes nothing.
func (s *Store) UpdateMany(ctx context.Context, w contracts.Writer, updates []ports.RowUpdate) error {
	for i := range updates {
		if err := contracts.CheckPatch(&updates[i].Patch); err != nil {
			return fmt.Errorf("update many (%d rows): workspace %s: %w", len(updates), updates[i].ID, err)
		}
	}
	groups, err := groupUpdates(updates)
	if err != nil {
		return fmt.Errorf("update many (%d rows): %w", len(updates), err)
	}
	now := s.now()
	b := &pgx.Batch{}
	s.queueWriter(b, w, now, true)
	for _, g := range groups {
		if err := g.queue(b, now); err != nil {
			return fmt.Errorf("update many (%d rows): %w", len(updates), err)
		}
	}
	err = s.send(ctx, b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update many (%d rows): %w", len(updates), err)
	}
	return nil
}

// MarkObserved sets observed_at = at on every row in ids in one round
// trip: the HealthMonitor's write for the rows whose observation changed
// nothing else. It ends an observation pass: the audit trail gets a 'pass'
// row (History's health.pass note). Missing rows are skipped; a writer
// with a stale epoch gets contracts.ErrFenced and writes nothing.
func (s *Store) MarkObserved(ctx context.Context, w contracts.Writer, ids []string, at time.Time) error {
	// The ids go as a binary uuid[]: PostgreSQL then parses no text, and a
	// pass over 100,000 rows sends 1.6 MB instead of 3.7.
	valid := make([][16]byte, 0, len(ids))
	for _, id := range ids {
		if !validUUID(id) {
			continue
		}
		u, err := uuid.Parse(id)
		if err != nil {
			continue
		}
		valid = append(valid, u)
	}
	now := s.now()
	b := &pgx.Batch{}
	s.queueWriter(b, w, now, false)
	b.Queue(markObservedSQL, now, pgtype.Timestamptz{Time: at, Valid: !at.IsZero()}, valid)
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark %d rows observed: %w", len(ids), err)
	}
	return nil
}

// groupUpdates groups updates by assigned columns and condition. A row
// that appears more than once goes into a later group each time, and
// groups run in that order, so repeated rows are updated in call order.
// Rows whose id is not a UUID cannot exist and are skipped.
func groupUpdates(updates []ports.RowUpdate) ([]*group, error) {
	type key struct {
		cols string
		cond contracts.Cond
		gen  int
	}
	seen := make(map[string]int, len(updates))
	index := map[key]*group{}
	var groups []*group
	for i := range updates {
		u := &updates[i]
		if !validUUID(u.ID) {
			continue
		}
		id := strings.ToLower(u.ID)
		gen := seen[id]
		seen[id] = gen + 1
		cols := u.Patch.Columns()
		k := key{cols: joinColumns(cols), cond: u.Cond, gen: gen}
		g := index[k]
		if g == nil {
			g = newGroup(cols, u.Cond)
			g.gen = gen
			index[k] = g
			groups = append(groups, g)
		}
		if err := g.add(u.ID, &u.Patch); err != nil {
			return nil, fmt.Errorf("workspace %s: %w", u.ID, err)
		}
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return a.gen - b.gen })
	return groups, nil
}

func joinColumns(cols []contracts.Column) string {
	var sb strings.Builder
	for i, c := range cols {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(string(c))
	}
	return sb.String()
}

// colKind is how a patch column travels: the array type of its parameter
// and how an empty value is written.
type colKind int

const (
	kindText     colKind = iota // text, written as is
	kindNullText                // text, "" is NULL
	kindJSON                    // jsonb sent as text, nil is NULL
	kindInt                     // integer
	kindTime                    // timestamptz, zero is NULL
)

// colSpec describes one updatable column.
type colSpec struct {
	kind colKind
	cast string // applied to the unnested element
}

var patchColumns = map[contracts.Column]colSpec{
	contracts.ColName:              {kindText, ""},
	contracts.ColDescription:       {kindNullText, ""},
	contracts.ColMemo:              {kindNullText, ""},
	contracts.ColHomeCtx:           {kindJSON, "::jsonb"},
	contracts.ColObservedStatus:    {kindText, "::workspace_observed_status"},
	contracts.ColHealthStatus:      {kindText, "::workspace_health_status"},
	contracts.ColObservedAt:        {kindTime, ""},
	contracts.ColOperation:         {kindText, "::workspace_operation"},
	contracts.ColOpStartedAt:       {kindTime, ""},
	contracts.ColOpID:              {kindNullText, "::uuid"},
	contracts.ColArchiveKey:        {kindNullText, ""},
	contracts.ColErrorCount:        {kindInt, ""},
	contracts.ColErrorInfo:         {kindJSON, "::jsonb"},
	contracts.ColErrorMessage:      {kindNullText, ""},
	contracts.ColPreviousStatus:    {kindNullText, "::workspace_observed_status"},
	contracts.ColDesiredState:      {kindText, "::workspace_desired_state"},
	contracts.ColDeletedAt:         {kindTime, ""},
	contracts.ColStandbyTTLSeconds: {kindInt, ""},
	contracts.ColArchiveTTLSeconds: {kindInt, ""},
	contracts.ColLastAccessAt:      {kindTime, ""},
}

func (k colKind) arrayType() string {
	switch k {
	case kindInt:
		return "integer[]"
	case kindTime:
		return "timestamptz[]"
	}
	return "text[]"
}

// group is one UPDATE … FROM unnest(…): rows assigning the same columns
// under the same condition, one array per column.
type group struct {
	cols  []contracts.Column
	cond  contracts.Cond
	gen   int
	ids   []string
	texts map[contracts.Column][]pgtype.Text
	ints  map[contracts.Column][]int32
	times map[contracts.Column][]pgtype.Timestamptz
}

func newGroup(cols []contracts.Column, cond contracts.Cond) *group {
	return &group{
		cols: cols, cond: cond,
		texts: map[contracts.Column][]pgtype.Text{},
		ints:  map[contracts.Column][]int32{},
		times: map[contracts.Column][]pgtype.Timestamptz{},
	}
}

// add appends row id's values of p (which assigns exactly g.cols).
func (g *group) add(id string, p *contracts.Patch) error {
	g.ids = append(g.ids, id)
	for _, c := range g.cols {
		spec := patchColumns[c]
		switch spec.kind {
		case kindInt:
			g.ints[c] = append(g.ints[c], int32(patchInt(p, c)))
		case kindTime:
			t := patchTime(p, c)
			g.times[c] = append(g.times[c], pgtype.Timestamptz{Time: t, Valid: !t.IsZero()})
		case kindJSON:
			v, err := patchJSON(p, c)
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			g.texts[c] = append(g.texts[c], v)
		default:
			v := patchString(p, c)
			g.texts[c] = append(g.texts[c], pgtype.Text{String: v, Valid: v != "" || spec.kind == kindText})
		}
	}
	return nil
}

// queue adds the group's settings statement and its UPDATE to b.
func (g *group) queue(b *pgx.Batch, now pgtype.Timestamptz) error {
	condJSON, err := json.Marshal(condToJSON(g.cond))
	if err != nil {
		return fmt.Errorf("encode condition: %w", err)
	}
	b.Queue(statementSQL, joinColumns(g.cols), string(condJSON))

	var set, arrays, names strings.Builder
	args := []any{now, g.ids}
	arrays.WriteString("$2::text[]")
	names.WriteString("id")
	for _, c := range g.cols {
		spec := patchColumns[c]
		args = append(args, g.arg(c, spec.kind))
		fmt.Fprintf(&set, "%s = v.%s%s, ", c, c, spec.cast)
		fmt.Fprintf(&arrays, ", $%d::%s", len(args), spec.kind.arrayType())
		fmt.Fprintf(&names, ", %s", c)
	}
	where := "w.id = v.id::uuid"
	if g.cond.Operation.Set {
		args = append(args, string(g.cond.Operation.V))
		where += fmt.Sprintf(" AND w.operation = $%d::workspace_operation", len(args))
	}
	if g.cond.DesiredState.Set {
		args = append(args, string(g.cond.DesiredState.V))
		where += fmt.Sprintf(" AND w.desired_state = $%d::workspace_desired_state", len(args))
	}
	if g.cond.NotTerminal {
		where += " AND (w.error_info -> 'is_terminal') IS DISTINCT FROM 'true'::jsonb"
	}
	if g.cond.NotDeleted {
		where += " AND w.deleted_at IS NULL"
	}
	if g.cond.ErrorInfoNull {
		where += " AND w.error_info IS NULL"
	}
	if g.cond.Terminal {
		where += " AND (w.error_info -> 'is_terminal') = 'true'::jsonb"
	}
	b.Queue(fmt.Sprintf(`UPDATE workspaces AS w SET %supdated_at = coalesce($1::timestamptz, now())
		FROM unnest(%s) AS v(%s) WHERE %s`, set.String(), arrays.String(), names.String(), where), args...)
	return nil
}

func (g *group) arg(c contracts.Column, k colKind) any {
	switch k {
	case kindInt:
		return g.ints[c]
	case kindTime:
		return g.times[c]
	}
	return g.texts[c]
}

// condJSON is the audit trail's form of a contracts.Cond.
type condJSON struct {
	Operation     *contracts.Operation    `json:"operation,omitempty"`
	DesiredState  *contracts.DesiredState `json:"desired_state,omitempty"`
	NotTerminal   bool                    `json:"not_terminal,omitempty"`
	NotDeleted    bool                    `json:"not_deleted,omitempty"`
	ErrorInfoNull bool                    `json:"error_info_null,omitempty"`
	Terminal      bool                    `json:"terminal,omitempty"`
}

func condToJSON(c contracts.Cond) condJSON {
	j := condJSON{NotTerminal: c.NotTerminal, NotDeleted: c.NotDeleted, ErrorInfoNull: c.ErrorInfoNull, Terminal: c.Terminal}
	if c.Operation.Set {
		j.Operation = &c.Operation.V
	}
	if c.DesiredState.Set {
		j.DesiredState = &c.DesiredState.V
	}
	return j
}

func (j condJSON) cond() contracts.Cond {
	c := contracts.Cond{NotTerminal: j.NotTerminal, NotDeleted: j.NotDeleted, ErrorInfoNull: j.ErrorInfoNull, Terminal: j.Terminal}
	if j.Operation != nil {
		c.Operation = contracts.Some(*j.Operation)
	}
	if j.DesiredState != nil {
		c.DesiredState = contracts.Some(*j.DesiredState)
	}
	return c
}
