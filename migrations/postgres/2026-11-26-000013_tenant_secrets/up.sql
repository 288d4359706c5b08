-- A tenant's own signing secrets (issue 32, point 4): `callback` signs the HITL callbacks
-- sent to its receivers (made with the tenant; rotated by its admins); `webhook`, when the
-- tenant has one, is the key its senders sign `POST /webhooks/agent` with instead of the
-- server's WEBHOOK_SECRET. The value is kept (an HMAC cannot be checked against a hash of its
-- key); `previous` still signs or is still accepted until `previous_until`.
CREATE TABLE tenant_secrets (
    tenant_id          UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    purpose            TEXT NOT NULL,
    secret             TEXT NOT NULL,
    previous           TEXT,
    previous_until     TIMESTAMPTZ,
    require_timestamp  BOOLEAN NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, purpose)
);
