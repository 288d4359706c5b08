-- Shadow-agent discovery (see crates/domain/src/model/discovery.rs): ingested events, the
-- candidates clustering groups them into, and clustering jobs. As in the guard tables,
-- timestamps are INTEGER unix microseconds, JSON is text and ids are UUID text.

-- An event's `body` is the JSON text of its `Serialize` form (without `tenant_id`, which is
-- the column). Events are never updated: `disposition` is decided when they are ingested.
CREATE TABLE discovery_events (
    id           TEXT PRIMARY KEY NOT NULL,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    disposition  TEXT NOT NULL CHECK (disposition IN ('shadow', 'attributed', 'suppressed')),
    body         TEXT NOT NULL
);
-- Clustering scans a tenant's shadow events by id (keyset).
CREATE INDEX discovery_events_tenant_disposition_idx ON discovery_events (tenant_id, disposition, id);

-- A candidate's `body` is the JSON text of its `Serialize` form, as for events; `status` is
-- copied out of it so that lists filter and updates are conditioned on it in SQL.
CREATE TABLE discovery_candidates (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    status     TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'dismissed')),
    body       TEXT NOT NULL
);
-- Lists, newest first.
CREATE INDEX discovery_candidates_tenant_id_idx ON discovery_candidates (tenant_id, id);
-- Lists by status, and the decided candidates new events are matched against.
CREATE INDEX discovery_candidates_tenant_status_idx ON discovery_candidates (tenant_id, status, id);

-- `summary` is the JSON text of the job's `ClusterSummary`, NULL until it completes.
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
-- Claims: the oldest queued (or abandoned running) job.
CREATE INDEX discovery_jobs_status_idx ON discovery_jobs (status, id);
-- At most one queued or running job per tenant; also finds it.
CREATE UNIQUE INDEX discovery_jobs_active_key ON discovery_jobs (tenant_id) WHERE status IN ('queued', 'running');
