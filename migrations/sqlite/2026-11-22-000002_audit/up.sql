-- The audit log (append-only, hash-chained per tenant), each tenant's chain head, and the
-- asynchronous export jobs with the files they produce. Timestamps here are INTEGER unix
-- microseconds, so SQL comparisons are exact; hashes are 32-byte BLOBs; `details` is the
-- exact JSON text that was hashed.
CREATE TABLE audit_records (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    seq         INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    actor_type  TEXT NOT NULL CHECK (actor_type IN ('agent', 'user', 'api_key', 'system')),
    actor_id    TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    agent_id    TEXT,
    action      TEXT,
    resource    TEXT,
    decision    TEXT,
    risk_score  REAL,
    details     TEXT NOT NULL,
    prev_hash   BLOB NOT NULL,
    hash        BLOB NOT NULL,
    UNIQUE (tenant_id, seq)
);
CREATE INDEX audit_records_agent_idx ON audit_records (tenant_id, agent_id, seq);
CREATE INDEX audit_records_event_type_idx ON audit_records (tenant_id, event_type, seq);
CREATE INDEX audit_records_ts_idx ON audit_records (tenant_id, ts);

CREATE TRIGGER audit_records_no_update BEFORE UPDATE ON audit_records
BEGIN
    SELECT RAISE(ABORT, 'audit_records is append-only');
END;

CREATE TRIGGER audit_records_no_delete BEFORE DELETE ON audit_records
BEGIN
    SELECT RAISE(ABORT, 'audit_records is append-only');
END;

CREATE TABLE audit_heads (
    tenant_id  TEXT PRIMARY KEY NOT NULL REFERENCES tenants (id),
    seq        INTEGER NOT NULL,
    hash       BLOB NOT NULL,
    ts         INTEGER NOT NULL
);

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
