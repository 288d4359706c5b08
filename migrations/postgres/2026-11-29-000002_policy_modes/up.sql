-- A policy's mode: `enforce` (enabled, not shadow), `shadow` (enabled and shadow: evaluated,
-- its outcomes recorded as `would_…` and never acted on) or `off` (not enabled).
ALTER TABLE policies ADD COLUMN shadow BOOLEAN NOT NULL DEFAULT FALSE;
