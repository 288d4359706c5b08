//! The repository conformance suite against SQLite: a fresh temp-file database per test.
#![expect(clippy::expect_used, reason = "test code: a failed expect is a failed test")]

use std::sync::Arc;

use agentgov_store_conformance::{TestStore, store_conformance_tests};
use agentgov_store_sqlite::SqliteStore;

async fn sqlite_store() -> Option<TestStore> {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("agentgov.db")).expect("open sqlite store");
    Some(TestStore { store: Arc::new(store), guard: Box::new(dir) })
}

store_conformance_tests!(sqlite_store);
