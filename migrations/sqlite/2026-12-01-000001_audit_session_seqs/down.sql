CREATE INDEX audit_records_session_idx ON audit_records (tenant_id, session_id, seq) WHERE session_id IS NOT NULL;
DROP TABLE audit_session_indexed;
DROP TABLE audit_session_seqs;
