package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// Leadership is one coordinator instance's leader-election session
// (ports.Leadership): the advisory lock is taken and held on a dedicated
// connection, opened on first use and reopened after it is lost. It is
// safe for concurrent use.
type Leadership struct {
	s *Store

	mu    sync.Mutex
	conn  *pgx.Conn
	lease *Lease // the held acquisition, or nil

	watch *vacancyWatch // started by the first TryAcquire that finds the lock held
}

var (
	_ ports.Leadership = (*Leadership)(nil)
	_ ports.Lease      = (*Lease)(nil)
)

// Leadership returns a new leader-election session. Give each coordinator
// instance its own.
func (s *Store) Leadership() *Leadership {
	return &Leadership{s: s, watch: newVacancyWatch(s)}
}

// Vacated is signalled when the lock may have become free after a
// TryAcquire found it held (coordinator.LockWatcher): the server grants a
// waiting request the moment the holder's session ends, whether it
// unlocked, crashed or was terminated, so a standby need not poll.
func (l *Leadership) Vacated() <-chan struct{} { return l.watch.vacated }

// TryAcquire takes the coordinator lock for holder without waiting
// (pg_try_advisory_lock on the session) and, on success, increments the
// lock's fencing epoch. ok is false when another session holds the lock.
// On a session that already holds it, it returns the current lease.
func (l *Leadership) TryAcquire(ctx context.Context, holder string) (ports.Lease, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease != nil {
		if err := l.checkLocked(ctx, l.lease); err == nil {
			return l.lease, true, nil
		}
	}
	reused := l.conn != nil && !l.conn.IsClosed()
	lease, ok, err := l.tryLocked(ctx, holder)
	if err != nil && reused && ctx.Err() == nil {
		// The idle session may have been closed by the server
		// (idle_session_timeout, a restart): once more on a fresh one.
		lease, ok, err = l.tryLocked(ctx, holder)
	}
	return lease, ok, err
}

// tryLocked is one attempt of TryAcquire; any failure drops the session.
func (l *Leadership) tryLocked(ctx context.Context, holder string) (ports.Lease, bool, error) {
	conn, err := l.connLocked(ctx)
	if err != nil {
		return nil, false, err
	}
	got, err := l.takeLocked(ctx, conn)
	if err != nil {
		l.closeLocked()
		return nil, false, err
	}
	if !got {
		l.watch.arm()
		return nil, false, nil
	}
	var epoch int64
	err = conn.QueryRow(ctx, `INSERT INTO system_locks (name, epoch, holder, acquired_at)
			VALUES ($1, 1, $2, coalesce($3::timestamptz, now()))
		ON CONFLICT (name) DO UPDATE
			SET epoch = system_locks.epoch + 1, holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at
		RETURNING epoch`, l.s.opts.lockName, holder, l.s.now()).Scan(&epoch)
	if err != nil {
		// Closing the session releases the lock taken above.
		l.closeLocked()
		return nil, false, fmt.Errorf("increment leader epoch: %w", mapErr(err))
	}
	l.lease = &Lease{l: l, holder: holder, epoch: epoch, pid: conn.PgConn().PID(), done: make(chan struct{})}
	l.s.log.Info("leader lock acquired", "holder", holder, "epoch", epoch, "pid", l.lease.pid)
	if d := l.s.opts.idleSessionTimeout; d > 0 {
		go l.heartbeat(l.lease, d/3)
	}
	return l.lease, true, nil
}

// defaultSharedWait bounds how long TryAcquire waits for the lock when
// only shared holders stand in its way (WithSharedWait): vacancy watches
// (vacancy.go) hold it shared for one round trip when they wake, and a
// try in that instant must not lose an election nobody else is running.
const defaultSharedWait = 250 * time.Millisecond

// takeLocked takes the lock on conn without waiting for a leader. A try
// that fails while no session holds the lock exclusively has met vacancy
// watches in the instant they hold it shared; it then waits for them (the
// server grants the exclusive request as they unlock), for at most
// WithSharedWait's bound, inside a transaction that bounds the wait with lock_timeout
// (the lock itself is the session's and outlives the transaction).
func (l *Leadership) takeLocked(ctx context.Context, conn *pgx.Conn) (bool, error) {
	key := uint64(l.s.opts.lockKey)
	var got, exclusive bool
	err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1), EXISTS (
			SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock'
			  AND classid = $2::bigint::oid AND objid = $3::bigint::oid AND objsubid = 1)`,
		l.s.opts.lockKey, int64(key>>32), int64(key&0xffffffff)).Scan(&got, &exclusive)
	if err != nil {
		return false, fmt.Errorf("try leader lock: %w", mapErr(err))
	}
	if got || exclusive {
		return got, nil
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, max(l.s.opts.sharedWait.Milliseconds(), 1))); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_advisory_lock($1)`, l.s.opts.lockKey)
		return err
	})
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &pe) && pe.Code == lockNotAvailable:
		// A leader took it meanwhile, or a shared holder stayed.
		return false, nil
	}
	return false, fmt.Errorf("wait for shared holders of the leader lock: %w", mapErr(err))
}

// lockNotAvailable is the SQLSTATE of a lock wait cut by lock_timeout.
const lockNotAvailable = "55P03"

