-- Named leases for background work that runs on one replica at a time, and SIEM forwarding
-- state (see crates/domain/src/model/siem.rs). As elsewhere, timestamps are INTEGER unix
-- microseconds and ids UUID text.

-- A lease is taken with one upsert whose `DO UPDATE` applies only when the row is the
-- holder's own or has expired, so of racing holders one wins.
CREATE TABLE leases (
    name         TEXT PRIMARY KEY NOT NULL,
    holder       TEXT NOT NULL,
    lease_until  INTEGER NOT NULL
);

-- A sink (by its configured name) and its delivery totals, shared by every replica.
CREATE TABLE siem_sinks (
    name             TEXT PRIMARY KEY NOT NULL,
    created_at       INTEGER NOT NULL,
    forwarded        INTEGER NOT NULL DEFAULT 0,
    failed           INTEGER NOT NULL DEFAULT 0,
    last_success_at  INTEGER,
    last_error       TEXT,
    last_error_at    INTEGER
);

-- How far a sink has forwarded a tenant's audit log: the last `seq` delivered (or passed
-- over by its filter). No row: nothing yet (0). The backlog joins `audit_heads` to this by
-- its primary key.
CREATE TABLE siem_cursors (
    sink       TEXT NOT NULL,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    last_seq   INTEGER NOT NULL,
    PRIMARY KEY (sink, tenant_id)
);
