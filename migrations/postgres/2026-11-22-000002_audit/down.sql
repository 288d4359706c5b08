DROP TABLE export_chunks;
DROP TABLE export_jobs;
DROP TABLE audit_heads;
DROP TABLE audit_records;
DROP FUNCTION audit_records_append_only();
