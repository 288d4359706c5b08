-- Replays (`POST /policies/{id}/replay`) are jobs of the one queue, of kind `replay`.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
    CHECK (kind IN ('export', 'guard_training', 'anomaly_training', 'clustering', 'replay'));
