//! The tables of `migrations/sqlite`: the schema both stores share
//! (`agentgov_store_common::tables!`), with the kinds of column `columns` defines. Records
//! kept whole (approval requests, anomaly reports, discovery events and candidates) are JSON
//! text beside the columns queried; hashes are 32-byte blobs and vectors little-endian `f32`
//! blobs.

agentgov_store_common::tables!();
