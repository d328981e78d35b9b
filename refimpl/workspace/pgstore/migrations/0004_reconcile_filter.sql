-- The StateReconciler's selection (contracts.FilterReconcile) served by an
-- index of its own. SPEC 1.1's reconcile index covers live rows only, but
-- the reconciler also reads soft-deleted rows and rows with a retry pending
-- (error_info), so its query could not use it and walked the whole table on
-- every pass (a second or more at 100,000 rows, to find a handful). The
-- predicate is, to the letter, the WHERE clause of FilterReconcile in
-- filter.go (PostgreSQL uses a partial index when the query's condition
-- implies it); observed ≠ desired is spelled out per level because an
-- enum-to-text cast cannot appear in an index predicate.
CREATE INDEX workspaces_reconcile_filter_idx ON workspaces (id)
    WHERE operation <> 'NONE' OR (observed_status <> 'DELETED' AND (
        NOT ((observed_status = 'PENDING' AND desired_state = 'PENDING')
          OR (observed_status = 'STANDBY' AND desired_state = 'STANDBY')
          OR (observed_status = 'RUNNING' AND desired_state = 'RUNNING'))
        OR health_status = 'ERROR' OR error_info IS NOT NULL OR deleted_at IS NOT NULL));
