-- Counts per tenant and hour (unix time / 3600) of a `metric` (what is counted, e.g.
-- `policy.decision`) by `label` (its value, e.g. `deny`); each replica adds what it counted
-- since its last flush with an upsert. They feed the statistics the console draws.
CREATE TABLE hourly_counts (
    tenant_id UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    metric    TEXT NOT NULL,
    hour      BIGINT NOT NULL,
    label     TEXT NOT NULL,
    count     BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, metric, hour, label)
);
