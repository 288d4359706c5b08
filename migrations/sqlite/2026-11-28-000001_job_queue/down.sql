-- The job queue and model registry back into the tables they replaced, rows and all.

CREATE TABLE export_jobs (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id),
    requested_by_type  TEXT NOT NULL,
    requested_by_id    TEXT NOT NULL,
    format             TEXT NOT NULL,
    filters            TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL,
    rows               INTEGER NOT NULL,
    bytes              INTEGER NOT NULL,
    error              TEXT,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    expires_at         INTEGER,
    chunks             INTEGER NOT NULL,
    attempts           INTEGER NOT NULL,
    lease_token        TEXT,
    lease_until        INTEGER
);
CREATE INDEX export_jobs_status_idx ON export_jobs (status, id);
CREATE INDEX export_jobs_expires_at_idx ON export_jobs (expires_at);

CREATE TABLE export_chunks (
    job_id  TEXT NOT NULL REFERENCES export_jobs (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (job_id, idx)
);

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
CREATE UNIQUE INDEX guard_models_active_key ON guard_models (tenant_id) WHERE active;

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
CREATE INDEX guard_tasks_status_idx ON guard_tasks (status, id);
CREATE UNIQUE INDEX guard_tasks_active_key ON guard_tasks (tenant_id) WHERE status IN ('queued', 'running');

CREATE TABLE anomaly_models (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version > 0),
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    info       TEXT NOT NULL,
    model      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
CREATE UNIQUE INDEX anomaly_models_active_key ON anomaly_models (tenant_id) WHERE active;

CREATE TABLE anomaly_tasks (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL,
    error              TEXT,
    model_version      INTEGER,
    window_days        INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    attempts           INTEGER NOT NULL,
    lease_token        TEXT,
    lease_until        INTEGER
);
CREATE INDEX anomaly_tasks_status_idx ON anomaly_tasks (status, id);
CREATE UNIQUE INDEX anomaly_tasks_active_key ON anomaly_tasks (tenant_id) WHERE status IN ('queued', 'running');

CREATE TABLE discovery_jobs (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by_type  TEXT NOT NULL CHECK (requested_by_type IN ('agent', 'user', 'api_key', 'system')),
    requested_by_id    TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    progress           REAL NOT NULL,
    error              TEXT,
    summary            TEXT,
    created_at         INTEGER NOT NULL,
    started_at         INTEGER,
    finished_at        INTEGER,
    attempts           INTEGER NOT NULL,
    lease_token        TEXT,
    lease_until        INTEGER
);
CREATE INDEX discovery_jobs_status_idx ON discovery_jobs (status, id);
CREATE UNIQUE INDEX discovery_jobs_active_key ON discovery_jobs (tenant_id) WHERE status IN ('queued', 'running');

INSERT INTO export_jobs
SELECT id, tenant_id, requested_by_type, requested_by_id, json_extract(params, '$.format'),
       json(json_extract(params, '$.filters')), status, progress,
       coalesce(json_extract(state, '$.rows'), 0), coalesce(json_extract(state, '$.bytes'), 0), error,
       created_at, started_at, finished_at, expires_at, coalesce(json_extract(state, '$.chunks'), 0),
       attempts, lease_token, lease_until
FROM jobs WHERE kind = 'export';
INSERT INTO export_chunks SELECT c.job_id, c.idx, c.data FROM job_chunks c JOIN jobs j ON j.id = c.job_id
WHERE j.kind = 'export';

INSERT INTO guard_tasks
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error,
       json_extract(state, '$.model_version'), json_extract(params, '$.examples'),
       json(json_extract(params, '$.training_examples')), created_at, started_at, finished_at, attempts,
       lease_token, lease_until
FROM jobs WHERE kind = 'guard_training';

INSERT INTO anomaly_tasks
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error,
       json_extract(state, '$.model_version'), json_extract(params, '$.window_days'), created_at, started_at,
       finished_at, attempts, lease_token, lease_until
FROM jobs WHERE kind = 'anomaly_training';

INSERT INTO discovery_jobs
SELECT id, tenant_id, requested_by_type, requested_by_id, status, progress, error,
       json(json_extract(state, '$.summary')), created_at, started_at, finished_at, attempts, lease_token,
       lease_until
FROM jobs WHERE kind = 'clustering';

INSERT INTO guard_models
SELECT tenant_id, version, active, json_extract(info, '$.threshold'), json_extract(info, '$.examples'),
       json_extract(info, '$.tenant_examples'), json(json_extract(info, '$.metrics')),
       json_extract(info, '$.task_id'),
       -- RFC 3339 back to unix microseconds, to the microsecond.
       unixepoch(substr(t, 1, 19)) * 1000000
           + CASE WHEN substr(t, 20, 1) = '.'
                  THEN CAST(substr(substr(t, 21, instr(t, 'Z') - 21) || '000000', 1, 6) AS INTEGER)
                  ELSE 0 END,
       model
FROM (SELECT *, json_extract(info, '$.trained_at') AS t FROM model_versions WHERE kind = 'guard');

INSERT INTO anomaly_models
SELECT tenant_id, version, active, info, CAST(model AS TEXT) FROM model_versions WHERE kind = 'anomaly';

DROP TABLE job_chunks;
DROP TABLE jobs;
DROP TABLE model_versions;
