//! The tables of `migrations/sqlite`: the schema both stores share
//! (`agentgov_store_common::tables!`), with the kinds of column `columns` defines. Records
//! kept whole (approval requests, anomaly reports, discovery events and candidates) are JSON
//! text beside the columns queried; hashes are 32-byte blobs and vectors little-endian `f32`
//! blobs.

agentgov_store_common::tables!();

// SQLite's own: the session index the store writes in bulk (`session_index`).
diesel::table! {
    audit_session_seqs (tenant_id, session_id, seq) {
        tenant_id -> Text,
        session_id -> Text,
        seq -> BigInt,
    }
}

diesel::table! {
    audit_session_indexed (tenant_id) {
        tenant_id -> Text,
        seq -> BigInt,
    }
}
