package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

// ErrDuplicateID: Insert of an id that already exists.
var ErrDuplicateID = errors.New("duplicate workspace id")

// Defaults of the options.
const (
	// DefaultLockName is the system_locks row of the coordinator lock.
	DefaultLockName = "coordinator"
	// DefaultLockKey is the advisory-lock key of the coordinator lock
	// ("converge" in ASCII).
	DefaultLockKey int64 = 0x636f6e7665726765

	defaultCheckTimeout       = 2 * time.Second
	defaultIdleSessionTimeout = time.Minute
	defaultListPage           = 5000
	defaultKeepIdle           = time.Second
	defaultKeepInterval       = time.Second
	defaultKeepCount          = 3
	defaultUserTimeout        = 5 * time.Second
	defaultPingEvery          = 5 * time.Second
)

// Store is the PostgreSQL store: ports.Store and ports.ChangeFeed on a
// connection pool, leader sessions (Leadership) on dedicated connections,
// and the audit trail (History). It is safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	dedicated *pgx.ConnConfig // template of the leader and listener sessions
	clock     ports.Clock
	opts      options
	log       *slog.Logger
	writes    atomic.Int64 // socket writes of the pool's connections
}

var (
	_ ports.Store      = (*Store)(nil)
	_ ports.ChangeFeed = (*Store)(nil)
)

type options struct {
	log                *slog.Logger
	lockName           string
	lockKey            int64
	checkTimeout       time.Duration
	sharedWait         time.Duration
	idleSessionTimeout time.Duration
	keepIdle           time.Duration
	keepInterval       time.Duration
	keepCount          int
	userTimeout        time.Duration
	pingEvery          time.Duration
	maxConns           int32
	listPage           int
}

// Option configures Open.
type Option func(*options)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithLock names the coordinator lock: its system_locks row and its
// advisory-lock key (default DefaultLockName, DefaultLockKey).
func WithLock(name string, key int64) Option {
	return func(o *options) { o.lockName, o.lockKey = name, key }
}

// WithCheckTimeout bounds Lease.Check (default 2 s); a check that does not
// answer in time counts as a lost lock.
func WithCheckTimeout(d time.Duration) Option { return func(o *options) { o.checkTimeout = d } }

// WithSharedWait bounds how long a TryAcquire that finds the lock free of
// leaders but held shared (by a standby's vacancy watch, for the round
// trip in which it wakes) waits for the shared holders to let go before
// it counts the election as lost (default 250 ms; a distant server may
// want more).
func WithSharedWait(d time.Duration) Option { return func(o *options) { o.sharedWait = d } }

// WithIdleSessionTimeout sets the server-side idle_session_timeout of the
// leader sessions (default 1 min; 0 turns it off): a leader that stops
// talking (frozen, partitioned) loses its lock after it. A held lease
// checks itself every third of it, so a live leader is never idle that
// long; a short timeout (the partition drill uses 1.5 s) bounds how long a
// partitioned leader keeps the lock, at the price of a check query that
// often.
func WithIdleSessionTimeout(d time.Duration) Option {
	return func(o *options) { o.idleSessionTimeout = d }
}

// WithKeepalive sets the TCP keepalive (idle, interval, probe count) and
// TCP_USER_TIMEOUT of every connection, client and server side (default
// 1 s, 1 s, 3, 5 s).
func WithKeepalive(idle, interval time.Duration, count int, userTimeout time.Duration) Option {
	return func(o *options) {
		o.keepIdle, o.keepInterval, o.keepCount, o.userTimeout = idle, interval, count, userTimeout
	}
}

// WithListenerPing sets how long a change-feed listener waits for a
// notification before it pings its session (default 5 s).
func WithListenerPing(d time.Duration) Option { return func(o *options) { o.pingEvery = d } }

// WithListPage sets how many rows List reads per page (default 5,000).
func WithListPage(n int) Option { return func(o *options) { o.listPage = max(n, 1) } }

// WithMaxConns sets the pool size (default: pgxpool's).
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// Open connects to the database at dsn. clock stamps updated_at and the
// audit trail (nil: the server's now()). Call Migrate before the first
// use of a fresh database.
func Open(ctx context.Context, dsn string, clock ports.Clock, opts ...Option) (*Store, error) {
	o := options{
		log:                slog.Default(),
		lockName:           DefaultLockName,
		lockKey:            DefaultLockKey,
		checkTimeout:       defaultCheckTimeout,
		sharedWait:         defaultSharedWait,
		idleSessionTimeout: defaultIdleSessionTimeout,
		keepIdle:           defaultKeepIdle,
		keepInterval:       defaultKeepInterval,
		keepCount:          defaultKeepCount,
		userTimeout:        defaultUserTimeout,
		pingEvery:          defaultPingEvery,
		listPage:           defaultListPage,
	}
	for _, f := range opts {
		f(&o)
	}
	s := &Store{clock: clock, opts: o, log: o.log}

	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse dsn: %w", err)
	}
	if o.maxConns > 0 {
		pc.MaxConns = o.maxConns
	}
	pc.ConnConfig.DialFunc = o.dialFunc(&s.writes)
	s.dedicated = pc.ConnConfig.Copy()
	s.dedicated.DialFunc = o.dialFunc(nil)
	for k, v := range o.sessionParams() {
		s.dedicated.RuntimeParams[k] = v
	}
	if s.dedicated.ConnectTimeout == 0 {
		s.dedicated.ConnectTimeout = 5 * time.Second
	}

	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping: %w", unavailable(err))
	}
	s.pool = pool
	return s, nil
}

