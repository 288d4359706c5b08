-- Whether a request's callback may still be sent (`waiting` while pending, or `scheduled`):
-- what a tenant's quota of open callbacks counts (issue 32, point 9). Every write sets it
-- from the record it writes, as it does `callback_due_at`.
ALTER TABLE hitl_requests ADD COLUMN callback_open BOOLEAN NOT NULL DEFAULT false;
UPDATE hitl_requests SET callback_open = true
    WHERE (body::jsonb -> 'callback' ->> 'status') IN ('waiting', 'scheduled');
-- The quota's count: a tenant's open callbacks.
CREATE INDEX hitl_requests_open_callbacks_idx ON hitl_requests (tenant_id) WHERE callback_open;
