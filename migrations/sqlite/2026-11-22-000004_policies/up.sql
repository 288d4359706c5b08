-- Tenant policies: Rego modules evaluated by every policy check (see
-- crates/domain/src/model/policy.rs). Timestamps are INTEGER unix microseconds, as in the
-- agent tables; `enabled` is 0 or 1. `version` starts at 1 and moves on every update, which
-- is allowed only from the version the writer read (optimistic concurrency).
CREATE TABLE policies (
    id           TEXT PRIMARY KEY NOT NULL,
    tenant_id    TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    rego         TEXT NOT NULL,
    enabled      INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    version      INTEGER NOT NULL,
    created_by   TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (tenant_id, name)
);
-- Lists: newest first, keyset on id.
CREATE INDEX policies_tenant_id_idx ON policies (tenant_id, id DESC);
-- Policy checks: the tenant's enabled policies, oldest first (queried as `WHERE enabled`).
CREATE INDEX policies_enabled_idx ON policies (tenant_id, id) WHERE enabled;
-- Deleting a user sets `created_by` to NULL on their policies.
CREATE INDEX policies_created_by_idx ON policies (created_by);
