-- Anomaly reports (see crates/domain/src/model/anomaly.rs). As in the HITL table, a report
-- is kept as the JSON text of its record (`body`, without `tenant_id`) beside the columns
-- lists filter on and statistics group by.
CREATE TABLE anomaly_reports (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    agent_id      UUID NOT NULL,
    anomaly_type  TEXT NOT NULL CHECK (anomaly_type IN ('unusual_action', 'unusual_resource', 'rate_spike',
                                                       'off_hours', 'denied_burst', 'guard_attack', 'manual')),
    severity      TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    status        TEXT NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved', 'false_positive')),
    created_at    TIMESTAMPTZ NOT NULL,
    body          TEXT NOT NULL
);
-- Lists, newest first, and keyset pages.
CREATE INDEX anomaly_reports_tenant_id_idx ON anomaly_reports (tenant_id, id);
-- Statistics over a time window, and lists filtered by time.
CREATE INDEX anomaly_reports_tenant_created_idx ON anomaly_reports (tenant_id, created_at);
-- Lists by agent.
CREATE INDEX anomaly_reports_tenant_agent_idx ON anomaly_reports (tenant_id, agent_id, id);
