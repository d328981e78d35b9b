-- The workspaces table (SPEC 1.1), its partial indexes and the leader lock's
-- fencing epochs (SPEC 3.1).

CREATE TYPE workspace_observed_status AS ENUM ('PENDING', 'STANDBY', 'RUNNING', 'DELETED');
CREATE TYPE workspace_health_status AS ENUM ('OK', 'ERROR');
CREATE TYPE workspace_operation AS ENUM (
    'NONE', 'PROVISIONING', 'RESTORING', 'STARTING', 'STOPPING', 'ARCHIVING', 'DELETING');
CREATE TYPE workspace_desired_state AS ENUM ('PENDING', 'STANDBY', 'RUNNING');
CREATE TYPE workspace_instance_backend AS ENUM ('local-docker', 'k8s');
CREATE TYPE workspace_storage_backend AS ENUM ('docker-volume', 'minio');

CREATE TABLE workspaces (
    id                  uuid PRIMARY KEY,
    -- SPEC 1.1 says uuid; text keeps user ids of other identity systems
    -- (and the simulator's "user-N") storable.
    owner_user_id       text NOT NULL CHECK (owner_user_id <> ''),
    name                varchar(255) NOT NULL,
    description         text,
    memo                text,
    image_ref           varchar(512) NOT NULL,
    instance_backend    workspace_instance_backend NOT NULL,
    storage_backend     workspace_storage_backend NOT NULL,
    -- Defaults to ws-{id}-home (set by workspaces_defaults).
    home_store_key      varchar(512) NOT NULL,
    home_ctx            jsonb CHECK (jsonb_typeof(home_ctx) = 'object'),
    observed_status     workspace_observed_status NOT NULL DEFAULT 'PENDING',
    health_status       workspace_health_status NOT NULL DEFAULT 'OK',
    observed_at         timestamptz,
    operation           workspace_operation NOT NULL DEFAULT 'NONE',
    op_started_at       timestamptz,
    op_id               uuid,
    archive_key         varchar(512),
    error_count         integer NOT NULL DEFAULT 0,
    error_info          jsonb CHECK (jsonb_typeof(error_info) = 'object'),
    error_message       text,
    previous_status     workspace_observed_status,
    desired_state       workspace_desired_state NOT NULL DEFAULT 'RUNNING',
    deleted_at          timestamptz,
    standby_ttl_seconds integer NOT NULL DEFAULT 300,
    archive_ttl_seconds integer NOT NULL DEFAULT 86400,
    last_access_at      timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
)
-- Room on each page for HOT updates: the HealthMonitor stamps every row
-- every pass, and observed_at is in no index.
WITH (fillfactor = 70);

CREATE FUNCTION workspaces_defaults() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.home_store_key IS NULL THEN
        NEW.home_store_key := 'ws-' || NEW.id::text || '-home';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER workspaces_defaults BEFORE INSERT ON workspaces
    FOR EACH ROW EXECUTE FUNCTION workspaces_defaults();

-- The six partial indexes of SPEC 1.1, all on live (not soft-deleted) rows.
-- observed ≠ desired is spelled out per level: an enum-to-text cast is not
-- immutable, so it cannot appear in an index predicate.

-- TTL check: idle candidates of the TTL Manager.
CREATE INDEX workspaces_ttl_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND observed_status IN ('RUNNING', 'STANDBY')
      AND health_status = 'OK' AND operation = 'NONE';

-- Reconcile targets.
CREATE INDEX workspaces_reconcile_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND (
        operation <> 'NONE' OR health_status = 'ERROR'
        OR NOT ((observed_status = 'PENDING' AND desired_state = 'PENDING')
             OR (observed_status = 'STANDBY' AND desired_state = 'STANDBY')
             OR (observed_status = 'RUNNING' AND desired_state = 'RUNNING')));

-- Operations in progress.
CREATE INDEX workspaces_operation_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND operation <> 'NONE';

-- Per-user running (the per-user limit).
CREATE INDEX workspaces_user_running_idx ON workspaces (owner_user_id)
    WHERE deleted_at IS NULL AND observed_status = 'RUNNING' AND health_status = 'OK';

-- Global running (the global limit).
CREATE INDEX workspaces_running_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND observed_status = 'RUNNING' AND health_status = 'OK';

-- ERROR rows.
CREATE INDEX workspaces_error_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND health_status = 'ERROR';

-- Leader election (SPEC 3.1): one row per lock, its epoch incremented on
-- every acquisition.
CREATE TABLE system_locks (
    name        text PRIMARY KEY,
    epoch       bigint NOT NULL,
    holder      text NOT NULL,
    acquired_at timestamptz NOT NULL
);

-- converge_fence(lock, epoch) raises SQLSTATE CV001 unless epoch is the
-- current epoch of lock; epoch 0 (not a coordinator write) always passes.
-- It holds a share lock on the lock's row until the transaction ends, so a
-- new acquisition (which updates the row) waits for the write to commit:
-- a deposed leader's write lands before its successor's epoch or not at all.
CREATE FUNCTION converge_fence(lock_name text, want bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
BEGIN
    IF want = 0 THEN
        RETURN;
    END IF;
    SELECT epoch INTO cur FROM system_locks WHERE name = lock_name FOR SHARE;
    IF cur IS DISTINCT FROM want THEN
        RAISE EXCEPTION 'fenced: writer epoch %, current epoch of % is %', want, lock_name, coalesce(cur::text, 'none')
            USING ERRCODE = 'CV001';
    END IF;
END
$$;
