-- A tenant's own settings (approval threshold, risk levels: see
-- crates/domain/src/model/tenant.rs) as a JSON object; `{}` follows the server's defaults.
-- `updated_at` moves on every change of name or settings.
ALTER TABLE tenants ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tenants ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
UPDATE tenants SET updated_at = created_at;
