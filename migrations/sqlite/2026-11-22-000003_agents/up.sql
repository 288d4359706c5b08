-- The agent registry: each agent with its embedding, and each tenant's index version (a
-- number bumped in the same transaction as every insert or delete of an agent and every
-- replacement of a vector, so the in-process search index knows when to reload).
-- Timestamps are INTEGER unix microseconds, as in the audit tables, so the staleness
-- filter compares them exactly in SQL; JSON is text; vectors are little-endian f32 BLOBs.
CREATE TABLE agents (
    id              TEXT PRIMARY KEY NOT NULL,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    agent_type      TEXT NOT NULL,
    description     TEXT,
    capabilities    TEXT NOT NULL,
    permissions     TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'suspended')),
    predicted_type  TEXT NOT NULL,
    risk            TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high', 'critical')),
    risk_score      REAL NOT NULL,
    metadata        TEXT NOT NULL,
    last_seen_at    INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (tenant_id, name)
);
CREATE INDEX agents_tenant_id_idx ON agents (tenant_id, id DESC);

CREATE TABLE agent_embeddings (
    agent_id       TEXT PRIMARY KEY NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    tenant_id      TEXT NOT NULL,
    model          TEXT NOT NULL,
    model_version  INTEGER NOT NULL,
    text           TEXT NOT NULL,
    vector         BLOB NOT NULL,
    refreshed_at   INTEGER NOT NULL
);
CREATE INDEX agent_embeddings_tenant_id_idx ON agent_embeddings (tenant_id);

CREATE TABLE agent_index_versions (
    tenant_id  TEXT PRIMARY KEY NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL
);
