-- A policy's mode: `enforce` (enabled, not shadow), `shadow` (enabled and shadow: evaluated,
-- its outcomes recorded as `would_…` and never acted on) or `off` (not enabled).
ALTER TABLE policies ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0 CHECK (shadow IN (0, 1));
