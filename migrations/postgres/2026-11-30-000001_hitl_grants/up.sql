-- Whether a request is approved with an approval token not yet spent
-- (`HitlRequest::grant_open`): spending it is one conditional write on this column (a
-- token is single-use, over every replica). Requests approved before tokens have none.
ALTER TABLE hitl_requests ADD COLUMN grant_open BOOLEAN NOT NULL DEFAULT false;
