ALTER TABLE hitl_requests DROP COLUMN grant_open;
