// Package pgstore is the PostgreSQL adapter of the store ports (pgx v5):
// ports.Store (the workspaces table), ports.Leadership (the leader lock and
// its fencing epoch, SPEC 3.1) and ports.ChangeFeed (LISTEN
// workspace_changes, SPEC 4.6), plus History, which reads the audit trail
// as history events so the judge/workspace checkers can judge a run on
// real PostgreSQL.
//
// Schema. Migrate applies the embedded, versioned migrations in
// migrations/ with jackc/tern (one transaction each, the version in
// schema_version, under an advisory lock so concurrent callers do not
// race; a database migrated by converge's earlier migrator is adopted at
// the version its schema_migrations recorded): the workspaces table of
// SPEC 1.1 with its enums and six partial indexes (plus one serving the
// StateReconciler's exact selection, which also holds soft-deleted rows),
// system_locks, the fence function, the workspace_audit table and its
// triggers, and the notify trigger. Every filter is read in pages by
// keyset in index order (a test checks the plans).
//
// Values. Every write first checks its values with contracts.CheckRow or
// CheckPatch, so what the table cannot hold is contracts.ErrInvalidInput
// before anything is sent; a data exception the server raises anyway maps
// to the same error, never a raw driver error.
//
// Running limits. InsertWithinLimits and UpdateWithinLimits run in one
// transaction that takes pg_advisory_xact_lock on the guard's global key,
// then on the owner's, counts the rows that count (the amended SPEC 4.3
// rule, backed by the two running partial indexes) and writes only when
// contracts.CheckGuard passes, so concurrent guarded writes never exceed a
// limit.
//
// Writes. Every write is one pipelined batch, one round trip, which
// PostgreSQL runs as one implicit transaction: first a statement that
// stores the writer in transaction-local settings (converge.component,
// .instance, .epoch, .on_behalf, .now) and calls converge_fence, then the
// write itself. The fence raises SQLSTATE CV001 unless a writer with a
// non-zero epoch carries the current epoch of the coordinator lock, and it
// share-locks that lock's row until commit, so a new leader's acquisition
// waits for a deposed leader's in-flight write; a fenced batch writes
// nothing and fails with contracts.ErrFenced. UpdateMany groups its rows by
// the columns they assign and their condition and sends one
// UPDATE … FROM unnest(arrays) per group. updated_at (and the audit's time)
// is the store's clock when one is given, else the server's now().
//
// Attribution. A trigger writes one workspace_audit row per inserted or
// updated row with the writer read back from the settings ('unknown' when
// a third party wrote without them), the columns the writer assigned plus
// any other column that changed, their new values, and the condition;
// MarkObserved, which ends the HealthMonitor's pass, adds a 'pass' row
// (History turns it into the health.pass note), and acquisitions and
// releases of the lock add 'acquire' and 'release' rows. Updates that only
// stamp observed_at are not recorded one by one.
//
// Leadership. Each Leadership holds the advisory lock on a dedicated
// connection (not a pool connection, which the pool might recycle) dialled
// with short TCP keepalives and TCP_USER_TIMEOUT, and with per-session
// keepalive, user-timeout and idle-session settings, so a dead peer is
// noticed within seconds on either side.
package pgstore
