-- Human-in-the-loop approval requests (see crates/domain/src/model/hitl.rs). As in the
-- discovery tables, a request is kept as the JSON text of its record (`body`, without
-- `tenant_id`) beside the columns queries filter on; TEXT rather than JSONB, never queried
-- inside.
CREATE TABLE hitl_requests (
    id               UUID PRIMARY KEY,
    tenant_id        UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    agent_id         UUID NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
    expires_at       TIMESTAMPTZ NOT NULL,
    -- When the outcome's callback is next due; NULL when none is.
    callback_due_at  TIMESTAMPTZ,
    body             TEXT NOT NULL
);
-- The pending queue (oldest first) and lists by status.
CREATE INDEX hitl_requests_tenant_status_idx ON hitl_requests (tenant_id, status, id);
-- Lists of every status, and by agent.
CREATE INDEX hitl_requests_tenant_id_idx ON hitl_requests (tenant_id, id);
-- The expiry job: pending requests by expiry (then id, the order it reads them in).
CREATE INDEX hitl_requests_expiry_idx ON hitl_requests (expires_at, id) WHERE status = 'pending';
-- The callback sender: due callbacks, soonest (then id) first.
CREATE INDEX hitl_requests_callback_idx ON hitl_requests (callback_due_at, id) WHERE callback_due_at IS NOT NULL;
