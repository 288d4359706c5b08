-- The Prompt Guard (see crates/domain/src/model/guard.rs): each tenant's trained model
-- versions, the feedback they learn from, training tasks, and hourly screening counts.
-- Timestamps are INTEGER unix microseconds and booleans 0 or 1, as in the agent and policy
-- tables; JSON is text; ids are UUID text.

-- Versions 1, 2, 3… per tenant; at most one active (none: the built-in default, version
-- 0, which is never stored). `task_id` is history, not a reference.
CREATE TABLE guard_models (
    tenant_id        TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version          INTEGER NOT NULL CHECK (version > 0),
    active           INTEGER NOT NULL CHECK (active IN (0, 1)),
    threshold        REAL NOT NULL,
    examples         INTEGER NOT NULL,
    tenant_examples  INTEGER NOT NULL,
    metrics          TEXT NOT NULL,
    task_id          TEXT,
    trained_at       INTEGER NOT NULL,
    weights          BLOB NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
-- At most one active version per tenant (queried as `WHERE active`).
CREATE UNIQUE INDEX guard_models_active_key ON guard_models (tenant_id) WHERE active;

CREATE TABLE guard_feedback (
    id               TEXT PRIMARY KEY NOT NULL,
    tenant_id        TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('false_positive', 'attack')),
    label            TEXT NOT NULL CHECK (label IN ('benign', 'injection', 'jailbreak', 'leakage')),
    validation_id    TEXT,
    text             TEXT NOT NULL,
    created_by_type  TEXT NOT NULL CHECK (created_by_type IN ('agent', 'user', 'api_key', 'system')),
    created_by_id    TEXT NOT NULL,
    created_at       INTEGER NOT NULL
);
-- Training reads a tenant's feedback oldest first.
CREATE INDEX guard_feedback_tenant_id_idx ON guard_feedback (tenant_id, id);

-- `examples` counts the examples sent with the request; `training_examples` holds them, a
-- JSON array of `{"text", "label"}`, read only by the worker that trains.
CREATE TABLE guard_tasks (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL,
    error              TEXT,
    model_version      INTEGER,
    examples           INTEGER NOT NULL,
    training_examples  TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    attempts           INTEGER NOT NULL,
    lease_token        TEXT,
    lease_until        INTEGER
);
-- Claims: the oldest queued (or abandoned running) task.
CREATE INDEX guard_tasks_status_idx ON guard_tasks (status, id);
-- At most one queued or running task per tenant; also finds it for cancellation.
CREATE UNIQUE INDEX guard_tasks_active_key ON guard_tasks (tenant_id) WHERE status IN ('queued', 'running');

-- Screenings per tenant, hour (unix time / 3600), verdict and latency bucket; writers add
-- to `count` with an upsert.
CREATE TABLE guard_stats (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    hour       INTEGER NOT NULL,
    verdict    TEXT NOT NULL CHECK (verdict IN ('benign', 'injection', 'jailbreak', 'leakage')),
    bucket     INTEGER NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, hour, verdict, bucket)
);
