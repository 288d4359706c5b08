DROP INDEX audit_records_session_idx;
ALTER TABLE audit_records DROP COLUMN session_id;
