//! The repository conformance suite against SQLite: a fresh temp-file database per test,
//! with the session index written in each append, and again written in bulk every two
//! records (so that flushes run throughout).
#![expect(clippy::expect_used, reason = "test code: a failed expect is a failed test")]

use std::sync::Arc;

use agentgov_store_conformance::{TestStore, store_conformance_tests};
use agentgov_store_sqlite::{Indexing, SqliteStore};

fn store(indexing: Indexing) -> Option<TestStore> {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let store = SqliteStore::open_with(&dir.path().join("agentgov.db"), indexing).expect("open sqlite store");
    Some(TestStore { store: Arc::new(store), guard: Box::new(dir) })
}

async fn sqlite_store() -> Option<TestStore> {
    store(Indexing::Immediate)
}

store_conformance_tests!(sqlite_store);

mod deferred {
    use super::*;

    async fn sqlite_store() -> Option<TestStore> {
        store(Indexing::Deferred { flush_at: 2 })
    }

    store_conformance_tests!(sqlite_store);
}
