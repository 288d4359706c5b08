-- The Prompt Guard (see crates/domain/src/model/guard.rs): each tenant's trained model
-- versions, the feedback they learn from, training tasks, and hourly screening counts.
-- JSON columns are text, as the agents' are: kept verbatim, read only by the adapter.

-- Versions 1, 2, 3… per tenant; at most one active (none: the built-in default, version
-- 0, which is never stored). `task_id` is history, not a reference. Storing a version
-- and switching the active one lock the tenant's row (FOR NO KEY UPDATE) first.
CREATE TABLE guard_models (
    tenant_id        UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version          INTEGER NOT NULL CHECK (version > 0),
    active           BOOLEAN NOT NULL,
    threshold        DOUBLE PRECISION NOT NULL,
    examples         BIGINT NOT NULL,
    tenant_examples  BIGINT NOT NULL,
    metrics          TEXT NOT NULL,
    task_id          UUID,
    trained_at       TIMESTAMPTZ NOT NULL,
    weights          BYTEA NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
-- At most one active version per tenant (queried as `WHERE active`).
CREATE UNIQUE INDEX guard_models_active_key ON guard_models (tenant_id) WHERE active;

CREATE TABLE guard_feedback (
    id               UUID PRIMARY KEY,
    tenant_id        UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('false_positive', 'attack')),
    label            TEXT NOT NULL CHECK (label IN ('benign', 'injection', 'jailbreak', 'leakage')),
    validation_id    UUID,
    text             TEXT NOT NULL,
    created_by_type  TEXT NOT NULL CHECK (created_by_type IN ('agent', 'user', 'api_key', 'system')),
    created_by_id    TEXT NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL
);
-- Training reads a tenant's feedback oldest first.
CREATE INDEX guard_feedback_tenant_id_idx ON guard_feedback (tenant_id, id);

-- `examples` counts the examples sent with the request; `training_examples` holds them, a
-- JSON array of `{"text", "label"}`, read only by the worker that trains.
CREATE TABLE guard_tasks (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           DOUBLE PRECISION NOT NULL,
    error              TEXT,
    model_version      INTEGER,
    examples           BIGINT NOT NULL,
    training_examples  TEXT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    started_at         TIMESTAMPTZ,
    finished_at        TIMESTAMPTZ,
    attempts           INTEGER NOT NULL,
    lease_token        UUID,
    lease_until        TIMESTAMPTZ
);
-- Claims: the oldest queued (or abandoned running) task.
CREATE INDEX guard_tasks_status_idx ON guard_tasks (status, id);
-- At most one queued or running task per tenant; also finds it for cancellation.
CREATE UNIQUE INDEX guard_tasks_active_key ON guard_tasks (tenant_id) WHERE status IN ('queued', 'running');

-- Screenings per tenant, hour (unix time / 3600), verdict and latency bucket; writers add
-- to `count` with an upsert.
CREATE TABLE guard_stats (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    hour       BIGINT NOT NULL,
    verdict    TEXT NOT NULL CHECK (verdict IN ('benign', 'injection', 'jailbreak', 'leakage')),
    bucket     SMALLINT NOT NULL,
    count      BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, hour, verdict, bucket)
);
