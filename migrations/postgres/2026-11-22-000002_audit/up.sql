-- The audit log: one hash chain per tenant (see crates/domain/src/model/audit.rs).
-- `details` is TEXT, not JSONB: the exact JSON text that was hashed is kept byte for byte.
-- No foreign key on tenant_id: every append locks the tenant's `audit_heads` row (which
-- references tenants) in the same transaction, so the tenant is known to exist, and a
-- per-row referential check would cost a lookup for each of thousands of rows a second.
CREATE TABLE audit_records (
    id          UUID PRIMARY KEY,
    tenant_id   UUID NOT NULL,
    seq         BIGINT NOT NULL,
    ts          TIMESTAMPTZ NOT NULL,
    actor_type  TEXT NOT NULL CHECK (actor_type IN ('agent', 'user', 'api_key', 'system')),
    actor_id    TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    agent_id    UUID,
    action      TEXT,
    resource    TEXT,
    decision    TEXT,
    risk_score  DOUBLE PRECISION,
    details     TEXT NOT NULL,
    prev_hash   BYTEA NOT NULL,
    hash        BYTEA NOT NULL,
    UNIQUE (tenant_id, seq)
);
CREATE INDEX audit_records_agent_idx ON audit_records (tenant_id, agent_id, seq);
CREATE INDEX audit_records_event_type_idx ON audit_records (tenant_id, event_type, seq);
CREATE INDEX audit_records_ts_idx ON audit_records (tenant_id, ts);

-- Append-only: rows are never updated or deleted, and the table is never truncated.
-- (Dropping the table, as down.sql does, is not affected.)
CREATE FUNCTION audit_records_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_records is append-only: % refused', TG_OP;
END;
$$;

CREATE TRIGGER audit_records_append_only
    BEFORE UPDATE OR DELETE ON audit_records
    FOR EACH ROW EXECUTE FUNCTION audit_records_append_only();

CREATE TRIGGER audit_records_no_truncate
    BEFORE TRUNCATE ON audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION audit_records_append_only();

-- Each tenant's chain head, locked (FOR UPDATE) by every append.
CREATE TABLE audit_heads (
    tenant_id  UUID PRIMARY KEY REFERENCES tenants (id),
    seq        BIGINT NOT NULL,
    hash       BYTEA NOT NULL,
    ts         TIMESTAMPTZ NOT NULL
);

-- Asynchronous exports of the audit log, and their files in chunks.
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
