-- The agent session (a conversation or run id) a record belongs to: a policy check's
-- `session_id`, an observation's session. Hashed with the record when present. A session's
-- state is read back from its records, newest last, through the partial index.
ALTER TABLE audit_records ADD COLUMN session_id TEXT;
CREATE INDEX audit_records_session_idx ON audit_records (tenant_id, session_id, seq) WHERE session_id IS NOT NULL;
