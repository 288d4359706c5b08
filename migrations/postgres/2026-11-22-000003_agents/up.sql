-- The agent registry (see crates/domain/src/model/agent.rs): each agent with its embedding,
-- and each tenant's index version, bumped in the same transaction as every insert or delete
-- of an agent and every replacement of a vector, so the in-process search index knows when
-- to reload.
-- `permissions` and `metadata` are JSON object text, not JSONB: kept verbatim, so they
-- round-trip exactly (JSONB would reorder keys and normalise numbers).
CREATE TABLE agents (
    id              UUID PRIMARY KEY,
    tenant_id       UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    agent_type      TEXT NOT NULL,
    description     TEXT,
    capabilities    TEXT[] NOT NULL,
    permissions     TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'inactive', 'suspended')),
    predicted_type  TEXT NOT NULL,
    risk            TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high', 'critical')),
    risk_score      DOUBLE PRECISION NOT NULL,
    metadata        TEXT NOT NULL,
    last_seen_at    TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    CONSTRAINT agents_tenant_name_key UNIQUE (tenant_id, name)
);
CREATE INDEX agents_tenant_id_idx ON agents (tenant_id, id DESC);
-- For the capability filter (`capabilities @> ARRAY[...]`). Heartbeats do not change the
-- column, so the index does not keep their updates from being HOT.
CREATE INDEX agents_capabilities_idx ON agents USING GIN (capabilities);

-- One row per agent; `vector` is little-endian f32, 4 bytes per dimension. No foreign key
-- on tenant_id: the row goes with its agent, which goes with its tenant.
CREATE TABLE agent_embeddings (
    agent_id       UUID PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    tenant_id      UUID NOT NULL,
    model          TEXT NOT NULL,
    model_version  INTEGER NOT NULL,
    text           TEXT NOT NULL,
    vector         BYTEA NOT NULL,
    refreshed_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX agent_embeddings_tenant_id_idx ON agent_embeddings (tenant_id);

-- Absent (version 0) until the tenant's first agent.
CREATE TABLE agent_index_versions (
    tenant_id  UUID PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    version    BIGINT NOT NULL
);
