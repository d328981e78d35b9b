package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wsconverge/converge/contracts"
)

// filterWhere is the WHERE clause of each filter, with exactly the meaning
// of contracts.Filter.Match (the tests check it on generated rows). The
// live-row filters match the partial indexes of the schema.
var filterWhere = map[contracts.Filter]string{
	contracts.FilterAll:    `TRUE`,
	contracts.FilterActive: `observed_status <> 'DELETED'`,
	contracts.FilterReconcile: `operation <> 'NONE' OR (observed_status <> 'DELETED' AND (
		observed_status::text <> desired_state::text OR health_status = 'ERROR'
		OR error_info IS NOT NULL OR deleted_at IS NOT NULL))`,
	contracts.FilterTTL: `deleted_at IS NULL AND observed_status IN ('RUNNING', 'STANDBY')
		AND health_status = 'OK' AND operation = 'NONE'`,
	contracts.FilterRunning: countsRunningSQL,
}

// Get returns one row, or contracts.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (contracts.Workspace, error) {
	if !validUUID(id) {
		return contracts.Workspace{}, fmt.Errorf("get workspace %s: %w", id, contracts.ErrNotFound)
	}
	w, err := scanWorkspace(s.pool.QueryRow(ctx, `SELECT `+selectColumns+` FROM workspaces WHERE id = $1::uuid`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return contracts.Workspace{}, fmt.Errorf("get workspace %s: %w", id, contracts.ErrNotFound)
	}
	if err != nil {
		return contracts.Workspace{}, fmt.Errorf("get workspace %s: %w", id, mapErr(err))
	}
	return w, nil
}

// List returns the rows selected by f, ordered by id. It reads in pages
// of listPage rows by keyset (id > the last id seen), so a fleet of any
// size is never one long-running statement or one huge result in flight;
// a row inserted behind the cursor meanwhile shows up in the next List, as
// it would had it been inserted just after a single statement's snapshot.
func (s *Store) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	where, ok := filterWhere[f]
	if !ok {
		return nil, fmt.Errorf("list workspaces: unknown filter %d", f)
	}
	q := `SELECT ` + selectColumns + ` FROM workspaces WHERE (` + where + `) AND id > $1::uuid ORDER BY id LIMIT $2`
	var out []contracts.Workspace
	after := "00000000-0000-0000-0000-000000000000"
	for {
		n, err := s.listPage(ctx, q, after, &out)
		if err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		if n < s.opts.listPage {
			return out, nil
		}
		after = out[len(out)-1].ID
	}
}

// listPage appends one page to out and returns its length.
func (s *Store) listPage(ctx context.Context, q, after string, out *[]contracts.Workspace) (int, error) {
	rows, err := s.pool.Query(ctx, q, after, s.opts.listPage)
	if err != nil {
		return 0, mapErr(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return 0, mapErr(err)
		}
		*out = append(*out, w)
		n++
	}
	return n, mapErr(rows.Err())
}
