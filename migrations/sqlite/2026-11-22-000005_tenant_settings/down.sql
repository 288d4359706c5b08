ALTER TABLE tenants DROP COLUMN updated_at;
ALTER TABLE tenants DROP COLUMN settings;
