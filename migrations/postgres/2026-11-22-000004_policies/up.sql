-- Tenant policies: Rego modules evaluated by every policy check (see
-- crates/domain/src/model/policy.rs). `version` starts at 1 and moves on every update,
-- which is allowed only from the version the writer read (optimistic concurrency).
CREATE TABLE policies (
    id           UUID PRIMARY KEY,
    tenant_id    UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    rego         TEXT NOT NULL,
    enabled      BOOLEAN NOT NULL,
    version      BIGINT NOT NULL,
    created_by   UUID REFERENCES users (id) ON DELETE SET NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    CONSTRAINT policies_tenant_name_key UNIQUE (tenant_id, name)
);
-- Lists: newest first, keyset on id.
CREATE INDEX policies_tenant_id_idx ON policies (tenant_id, id DESC);
-- Policy checks: the tenant's enabled policies, oldest first (queried as `WHERE enabled`).
CREATE INDEX policies_enabled_idx ON policies (tenant_id, id) WHERE enabled;
-- Deleting a user sets `created_by` to NULL on their policies; without this index each
-- user deletion would scan the table.
CREATE INDEX policies_created_by_idx ON policies (created_by);
