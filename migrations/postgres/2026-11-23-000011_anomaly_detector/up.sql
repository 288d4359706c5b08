-- The anomaly detector (see crates/domain/src/model/anomaly.rs): each tenant's trained
-- versions and the training tasks that produce them. JSON columns are text, as the Prompt
-- Guard's are: kept verbatim, read only by the adapter.

-- Versions 1, 2, 3… per tenant; at most one active (none: the detector is off, version 0,
-- which is never stored). `info` is the JSON text of the version's `AnomalyModelInfo`
-- (`tenant_id` and `active` are read from the columns); `model` the JSON text of the
-- detector itself, read only with one version. Storing a version and switching the active
-- one lock the tenant's row (FOR NO KEY UPDATE) first.
CREATE TABLE anomaly_models (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version > 0),
    active     BOOLEAN NOT NULL,
    info       TEXT NOT NULL,
    model      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
-- At most one active version per tenant (queried as `WHERE active`).
CREATE UNIQUE INDEX anomaly_models_active_key ON anomaly_models (tenant_id) WHERE active;

-- `window_days` is the days of audit history the task trains on.
CREATE TABLE anomaly_tasks (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           DOUBLE PRECISION NOT NULL,
    error              TEXT,
    model_version      INTEGER,
    window_days        INTEGER NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    started_at         TIMESTAMPTZ,
    finished_at        TIMESTAMPTZ,
    attempts           INTEGER NOT NULL,
    lease_token        UUID,
    lease_until        TIMESTAMPTZ
);
-- Claims: the oldest queued (or abandoned running) task.
CREATE INDEX anomaly_tasks_status_idx ON anomaly_tasks (status, id);
-- At most one queued or running task per tenant; also finds it.
CREATE UNIQUE INDEX anomaly_tasks_active_key ON anomaly_tasks (tenant_id) WHERE status IN ('queued', 'running');
