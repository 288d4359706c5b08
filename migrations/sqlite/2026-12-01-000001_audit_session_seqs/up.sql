-- A session's records found by a table of their `seq`s instead of a partial index of
-- `audit_records`, so that the store can write it in bulk, off the commit path
-- (crates/store-sqlite/src/session_index.rs). An index entry per record scatters over the
-- sessions: with thousands of sessions at once, each commit of the audit writer wrote one
-- index page per record to the WAL, more than the records themselves (BENCHMARKS.md,
-- "Sessions on and off").
CREATE TABLE audit_session_seqs (
    tenant_id   TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
) WITHOUT ROWID;

-- Both tables are derived from `audit_records` (whose tenants they name), so they carry no
-- foreign keys: a flush checks no tenant row per entry.

-- Per tenant: every record of the tenant up to `seq` that names a session is in
-- `audit_session_seqs`. The store reads the records after it back when it opens.
CREATE TABLE audit_session_indexed (
    tenant_id  TEXT PRIMARY KEY NOT NULL,
    seq        INTEGER NOT NULL
);

INSERT INTO audit_session_seqs (tenant_id, session_id, seq)
    SELECT tenant_id, session_id, seq FROM audit_records WHERE session_id IS NOT NULL;
INSERT INTO audit_session_indexed (tenant_id, seq) SELECT tenant_id, seq FROM audit_heads;
DROP INDEX audit_records_session_idx;
