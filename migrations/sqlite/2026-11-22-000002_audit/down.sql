DROP TABLE export_chunks;
DROP TABLE export_jobs;
DROP TABLE audit_heads;
DROP TRIGGER IF EXISTS audit_records_no_delete;
DROP TRIGGER IF EXISTS audit_records_no_update;
DROP TABLE audit_records;
