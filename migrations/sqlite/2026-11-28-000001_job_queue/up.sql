-- One job queue and one model registry (see crates/domain/src/model/job.rs) in place of the
-- four job tables (export_jobs, guard_tasks, anomaly_tasks, discovery_jobs) and the two
-- model tables (guard_models, anomaly_models). Every existing row moves over: a database
-- upgraded keeps its queued, running and finished jobs, their files and every version.
-- Timestamps are INTEGER unix microseconds, booleans 0 or 1, JSON is text, ids UUID text.

-- `params` is what the job was asked to do and `state` what it has produced (`null`
-- before), both JSON its kind defines; `expires_at` is when it is deleted with its chunks.
CREATE TABLE jobs (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind               TEXT NOT NULL
                       CHECK (kind IN ('export', 'guard_training', 'anomaly_training', 'clustering')),
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL,
    error              TEXT,
    params             TEXT NOT NULL,
    state              TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    expires_at         INTEGER,
    attempts           INTEGER NOT NULL,
    lease_token        TEXT,
    lease_until        INTEGER
);
-- Claims: queued (or abandoned running) jobs of the kinds a worker takes, oldest first.
CREATE INDEX jobs_claim_idx ON jobs (status, kind, id);
-- A tenant's queued or running jobs of a kind (its limit, its active job; fairness).
CREATE INDEX jobs_active_idx ON jobs (tenant_id, kind) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_expires_at_idx ON jobs (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE job_chunks (
    job_id  TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (job_id, idx)
);

-- Versions 1, 2, 3… per tenant and kind; at most one active (none: the kind's default,
-- version 0, never stored). `info` is the JSON text of the kind's version record (its
-- `version` and `active` are read from the columns); `model` the kind's own encoding.
CREATE TABLE model_versions (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('guard', 'anomaly')),
    version    INTEGER NOT NULL CHECK (version > 0),
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    info       TEXT NOT NULL,
    model      BLOB NOT NULL,
    PRIMARY KEY (tenant_id, kind, version)
);
CREATE UNIQUE INDEX model_versions_active_key ON model_versions (tenant_id, kind) WHERE active;

INSERT INTO jobs
SELECT id, tenant_id, 'export', requested_by_type, requested_by_id, status, progress, error,
       json_object('format', format, 'filters', json(filters)),
       json_object('rows', rows, 'bytes', bytes, 'chunks', chunks),
       created_at, started_at, finished_at, expires_at, attempts, lease_token, lease_until
FROM export_jobs;
INSERT INTO job_chunks SELECT job_id, idx, data FROM export_chunks;

INSERT INTO jobs
SELECT id, tenant_id, 'guard_training', requested_by_type, requested_by_id, status, progress, error,
       json_object('examples', examples, 'training_examples', json(training_examples)),
       CASE WHEN model_version IS NULL THEN 'null' ELSE json_object('model_version', model_version) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM guard_tasks;

INSERT INTO jobs
SELECT id, tenant_id, 'anomaly_training', requested_by_type, requested_by_id, status, progress, error,
       json_object('window_days', window_days),
       CASE WHEN model_version IS NULL THEN 'null' ELSE json_object('model_version', model_version) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM anomaly_tasks;

INSERT INTO jobs
SELECT id, tenant_id, 'clustering', requested_by_type, requested_by_id, status, progress, error,
       '{}',
       CASE WHEN summary IS NULL THEN 'null' ELSE json_object('summary', json(summary)) END,
       created_at, started_at, finished_at, NULL, attempts, lease_token, lease_until
FROM discovery_jobs;

-- A guard version's info is `GuardModelInfo`'s JSON: `trained_at` in RFC 3339, to the
-- microsecond.
INSERT INTO model_versions
SELECT tenant_id, 'guard', version, active,
       json_object(
           'version', version,
           'active', json(CASE WHEN active THEN 'true' ELSE 'false' END),
           'threshold', threshold,
           'examples', examples,
           'tenant_examples', tenant_examples,
           'metrics', json(metrics),
           'task_id', task_id,
           'trained_at', strftime('%Y-%m-%dT%H:%M:%S', trained_at / 1000000, 'unixepoch')
                         || printf('.%06dZ', trained_at % 1000000)
       ),
       weights
FROM guard_models;

INSERT INTO model_versions
SELECT tenant_id, 'anomaly', version, active, info, CAST(model AS BLOB) FROM anomaly_models;

DROP TABLE export_chunks;
DROP TABLE export_jobs;
DROP TABLE guard_tasks;
DROP TABLE guard_models;
DROP TABLE anomaly_tasks;
DROP TABLE anomaly_models;
DROP TABLE discovery_jobs;
