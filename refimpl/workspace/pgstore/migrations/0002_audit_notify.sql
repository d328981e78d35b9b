-- Attribution of every write (the audit trail the checkers judge) and the
-- workspace_changes notifications (SPEC 4.6).

-- converge_setting(name) is a transaction-local setting, or NULL when it
-- is unset or empty (a setting set earlier in the session reads as '').
CREATE FUNCTION converge_setting(name text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting(name, true), '')
$$;

-- One row per attributed fact, in commit-independent sequence order:
--   insert   a row inserted (new_values: the whole row)
--   update   a row updated (columns: the columns the writer assigned plus
--            any other column whose value changed; new_values: their new
--            values; cond: the writer's condition)
--   pass     the end of the HealthMonitor's pass (MarkObserved; new_values:
--            the number of rows it stamped)
--   acquire  the leader lock acquired (instance: the holder)
--   release  the leader lock released
-- Writers are read from the transaction-local settings converge.component,
-- .instance, .epoch, .on_behalf, .now, .columns, .cond and .batch (set by
-- UpdateMany, which marks its rows); an
-- update made without them is attributed to 'unknown'. Updates that set
-- observed_at and nothing else are not recorded (they are the bulk of the
-- HealthMonitor's writes and say nothing a checker needs).
CREATE TABLE workspace_audit (
    seq          bigserial PRIMARY KEY,
    at           timestamptz NOT NULL,
    workspace_id uuid,
    op           text NOT NULL CHECK (op IN ('insert', 'update', 'pass', 'acquire', 'release')),
    component    text NOT NULL,
    instance     text NOT NULL DEFAULT '',
    epoch        bigint NOT NULL DEFAULT 0,
    on_behalf    text NOT NULL DEFAULT '',
    columns      text[] NOT NULL DEFAULT '{}',
    new_values   jsonb,
    cond         jsonb,
    batch        text
);

CREATE FUNCTION workspaces_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    newj     jsonb := to_jsonb(NEW);
    oldj     jsonb;
    declared text[];
    cols     text[] := '{}';
    vals     jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        vals := newj;
    ELSE
        oldj := to_jsonb(OLD);
        declared := coalesce(string_to_array(converge_setting('converge.columns'), ','), '{}');
        -- Fast path for the HealthMonitor's observed_at stamps.
        IF declared <@ '{observed_at}'::text[]
           AND newj - 'observed_at' - 'updated_at' = oldj - 'observed_at' - 'updated_at' THEN
            RETURN NULL;
        END IF;
        SELECT coalesce(array_agg(n.key ORDER BY n.key), '{}'), coalesce(jsonb_object_agg(n.key, n.value), '{}')
          INTO cols, vals
          FROM jsonb_each(newj) AS n
         WHERE n.key <> 'updated_at'
           AND (n.key = ANY (declared) OR n.value IS DISTINCT FROM oldj -> n.key);
        IF cols = '{observed_at}'::text[] THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO workspace_audit (at, workspace_id, op, component, instance, epoch, on_behalf,
                                 columns, new_values, cond, batch)
    VALUES (coalesce(converge_setting('converge.now')::timestamptz, now()),
            NEW.id,
            lower(TG_OP),
            coalesce(converge_setting('converge.component'), 'unknown'),
            coalesce(converge_setting('converge.instance'), ''),
            coalesce(converge_setting('converge.epoch')::bigint, 0),
            coalesce(converge_setting('converge.on_behalf'), ''),
            cols,
            vals,
            CASE WHEN TG_OP = 'UPDATE' THEN converge_setting('converge.cond')::jsonb END,
            converge_setting('converge.batch'));
    RETURN NULL;
END
$$;

CREATE TRIGGER workspaces_audit_insert AFTER INSERT ON workspaces
    FOR EACH ROW EXECUTE FUNCTION workspaces_audit();

-- The WHEN clause skips the HealthMonitor's observed_at stamps without
-- calling the function (the bulk of all updates): it fires when the writer
-- declared other columns, or when a column other than observed_at and
-- updated_at changed. A migration adding a column to workspaces must add
-- it to both rows here.
CREATE TRIGGER workspaces_audit_update AFTER UPDATE ON workspaces
    FOR EACH ROW
    WHEN (coalesce(current_setting('converge.columns', true), '') NOT IN ('', 'observed_at')
       OR (OLD.id, OLD.owner_user_id, OLD.name, OLD.description, OLD.memo, OLD.image_ref,
           OLD.instance_backend, OLD.storage_backend, OLD.home_store_key, OLD.home_ctx,
           OLD.observed_status, OLD.health_status, OLD.operation, OLD.op_started_at, OLD.op_id,
           OLD.archive_key, OLD.error_count, OLD.error_info, OLD.error_message, OLD.previous_status,
           OLD.desired_state, OLD.deleted_at, OLD.standby_ttl_seconds, OLD.archive_ttl_seconds,
           OLD.last_access_at, OLD.created_at)
          IS DISTINCT FROM
          (NEW.id, NEW.owner_user_id, NEW.name, NEW.description, NEW.memo, NEW.image_ref,
           NEW.instance_backend, NEW.storage_backend, NEW.home_store_key, NEW.home_ctx,
           NEW.observed_status, NEW.health_status, NEW.operation, NEW.op_started_at, NEW.op_id,
           NEW.archive_key, NEW.error_count, NEW.error_info, NEW.error_message, NEW.previous_status,
           NEW.desired_state, NEW.deleted_at, NEW.standby_ttl_seconds, NEW.archive_ttl_seconds,
           NEW.last_access_at, NEW.created_at))
    EXECUTE FUNCTION workspaces_audit();

CREATE FUNCTION system_locks_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO workspace_audit (at, op, component, instance, epoch, new_values)
    VALUES (NEW.acquired_at, 'acquire', '', NEW.holder, NEW.epoch, jsonb_build_object('lock', NEW.name));
    RETURN NULL;
END
$$;

CREATE TRIGGER system_locks_audit AFTER INSERT OR UPDATE ON system_locks
    FOR EACH ROW EXECUTE FUNCTION system_locks_audit();

-- The change feed: the row's new state after an insert, or after an update
-- that changed one of the notify columns (ports.NotifyColumns). The payload
-- carries the fields of ports.Change; error_message is cut to stay far
-- below pg_notify's 8000-byte limit.
CREATE FUNCTION workspaces_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('workspace_changes', json_build_object(
        'workspace_id', NEW.id,
        'observed_status', NEW.observed_status,
        'health_status', NEW.health_status,
        'operation', NEW.operation,
        'desired_state', NEW.desired_state,
        'deleted', NEW.deleted_at IS NOT NULL,
        'archive_key', NEW.archive_key,
        'error_message', left(NEW.error_message, 1000),
        'error_count', NEW.error_count,
        'display', CASE
            WHEN NEW.observed_status = 'DELETED' THEN 'DELETED'
            WHEN NEW.health_status = 'ERROR' THEN 'ERROR'
            WHEN NEW.observed_status = 'RUNNING' THEN 'RUNNING'
            WHEN NEW.observed_status = 'STANDBY' THEN 'STANDBY'
            WHEN NEW.archive_key IS NOT NULL THEN 'ARCHIVED'
            ELSE 'PENDING' END,
        'at', NEW.updated_at)::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER workspaces_notify_insert AFTER INSERT ON workspaces
    FOR EACH ROW EXECUTE FUNCTION workspaces_notify();

CREATE TRIGGER workspaces_notify_update AFTER UPDATE ON workspaces
    FOR EACH ROW
    WHEN (OLD.observed_status IS DISTINCT FROM NEW.observed_status
       OR OLD.health_status IS DISTINCT FROM NEW.health_status
       OR OLD.operation IS DISTINCT FROM NEW.operation
       OR OLD.desired_state IS DISTINCT FROM NEW.desired_state
       OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
       OR OLD.error_info IS DISTINCT FROM NEW.error_info)
    EXECUTE FUNCTION workspaces_notify();
