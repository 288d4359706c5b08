DROP INDEX hitl_requests_escalation_idx;
ALTER TABLE hitl_requests DROP COLUMN escalate_at;
