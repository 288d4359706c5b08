-- Replays (`POST /policies/{id}/replay`) are jobs of the one queue, of kind `replay`.
-- SQLite cannot change a CHECK constraint: `jobs` is made again with it (and `job_chunks`,
-- whose foreign key names `jobs`), every row copied. The new tables are filled before the
-- old ones are dropped (chunks first, so no cascade deletes anything), and renamed into
-- place, which rewrites the chunks' foreign key to the new `jobs`.
CREATE TABLE jobs_next (
    id                 TEXT PRIMARY KEY NOT NULL,
    tenant_id          TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind               TEXT NOT NULL
                       CHECK (kind IN ('export', 'guard_training', 'anomaly_training', 'clustering', 'replay')),
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
INSERT INTO jobs_next SELECT id, tenant_id, kind, requested_by_type, requested_by_id, status, progress, error,
    params, state, created_at, started_at, finished_at, expires_at, attempts, lease_token, lease_until FROM jobs;
CREATE TABLE job_chunks_next (
    job_id  TEXT NOT NULL REFERENCES jobs_next (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (job_id, idx)
);
INSERT INTO job_chunks_next SELECT job_id, idx, data FROM job_chunks;
DROP TABLE job_chunks;
DROP TABLE jobs;
ALTER TABLE jobs_next RENAME TO jobs;
ALTER TABLE job_chunks_next RENAME TO job_chunks;
CREATE INDEX jobs_claim_idx ON jobs (status, kind, id);
CREATE INDEX jobs_active_idx ON jobs (tenant_id, kind) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_expires_at_idx ON jobs (expires_at) WHERE expires_at IS NOT NULL;
