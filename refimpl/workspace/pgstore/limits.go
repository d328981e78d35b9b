package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wsconverge/converge/contracts"
)

// Advisory-lock keys of the running-limit guard, in the two-int4 key space
// (apart from the coordinator's bigint lock): the global lock is
// (limitLockGlobal, 0), a user's is (limitLockUser, hashtext(owner)). Two
// users whose names hash alike merely share a lock.
const (
	limitLockGlobal int32 = 0x636c696d // "clim"
	limitLockUser   int32 = 0x756c696d // "ulim"
)

// countsRunningSQL is contracts.CountsRunning (and FilterRunning).
const countsRunningSQL = `deleted_at IS NULL AND health_status = 'OK'
	AND (observed_status = 'RUNNING' OR desired_state = 'RUNNING')`

// runningOthersSQL counts the rows that count toward the limits other than
// row $2: the ids of owner $1's, in id order, and the number of all.
const runningOthersSQL = `SELECT coalesce(array_agg(id::text ORDER BY id) FILTER (WHERE owner_user_id = $1), '{}'),
	count(*) FROM workspaces WHERE ` + countsRunningSQL + ` AND id <> $2::uuid`

// InsertWithinLimits is Insert under the running-limit guard (SPEC 4.3):
// in one transaction it takes the guard's advisory locks, global then the
// owner's (pg_advisory_xact_lock, always in that order, so guarded writes
// never deadlock), counts the rows that count, and inserts only when
// contracts.CheckGuard passes; otherwise it writes nothing and returns the
// *contracts.LimitExceeded. The locks go with the transaction.
func (s *Store) InsertWithinLimits(ctx context.Context, w contracts.Writer, ws contracts.Workspace, l contracts.Limits) error {
	if err := checkInsert(&ws); err != nil {
		return err
	}
	now := s.now()
	err := s.guarded(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		s.queueWriter(b, w, now, false)
		b.Queue(`SELECT pg_advisory_xact_lock($1, 0)`, limitLockGlobal)
		b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, limitLockUser, ws.OwnerUserID)
		b.Queue(runningOthersSQL, ws.OwnerUserID, ws.ID)
		var le *contracts.LimitExceeded
		err := sendTx(ctx, tx, b, func(br pgx.BatchResults) error {
			if err := execN(br, 3); err != nil {
				return err
			}
			var err error
			le, err = readGuard(br, l)
			return err
		})
		if err != nil {
			return err
		}
		if le != nil {
			return le
		}
		b = &pgx.Batch{}
		if err := queueInsert(b, &ws, now); err != nil {
			return err
		}
		return sendTx(ctx, tx, b, func(br pgx.BatchResults) error { return execN(br, 1) })
	})
	if err != nil {
		return fmt.Errorf("insert workspace %s: %w", ws.ID, err)
	}
	return nil
}

// UpdateWithinLimits is Update under the running-limit guard: in one
// transaction it takes the guard's locks (global, then the row owner's),
// locks and reads the row, evaluates cond on it (applied false when it
// fails), counts, and updates only when contracts.CheckGuard passes;
// otherwise it writes nothing and returns the *contracts.LimitExceeded.
func (s *Store) UpdateWithinLimits(ctx context.Context, w contracts.Writer, id string, cond contracts.Cond, p contracts.Patch, l contracts.Limits) (bool, error) {
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
	var applied bool
	err := s.guarded(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		s.queueWriter(b, w, now, false)
		b.Queue(`SELECT pg_advisory_xact_lock($1, 0)`, limitLockGlobal)
		b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext(owner_user_id)) FROM workspaces WHERE id = $2::uuid`, limitLockUser, id)
		b.Queue(`SELECT `+selectColumns+` FROM workspaces WHERE id = $1::uuid FOR UPDATE`, id)
		var (
			row   contracts.Workspace
			found bool
		)
		err := sendTx(ctx, tx, b, func(br pgx.BatchResults) error {
			if err := execN(br, 3); err != nil {
				return err
			}
			var err error
			row, err = scanWorkspace(br.QueryRow())
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return nil
			case err != nil:
				return err
			}
			found = true
			return nil
		})
		switch {
		case err != nil:
			return err
		case !found:
			return contracts.ErrNotFound
		case !cond.Holds(&row):
			return nil
		}
		b = &pgx.Batch{}
		b.Queue(runningOthersSQL, row.OwnerUserID, id)
		var le *contracts.LimitExceeded
		if err := sendTx(ctx, tx, b, func(br pgx.BatchResults) error {
			var err error
			le, err = readGuard(br, l)
			return err
		}); err != nil {
			return err
		}
		if le != nil {
			return le
		}
		b = &pgx.Batch{}
		if err := g.queue(b, now); err != nil {
			return err
		}
		return sendTx(ctx, tx, b, func(br pgx.BatchResults) error {
			if err := execN(br, 1); err != nil {
				return err
			}
			tag, err := br.Exec()
			applied = tag.RowsAffected() > 0
			return err
		})
	})
	if err != nil {
		return false, fmt.Errorf("update workspace %s: %w", id, err)
	}
	return applied, nil
}

// guarded runs fn in a transaction and commits it when fn returns nil;
// any error rolls it back (releasing the advisory locks). A
// *contracts.LimitExceeded and contracts.ErrNotFound pass through as they
// are, everything else through mapErr.
func (s *Store) guarded(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return mapErr(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		var le *contracts.LimitExceeded
		if errors.As(err, &le) || errors.Is(err, contracts.ErrNotFound) {
			return err
		}
		return mapErr(err)
	}
	return mapErr(tx.Commit(ctx))
}

// sendTx runs b on tx and hands its results to read.
func sendTx(ctx context.Context, tx pgx.Tx, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := tx.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// execN reads n results whose rows do not matter.
func execN(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// readGuard reads runningOthersSQL's result and evaluates the guard.
func readGuard(br pgx.BatchResults, l contracts.Limits) (*contracts.LimitExceeded, error) {
	var (
		mine []string
		all  int64
	)
	if err := br.QueryRow().Scan(&mine, &all); err != nil {
		return nil, err
	}
	return contracts.CheckLimits(l, mine, int(all)), nil
}
