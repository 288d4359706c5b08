-- The job queue and model registry back into the tables they replaced, rows and all.

CREATE TABLE export_jobs (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants (id),
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    format             TEXT NOT NULL CHECK (format IN ('jsonl', 'json', 'csv')),
    filters            JSONB NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           DOUBLE PRECISION NOT NULL,
    rows               BIGINT NOT NULL,
    bytes              BIGINT NOT NULL,
    error              TEXT,
    created_at         TIMESTAMPTZ NOT NULL,
    started_at         TIMESTAMPTZ,
    finished_at        TIMESTAMPTZ,
    expires_at         TIMESTAMPTZ,
    chunks             INTEGER NOT NULL,
    attempts           INTEGER NOT NULL,
    lease_token        UUID,
    lease_until        TIMESTAMPTZ
);
CREATE INDEX export_jobs_status_idx ON export_jobs (status, id);
CREATE INDEX export_jobs_expires_at_idx ON export_jobs (expires_at);

CREATE TABLE export_chunks (
    job_id  UUID NOT NULL REFERENCES export_jobs (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    data    BYTEA NOT NULL,
    PRIMARY KEY (job_id, idx)
);

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
CREATE UNIQUE INDEX guard_models_active_key ON guard_models (tenant_id) WHERE active;

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
CREATE INDEX guard_tasks_status_idx ON guard_tasks (status, id);
CREATE UNIQUE INDEX guard_tasks_active_key ON guard_tasks (tenant_id) WHERE status IN ('queued', 'running');

CREATE TABLE anomaly_models (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version > 0),
    active     BOOLEAN NOT NULL,
    info       TEXT NOT NULL,
    model      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
CREATE UNIQUE INDEX anomaly_models_active_key ON anomaly_models (tenant_id) WHERE active;

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
CREATE INDEX anomaly_tasks_status_idx ON anomaly_tasks (status, id);
CREATE UNIQUE INDEX anomaly_tasks_active_key ON anomaly_tasks (tenant_id) WHERE status IN ('queued', 'running');

CREATE TABLE discovery_jobs (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           DOUBLE PRECISION NOT NULL,
    error              TEXT,
    summary            TEXT,
    created_at         TIMESTAMPTZ NOT NULL,
    started_at         TIMESTAMPTZ,
    finished_at        TIMESTAMPTZ,
    attempts           INTEGER NOT NULL,
    lease_token        UUID,
    lease_until        TIMESTAMPTZ
);
CREATE INDEX discovery_jobs_status_idx ON discovery_jobs (status, id);
CREATE UNIQUE INDEX discovery_jobs_active_key ON discovery_jobs (tenant_id) WHERE status IN ('queued', 'running');

INSERT INTO export_jobs
SELECT id, tenant_id, requested_by_type, requested_by_id, params->>'format', (params->'filters')::jsonb, status, progress,
       coalesce((state->>'rows')::bigint, 0), coalesce((state->>'bytes')::bigint, 0), error, created_at,
       started_at, finished_at, expires_at, coalesce((state->>'chunks')::integer, 0), attempts, lease_token,
       lease_until
FROM jobs WHERE kind = 'export';
INSERT INTO export_chunks SELECT c.job_id, c.idx, c.data FROM job_chunks c JOIN jobs j ON j.id = c.job_id
WHERE j.kind = 'export';

-- A training's params may hold an escaped NUL (`\u0000`) in an example's text, which no JSON
-- operator reads; they are taken apart as text: `{"examples": <n>, "training_examples": [...]}`,
-- the array the last member (both writers put it there), its key's first occurrence the key.
INSERT INTO guard_tasks
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error,
       (state->>'model_version')::integer,
       substring(p FROM '"examples"\s*:\s*(\d+)')::bigint,
       rtrim(rtrim(ltrim(substr(p, position('"training_examples"' IN p) + 19), ' :')), '}'),
       created_at, started_at, finished_at, attempts, lease_token, lease_until
FROM (SELECT *, params::text AS p FROM jobs WHERE kind = 'guard_training') AS training;

INSERT INTO anomaly_tasks
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error,
       (state->>'model_version')::integer, (params->>'window_days')::integer, created_at, started_at, finished_at,
       attempts, lease_token, lease_until
FROM jobs WHERE kind = 'anomaly_training';

INSERT INTO discovery_jobs
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error, (state->'summary')::text,
       created_at, started_at, finished_at, attempts, lease_token, lease_until
FROM jobs WHERE kind = 'clustering';

INSERT INTO guard_models
SELECT tenant_id, version, active, (info->>'threshold')::double precision, (info->>'examples')::bigint,
       (info->>'tenant_examples')::bigint, (info->'metrics')::text, (info->>'task_id')::uuid,
       (info->>'trained_at')::timestamptz, model
FROM model_versions WHERE kind = 'guard';

INSERT INTO anomaly_models
SELECT tenant_id, version, active, info::text, convert_from(model, 'UTF8') FROM model_versions WHERE kind = 'anomaly';

DROP TABLE job_chunks;
DROP TABLE jobs;
DROP TABLE model_versions;
