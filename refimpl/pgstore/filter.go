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

// List returns the rows selected by f, ordered by id.
func (s *Store) List(ctx context.Context, f contracts.Filter) ([]contracts.Workspace, error) {
	where, ok := filterWhere[f]
	if !ok {
		return nil, fmt.Errorf("list workspaces: unknown filter %d", f)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM workspaces WHERE `+where+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", mapErr(err))
	}
	defer rows.Close()
	var out []contracts.Workspace
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, fmt.Errorf("list workspaces: %w", mapErr(err))
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", mapErr(err))
	}
	return out, nil
}

// Scan passes the rows selected by f to fn as the query's cursor returns
// them, ordered by id, without holding the selection in memory.
func (s *Store) Scan(ctx context.Context, f contracts.Filter, fn func(*contracts.Workspace)) error {
	where, ok := filterWhere[f]
	if !ok {
		return fmt.Errorf("scan workspaces: unknown filter %d", f)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM workspaces WHERE `+where+` ORDER BY id`)
	if err != nil {
		return fmt.Errorf("scan workspaces: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return fmt.Errorf("scan workspaces: %w", mapErr(err))
		}
		fn(&w)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("scan workspaces: %w", mapErr(err))
	}
	return nil
}