// Close closes the session (releasing the lock if it is held) and stops
// watching for a vacancy.
func (l *Leadership) Close(ctx context.Context) error {
	l.watch.stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closeLocked()
	return nil
}

// connLocked returns the session, connecting a new one if there is none or
// the last one was lost.
func (l *Leadership) connLocked(ctx context.Context) (*pgx.Conn, error) {
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	l.closeLocked()
	cfg := l.s.dedicated.Copy()
	if d := l.s.opts.idleSessionTimeout; d > 0 {
		cfg.RuntimeParams["idle_session_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect leader session: %w", unavailable(err))
	}
	l.conn = conn
	return conn, nil
}

// heartbeat checks lease every interval while it is held, so that the
// session is never idle for the server's idle_session_timeout while the
// leader lives (however long its passes take), and so that a leader cut
// off from the server learns it within interval + the check timeout: the
// server ends the silent session after idle_session_timeout and a standby
// takes the lock; the leader's failed check has dropped the lease by then
// or soon after.
func (l *Leadership) heartbeat(lease *Lease, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-lease.done:
			return
		case <-t.C:
		}
		if err := lease.Check(context.Background()); err != nil {
			return
		}
	}
}

// closeLocked drops the session; the server releases its lock.
func (l *Leadership) closeLocked() {
	if l.lease != nil {
		close(l.lease.done)
	}
	l.lease = nil
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.checkTimeout)
	defer cancel()
	_ = l.conn.Close(ctx)
	l.conn = nil
}

// checkLocked verifies that lease is the session's current acquisition,
// that the session is alive and still holds the lock, and that the epoch
// has not moved on. Any doubt drops the session and reports
// contracts.ErrNotLeader.
func (l *Leadership) checkLocked(ctx context.Context, lease *Lease) error {
	if l.lease != lease || l.conn == nil || l.conn.IsClosed() {
		return fmt.Errorf("lease of epoch %d: session gone: %w", lease.epoch, contracts.ErrNotLeader)
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.opts.checkTimeout)
	defer cancel()
	key := uint64(l.s.opts.lockKey)
	var (
		held  bool
		epoch *int64
	)
	err := l.conn.QueryRow(ctx, `SELECT EXISTS (
			SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
			  AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1),
		(SELECT epoch FROM system_locks WHERE name = $3)`,
		int64(key>>32), int64(key&0xffffffff), l.s.opts.lockName).Scan(&held, &epoch)
	var why string
	switch {
	case err != nil:
		why = "session lost: " + err.Error()
	case !held:
		why = "lock no longer held"
	case epoch == nil || *epoch != lease.epoch:
		why = "epoch moved on"
	}
	if why == "" {
		return nil
	}
	l.s.log.Warn("leader lock lost", "holder", lease.holder, "epoch", lease.epoch, "why", why)
	l.closeLocked()
	return fmt.Errorf("lease of epoch %d: %s: %w", lease.epoch, why, contracts.ErrNotLeader)
}

// Lease is a held coordinator lock (ports.Lease).
type Lease struct {
	l      *Leadership
	holder string
	epoch  int64
	pid    uint32
	done   chan struct{} // closed when the lease is dropped
}

// Epoch is the fencing epoch of this acquisition.
func (x *Lease) Epoch() int64 { return x.epoch }

// Holder is the holder named at acquisition.
func (x *Lease) Holder() string { return x.holder }

// BackendPID is the server process id of the session holding the lock
// (for drills: pg_terminate_backend it to depose the leader).
func (x *Lease) BackendPID() uint32 { return x.pid }

// Check verifies, within the check timeout, that the session is alive
// and still holds the lock under this epoch; otherwise it drops the
// session and returns contracts.ErrNotLeader.
func (x *Lease) Check(ctx context.Context) error {
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	return x.l.checkLocked(ctx, x)
}

// Release records the release, unlocks and closes the session. Releasing
// a lease no longer held is a no-op.
func (x *Lease) Release(ctx context.Context) error {
	l := x.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease != x || l.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.opts.checkTimeout)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO workspace_audit (at, op, component, instance, epoch, new_values)
		VALUES (coalesce($1::timestamptz, now()), 'release', '', $2, $3, jsonb_build_object('lock', $4::text))`,
		l.s.now(), x.holder, x.epoch, l.s.opts.lockName)
	b.Queue(`SELECT pg_advisory_unlock($1)`, l.s.opts.lockKey)
	err := l.conn.SendBatch(ctx, b).Close()
	// Closing the session releases the lock even if the unlock failed.
	l.closeLocked()
	if err != nil && !errors.Is(err, context.Canceled) {
		l.s.log.Warn("leader lock release", "holder", x.holder, "epoch", x.epoch, "err", err)
	}
	l.s.log.Info("leader lock released", "holder", x.holder, "epoch", x.epoch)
	return nil
}

// BackendPID is the server process id of lease's session, for a lease
// this package issued.
func (s *Store) BackendPID(lease ports.Lease) (uint32, error) {
	x, ok := lease.(*Lease)
	if !ok {
		return 0, fmt.Errorf("lease %T is not a pgstore lease", lease)
	}
	return x.pid, nil
}