// sessionParams are the server-side settings of the dedicated sessions:
// the server notices a dead client as fast as the client notices a dead
// server.
func (o options) sessionParams() map[string]string {
	return map[string]string{
		"tcp_keepalives_idle":              strconv.Itoa(max(1, int(o.keepIdle/time.Second))),
		"tcp_keepalives_interval":          strconv.Itoa(max(1, int(o.keepInterval/time.Second))),
		"tcp_keepalives_count":             strconv.Itoa(o.keepCount),
		"tcp_user_timeout":                 strconv.FormatInt(o.userTimeout.Milliseconds(), 10),
		"client_connection_check_interval": "1000",
	}
}

// Close closes the pool. Leader sessions and listeners are closed by their
// own Release/Close.
func (s *Store) Close() { s.pool.Close() }

// Pool is the connection pool, for tests and drills.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// RoundTrips counts the requests the pool's connections have sent (socket
// writes; a pipelined batch is one).
func (s *Store) RoundTrips() int64 { return s.writes.Load() }

// LockName is the system_locks row of the coordinator lock.
func (s *Store) LockName() string { return s.opts.lockName }

// Epoch is the current epoch of the coordinator lock (0 before the first
// acquisition).
func (s *Store) Epoch(ctx context.Context) (int64, error) {
	var e int64
	err := s.pool.QueryRow(ctx, `SELECT epoch FROM system_locks WHERE name = $1`, s.opts.lockName).Scan(&e)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read epoch: %w", mapErr(err))
	}
	return e, nil
}

// TerminateBackend ends the server session pid (pg_terminate_backend), as
// an administrator or a drill would; ok is false when there was none.
func (s *Store) TerminateBackend(ctx context.Context, pid uint32) (ok bool, err error) {
	if err := s.pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)).Scan(&ok); err != nil {
		return false, fmt.Errorf("terminate backend %d: %w", pid, mapErr(err))
	}
	return ok, nil
}

// now is the store clock's time in microseconds (PostgreSQL's precision),
// or invalid (NULL: the server's now()) without a clock.
func (s *Store) now() pgtype.Timestamptz {
	if s.clock == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: s.clock.Now().Truncate(time.Microsecond), Valid: true}
}

// nowText renders now for a text setting ("" when invalid).
func nowText(t pgtype.Timestamptz) string {
	if !t.Valid {
		return ""
	}
	return t.Time.UTC().Format(time.RFC3339Nano)
}

// fenceCode is the SQLSTATE converge_fence raises.
const fenceCode = "CV001"

// mapErr maps driver errors to the ports' errors: a fence failure to
// contracts.ErrFenced, a duplicate key to ErrDuplicateID, a value the table
// cannot hold to contracts.ErrInvalidInput, a lost or unreachable server
// to contracts.ErrUnavailable.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == fenceCode:
			return fmt.Errorf("%s: %w", pe.Message, contracts.ErrFenced)
		case pe.Code == "23505" && pe.TableName == "workspaces":
			return fmt.Errorf("%w: %w", ErrDuplicateID, err)
		case len(pe.Code) == 5 && pe.Code[:2] == "22", pe.Code == "23502", pe.Code == "23514":
			// A data exception (a NUL character, bad UTF-8, a value too
			// long for its column, an unknown enum value) or a violated
			// NOT NULL or CHECK: the caller's values, not the server.
			// contracts.CheckRow and CheckPatch reject these before
			// anything is sent; this is the safety net.
			return fmt.Errorf("%w: %s (SQLSTATE %s)", contracts.ErrInvalidInput, pe.Message, pe.Code)
		case len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "57"):
			// Connection exception, operator intervention (shutdown,
			// terminated session).
			return unavailable(err)
		}
		return err
	}
	return unavailable(err)
}

// unavailable marks a transport failure (no answer, lost connection) as
// contracts.ErrUnavailable; a cancelled context stays what it is.
func unavailable(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, contracts.ErrUnavailable) ||
		errors.Is(err, pgx.ErrNoRows) || errors.Is(err, pgx.ErrTooManyRows) {
		return err
	}
	var se pgx.ScanArgError
	if errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("%w: %w", contracts.ErrUnavailable, err)
}
