-- When a pending request's next escalation step is due (`HitlRequest::escalate_at`): a
-- copy of its body's `escalation.next_at`, NULL when the tenant has no chain, the chain
-- is done or the request is decided. The lease holder's scan walks the partial index.
ALTER TABLE hitl_requests ADD COLUMN escalate_at TIMESTAMPTZ;
CREATE INDEX hitl_requests_escalation_idx ON hitl_requests (escalate_at, id) WHERE escalate_at IS NOT NULL;
