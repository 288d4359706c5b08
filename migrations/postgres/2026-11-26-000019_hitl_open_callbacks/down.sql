DROP INDEX hitl_requests_open_callbacks_idx;
ALTER TABLE hitl_requests DROP COLUMN callback_open;
