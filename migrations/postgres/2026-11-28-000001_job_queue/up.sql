-- One job queue and one model registry (see crates/domain/src/model/job.rs) in place of the
-- four job tables (export_jobs, guard_tasks, anomaly_tasks, discovery_jobs) and the two
-- model tables (guard_models, anomaly_models). Every existing row moves over: a database
-- upgraded keeps its queued, running and finished jobs, their files and every version.

-- `params` is what the job was asked to do and `state` what it has produced (`null`
-- before), both JSON its kind defines; `expires_at` is when it is deleted with its chunks.
-- JSON, not JSONB: kept as written, and a text may hold any character (JSONB refuses the
-- escaped NUL `\u0000`, which a training example may contain).
CREATE TABLE jobs (
    id                 UUID PRIMARY KEY,
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind               TEXT NOT NULL
                       CHECK (kind IN ('export', 'guard_training', 'anomaly_training', 'clustering')),
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           DOUBLE PRECISION NOT NULL,
    error              TEXT,
    params             JSON NOT NULL,
    state              JSON NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    started_at         TIMESTAMPTZ,
    finished_at        TIMESTAMPTZ,
    expires_at         TIMESTAMPTZ,
    attempts           INTEGER NOT NULL,
    lease_token        UUID,
    lease_until        TIMESTAMPTZ
);
-- Claims: queued (or abandoned running) jobs of the kinds a worker takes, oldest first.
CREATE INDEX jobs_claim_idx ON jobs (status, kind, id);
-- A tenant's queued or running jobs of a kind (its limit, its active job; fairness).
CREATE INDEX jobs_active_idx ON jobs (tenant_id, kind) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_expires_at_idx ON jobs (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE job_chunks (
    job_id  UUID NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    data    BYTEA NOT NULL,
    PRIMARY KEY (job_id, idx)
);

-- Versions 1, 2, 3… per tenant and kind; at most one active (none: the kind's default,
-- version 0, never stored). `info` is the kind's version record (its `version` and `active`
-- are read from the columns); `model` the kind's own encoding.
CREATE TABLE model_versions (
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('guard', 'anomaly')),
    version    INTEGER NOT NULL CHECK (version > 0),
    active     BOOLEAN NOT NULL,
    info       JSON NOT NULL,
    model      BYTEA NOT NULL,
    PRIMARY KEY (tenant_id, kind, version)
);
CREATE UNIQUE INDEX model_versions_active_key ON model_versions (tenant_id, kind) WHERE active;

INSERT INTO jobs
SELECT id, tenant_id, 'export', requested_by_type, requested_by_id, status, progress, error,
       json_build_object('format', format, 'filters', filters),
       json_build_object('rows', rows, 'bytes', bytes, 'chunks', chunks),
       created_at, started_at, finished_at, expires_at, attempts, lease_token, lease_until
FROM export_jobs;
INSERT INTO job_chunks SELECT job_id, idx, data FROM export_chunks;

INSERT INTO jobs
SELECT id, tenant_id, 'guard_training', requested_by_type, requested_by_id, status, progress, error,
       json_build_object('examples', examples, 'training_examples', training_examples::json),
       CASE WHEN model_version IS NULL THEN 'null'::json
            ELSE json_build_object('model_version', model_version) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM guard_tasks;

INSERT INTO jobs
SELECT id, tenant_id, 'anomaly_training', requested_by_type, requested_by_id, status, progress, error,
       json_build_object('window_days', window_days),
       CASE WHEN model_version IS NULL THEN 'null'::json
            ELSE json_build_object('model_version', model_version) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM anomaly_tasks;

INSERT INTO jobs
SELECT id, tenant_id, 'clustering', requested_by_type, requested_by_id, status, progress, error,
       '{}'::json,
       CASE WHEN summary IS NULL THEN 'null'::json ELSE json_build_object('summary', summary::json) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM discovery_jobs;

-- A guard version's info is `GuardModelInfo`'s JSON: `trained_at` in RFC 3339, to the
-- microsecond.
INSERT INTO model_versions
SELECT tenant_id, 'guard', version, active,
       json_build_object(
           'version', version,
           'active', active,
           'threshold', threshold,
           'examples', examples,
           'tenant_examples', tenant_examples,
           'metrics', metrics::json,
           'task_id', task_id,
           'trained_at', to_char(trained_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
       ),
       weights
FROM guard_models;

INSERT INTO model_versions
SELECT tenant_id, 'anomaly', version, active, info::json, convert_to(model, 'UTF8') FROM anomaly_models;

DROP TABLE export_chunks;
DROP TABLE export_jobs;
DROP TABLE guard_tasks;
DROP TABLE guard_models;
DROP TABLE anomaly_tasks;
DROP TABLE anomaly_models;
DROP TABLE discovery_jobs;
