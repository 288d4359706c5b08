-- Named leases for background work that runs on one replica at a time, and SIEM forwarding
-- state (see crates/domain/src/model/siem.rs).

-- A lease is taken with one `INSERT … ON CONFLICT DO UPDATE … WHERE` that applies only when
-- the row is the holder's own or has expired; Postgres re-checks that condition on the row a
-- concurrent taker left, so of racing holders one wins.
CREATE TABLE leases (
    name         TEXT PRIMARY KEY,
    holder       UUID NOT NULL,
    lease_until  TIMESTAMPTZ NOT NULL
);

-- A sink (by its configured name) and its delivery totals, shared by every replica.
CREATE TABLE siem_sinks (
    name             TEXT PRIMARY KEY,
    created_at       TIMESTAMPTZ NOT NULL,
    forwarded        BIGINT NOT NULL DEFAULT 0,
    failed           BIGINT NOT NULL DEFAULT 0,
    last_success_at  TIMESTAMPTZ,
    last_error       TEXT,
    last_error_at    TIMESTAMPTZ
);

-- How far a sink has forwarded a tenant's audit log: the last `seq` delivered (or passed
-- over by its filter). No row: nothing yet (0). The backlog joins `audit_heads` to this by
-- its primary key.
CREATE TABLE siem_cursors (
    sink       TEXT NOT NULL,
    tenant_id  UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    last_seq   BIGINT NOT NULL,
    PRIMARY KEY (sink, tenant_id)
);
