-- Shadow-agent discovery (see crates/domain/src/model/discovery.rs): ingested events,
-- the candidates clustering groups them into, and clustering jobs. An event or a candidate
-- is kept as the JSON text of its record (`body`, without `tenant_id`), beside the columns
-- queries filter on; TEXT rather than JSONB: cheaper to insert, and never queried inside.

-- Ingested in large batches (one `INSERT … SELECT FROM unnest(…)` per batch); clustering
-- reads a tenant's shadow events by keyset on id.
CREATE TABLE discovery_events (
    id           UUID PRIMARY KEY,
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    disposition  TEXT NOT NULL CHECK (disposition IN ('shadow', 'attributed', 'suppressed')),
    body         TEXT NOT NULL
);
CREATE INDEX discovery_events_disposition_idx ON discovery_events (tenant_id, disposition, id);

-- Written by clustering (pending) and decided by users (confirmed, dismissed).
CREATE TABLE discovery_candidates (
    id         UUID PRIMARY KEY,
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    status     TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'dismissed')),
    body       TEXT NOT NULL
);
-- Lists: newest first, keyset on id.
CREATE INDEX discovery_candidates_tenant_id_idx ON discovery_candidates (tenant_id, id);
-- Lists filtered by status, and the decided candidates ingestion matches events against.
CREATE INDEX discovery_candidates_status_idx ON discovery_candidates (tenant_id, status, id);

-- `summary` is the JSON text of the job's `ClusterSummary`, NULL until it completes.
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
-- Claims: the oldest queued (or abandoned running) job.
CREATE INDEX discovery_jobs_status_idx ON discovery_jobs (status, id);
-- At most one queued or running job per tenant; also finds it.
CREATE UNIQUE INDEX discovery_jobs_active_key ON discovery_jobs (tenant_id) WHERE status IN ('queued', 'running');
