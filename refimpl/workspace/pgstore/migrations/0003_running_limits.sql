-- SPEC 4.3 as amended: a workspace counts toward the running limits when it
-- is live, healthy and desired OR observed RUNNING. The two partial indexes
-- behind the limit counts follow the new predicate (countsRunningSQL).

DROP INDEX workspaces_user_running_idx;
CREATE INDEX workspaces_user_running_idx ON workspaces (owner_user_id)
    WHERE deleted_at IS NULL AND health_status = 'OK'
      AND (observed_status = 'RUNNING' OR desired_state = 'RUNNING');

DROP INDEX workspaces_running_idx;
CREATE INDEX workspaces_running_idx ON workspaces (id)
    WHERE deleted_at IS NULL AND health_status = 'OK'
      AND (observed_status = 'RUNNING' OR desired_state = 'RUNNING');
